package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a persistent DEVICE subscriber acknowledged is not sent to it again, however soon it comes
 * back: the removes of acknowledged QoS 1 entries may wait for the client's next append, but the end
 * of the connection sends them, ahead of the next connection's read of the queue.
 */
class DeviceQueueAcksTest {

    /** Session Expiry Interval 300 s, as CONNECT properties with their length. */
    private static final String EXPIRY_300 = "05 11 00 00 01 2C";

    /** DISCONNECT, normal disconnection. */
    private static final byte[] GOODBYE = RawMqtt.packet(0xE0, new byte[0]);

    @TempDir
    static Path dataDir;

    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static RawMqtt connect(String id, boolean cleanStart) throws Exception {
        RawMqtt raw = broker.raw();
        raw.send(RawMqtt.connect(5, cleanStart, 60, id, EXPIRY_300));
        RawMqtt.ConnAck connack = RawMqtt.parseConnAckV5(raw.readType(2));
        assertEquals(0, connack.reasonCode());
        assertEquals(!cleanStart, connack.sessionPresent());
        return raw;
    }

    @Test
    void acknowledgedEntriesAreNotSentAgainToAConnectionThatFollowsAtOnce() throws Exception {
        String id = "dev-acked-then-back";
        String topic = "acked/" + id;
        try (RawMqtt sub = connect(id, true)) {
            sub.send(RawMqtt.subscribeV5(1, topic, 1));
            sub.readType(9);
            sub.send(GOODBYE);
        }
        Mqtt5BlockingClient pub = broker.connectedV5(id + "-pub");
        for (int i = 0; i < 3; i++) {
            pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE)
                    .payload(("m" + i).getBytes(StandardCharsets.UTF_8)).send();
        }
        pub.disconnect();

        try (RawMqtt back = connect(id, false)) {
            back.socketTimeout(10_000);
            List<String> got = new ArrayList<>();
            ByteArrayOutputStream acksAndGoodbye = new ByteArrayOutputStream();
            for (int i = 0; i < 3; i++) {
                RawMqtt.Publish p = RawMqtt.parsePublishV5(back.readType(3));
                got.add(new String(p.payload(), StandardCharsets.UTF_8));
                acksAndGoodbye.writeBytes(RawMqtt.ack(0x40, p.packetId()));
            }
            assertEquals(List.of("m0", "m1", "m2"), got, "the queue, in order");
            // Every PUBACK and the DISCONNECT in one write, the connection closed at once.
            acksAndGoodbye.writeBytes(GOODBYE);
            back.send(acksAndGoodbye.toByteArray());
        }
        // Nothing acknowledged comes again, on a connection right after the one that acknowledged,
        // nor on the one after that.
        for (int round = 1; round <= 2; round++) {
            try (RawMqtt back = connect(id, false)) {
                assertArrayEquals(RawMqtt.NOTHING, back.readWithin(1_000),
                        "round " + round + ": nothing waits in the queue");
                back.send(GOODBYE);
            }
        }
        Await.until(Duration.ofSeconds(10), "no DEVICE queue write left waiting",
                () -> broker.metric("fleetmq_redis_pending_writes", null) == 0);
    }
}
