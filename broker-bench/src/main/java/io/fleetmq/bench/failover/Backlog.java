package io.fleetmq.bench.failover;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How fast an offline backlog drains: {@code backlog} gives a persistent subscriber a session, takes
 * it offline, publishes {@code --messages} QoS 1 messages to it, and measures how long the
 * subscriber, on reconnecting, takes to receive them all. With {@code --redis host:port} it also
 * reports Redis memory per queued message (for DEVICE clients, whose backlog is in Redis).
 *
 * <pre>
 * java -jar fleetmq-bench.jar backlog --port 1883 --messages 100000 --client-id dev-1 --redis 127.0.0.1:16379
 * </pre>
 * Whether the client is a DEVICE or an APPLICATION is the broker's decision
 * ({@code APPLICATION_CLIENT_ID_PATTERN}).
 */
public final class Backlog {

    private Backlog() {
    }

    public static int run(String[] args, PrintStream out, PrintStream err) throws InterruptedException {
        String host = "127.0.0.1";
        int port = 1883;
        int publishPort = 0;
        int messages = 100_000;
        int payload = 64;
        String clientId = "backlog-" + Long.toString(System.currentTimeMillis() % 1_000_000, 36);
        String redis = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--host" -> host = args[i + 1];
                case "--port" -> port = Integer.parseInt(args[i + 1]);
                case "--publish-port" -> publishPort = Integer.parseInt(args[i + 1]);
                case "--messages" -> messages = Integer.parseInt(args[i + 1]);
                case "--payload" -> payload = Integer.parseInt(args[i + 1]);
                case "--client-id" -> clientId = args[i + 1];
                case "--redis" -> redis = args[i + 1];
                default -> {
                    err.println("backlog: unknown option " + args[i]);
                    return 2;
                }
            }
        }
        String topic = "backlog/" + clientId;
        Mqtt5AsyncClient sub = Mqtt5Client.builder().identifier(clientId).serverHost(host).serverPort(port).buildAsync();
        sub.connectWith().cleanStart(true).sessionExpiryInterval(3600).send().join();
        sub.subscribeWith().topicFilter(topic).qos(MqttQos.AT_LEAST_ONCE).send().join();
        sub.disconnect().join();
        // Let the subscription reach every node's trie before the burst.
        Thread.sleep(2_000);

        long memoryBefore = redis == null ? -1 : usedMemory(redis);
        Mqtt5AsyncClient pub = Mqtt5Client.builder().identifier(clientId + "-pub").serverHost(host)
                .serverPort(publishPort == 0 ? port : publishPort).buildAsync();
        pub.connect().join();
        byte[] body = new byte[payload];
        long t0 = System.nanoTime();
        List<CompletableFuture<?>> acks = new ArrayList<>(messages);
        for (int m = 0; m < messages; m++) {
            acks.add(pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(body).send());
        }
        CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).join();
        double publishSeconds = (System.nanoTime() - t0) / 1e9;
        pub.disconnect().join();
        if (redis != null) {
            // The queue writer runs behind the PUBACKs: wait until the memory stops growing.
            long last = -1;
            long now = usedMemory(redis);
            while (now != last) {
                Thread.sleep(1_000);
                last = now;
                now = usedMemory(redis);
            }
        }
        long memoryAfter = redis == null ? -1 : usedMemory(redis);

        AtomicLong received = new AtomicLong();
        CountDownLatch all = new CountDownLatch(1);
        int expected = messages;
        Mqtt5AsyncClient back = Mqtt5Client.builder().identifier(clientId).serverHost(host).serverPort(port).buildAsync();
        back.publishes(MqttGlobalPublishFilter.ALL, p -> {
            if (received.incrementAndGet() == expected) {
                all.countDown();
            }
        });
        long t1 = System.nanoTime();
        back.connectWith().cleanStart(false).sessionExpiryInterval(3600).send().join();
        boolean done = all.await(10, TimeUnit.MINUTES);
        double drainSeconds = (System.nanoTime() - t1) / 1e9;
        back.disconnectWith().sessionExpiryInterval(0).send().join();

        out.printf(Locale.ROOT, "published %d QoS 1 messages of %d bytes in %.1f s (%.0f msg/s)%n", messages, payload,
                publishSeconds, messages / publishSeconds);
        out.printf(Locale.ROOT, "drained %d of %d on reconnect in %.1f s: %.0f msg/s%n", received.get(), messages,
                drainSeconds, received.get() / drainSeconds);
        if (redis != null) {
            out.printf(Locale.ROOT, "Redis used_memory grew by %d bytes: %.0f bytes per queued message%n",
                    memoryAfter - memoryBefore, (memoryAfter - memoryBefore) / (double) messages);
        }
        out.printf(Locale.ROOT, "{\"messages\":%d,\"publishPerS\":%.0f,\"drained\":%d,\"drainPerS\":%.0f,\"redisBytesPerMessage\":%.0f}%n",
                messages, messages / publishSeconds, received.get(), received.get() / drainSeconds,
                redis == null ? -1.0 : (memoryAfter - memoryBefore) / (double) messages);
        return done ? 0 : 1;
    }

    /** {@code used_memory} from Redis INFO, over a plain socket. */
    private static long usedMemory(String hostPort) {
        String[] hp = hostPort.split(":");
        try (Socket s = new Socket(hp[0], Integer.parseInt(hp[1]))) {
            OutputStream o = s.getOutputStream();
            o.write("*2\r\n$4\r\nINFO\r\n$6\r\nmemory\r\n".getBytes(StandardCharsets.US_ASCII));
            o.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith("used_memory:")) {
                    return Long.parseLong(line.substring("used_memory:".length()).trim());
                }
            }
        } catch (java.io.IOException e) {
            throw new IllegalStateException("cannot read Redis INFO at " + hostPort + ": " + e.getMessage(), e);
        }
        throw new IllegalStateException("no used_memory in Redis INFO");
    }
}
