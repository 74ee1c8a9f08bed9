package io.fleetmq.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import io.fleetmq.app.support.BrokerProcess;
import io.fleetmq.app.support.Http;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.FreePorts;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The documented {@code ./local-cluster start} and {@code stop} commands, run as a user runs them. */
class LocalClusterScriptIT {

    @TempDir
    Path dir;

    @Test
    void startsThreeNodesThatActAsOneBrokerAndStopsThemAll() throws Exception {
        int mqtt = FreePorts.range(3);
        int http = FreePorts.range(3);
        Map<String, String> env = Map.of(
                "LOCAL_CLUSTER_DIR", dir.toString(),
                "LOCAL_CLUSTER_MQTT_BASE", String.valueOf(mqtt),
                "LOCAL_CLUSTER_WS_BASE", String.valueOf(FreePorts.range(3)),
                "LOCAL_CLUSTER_HTTP_BASE", String.valueOf(http),
                "LOCAL_CLUSTER_SERVICE_BASE", String.valueOf(FreePorts.range(4)),
                "FLEETMQ_JAR", BrokerProcess.jar().toString(),
                "JAVA_OPTS", "-Xmx512m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
        try {
            String out = run(env, "start", "3");
            assertTrue(out.contains("local cluster of 3 nodes ready"), out);
            for (int i = 0; i < 3; i++) {
                assertTrue(Http.isReady(http + i), "node-" + (i + 1) + " is ready");
            }
            Mqtt5BlockingClient sub = Mqtt5Client.builder().identifier("script-sub").serverHost("127.0.0.1")
                    .serverPort(mqtt + 2).buildBlocking();
            sub.connect();
            List<String> got = new CopyOnWriteArrayList<>();
            sub.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                    p -> got.add(new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8)));
            sub.subscribeWith().topicFilter("script/#").qos(MqttQos.AT_LEAST_ONCE).send();
            Mqtt5BlockingClient pub = Mqtt5Client.builder().identifier("script-pub").serverHost("127.0.0.1")
                    .serverPort(mqtt).buildBlocking();
            pub.connect();
            Await.until(Duration.ofSeconds(60), "a message from node-1 at node-3", () -> {
                pub.publishWith().topic("script/x").qos(MqttQos.AT_LEAST_ONCE)
                        .payload("across".getBytes(StandardCharsets.UTF_8)).send();
                return got.contains("across");
            });
            pub.disconnect();
            sub.disconnect();
        } finally {
            String out = run(env, "stop");
            assertTrue(out.contains("stopped services"), out);
        }
        assertTrue(run(env, "status").contains("no local cluster"), "nothing left running");
        for (String pidFile : List.of("services.pid", "node-1.pid", "node-2.pid", "node-3.pid")) {
            assertTrue(!Files.exists(dir.resolve(pidFile)), pidFile + " removed");
        }
    }

    private static String run(Map<String, String> env, String... args) throws Exception {
        Path script = Path.of(System.getProperty("user.dir")).getParent().resolve("local-cluster");
        ProcessBuilder builder = new ProcessBuilder(script.toString());
        builder.command().addAll(List.of(args));
        builder.environment().putAll(env);
        builder.redirectErrorStream(true);
        Process p = builder.start();
        byte[] output = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(5, TimeUnit.MINUTES), "script ended");
        String text = new String(output, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), text);
        return text;
    }
}
