package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5PublishResult;
import com.hivemq.client.mqtt.mqtt5.message.publish.puback.Mqtt5PubAckReasonCode;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A PUBLISH whose subscribers are all connected to the node that wrote it is routed once Kafka
 * confirms the write, without waiting for the routing consumer to read it back; the consumer routes
 * the rest and skips what was routed already. Mixed in one publisher's stream, both kinds reach a
 * subscriber once each and in the order they were published.
 */
class RouteOnStoreTest {

    private static final int MESSAGES = 2_000;

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

    private static double routed(String when) {
        return broker.metric("fleetmq_publish_routed_total", "when=\"" + when + "\"");
    }

    private static void publishAll(Mqtt5AsyncClient publisher, List<String> topics, List<Boolean> retain)
            throws Exception {
        List<CompletableFuture<Mqtt5PublishResult>> acks = new ArrayList<>();
        for (int i = 0; i < topics.size(); i++) {
            acks.add(publisher.publishWith().topic(topics.get(i)).qos(MqttQos.AT_LEAST_ONCE).retain(retain.get(i))
                    .payload(ByteBuffer.allocate(4).putInt(0, i)).send());
        }
        for (CompletableFuture<Mqtt5PublishResult> ack : acks) {
            Mqtt5PublishResult.Mqtt5Qos1Result r = (Mqtt5PublishResult.Mqtt5Qos1Result) ack.get(2, TimeUnit.MINUTES);
            assertEquals(Mqtt5PubAckReasonCode.SUCCESS, r.getPubAck().getReasonCode());
        }
    }

    /**
     * Publishes {@code count} messages one at a time, each only once the previous one arrived at one
     * of {@code in}. Once the routing consumer has read one record of the publisher's partition,
     * each next write is the partition's next record, so it is routed when stored (unless it meets
     * the consumer skipping the previous one, a matter of microseconds).
     *
     * @return how many of them were routed when stored
     */
    private static double oneByOne(Mqtt5AsyncClient publisher, String topic, int count,
            Mqtt5BlockingClient.Mqtt5Publishes... in) throws Exception {
        double before = routed("stored");
        for (int i = 0; i < count; i++) {
            int payload = -1 - i;
            publisher.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE)
                    .payload(ByteBuffer.allocate(4).putInt(0, payload)).send().get(1, TimeUnit.MINUTES);
            java.util.Optional<Mqtt5Publish> got = java.util.Optional.empty();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (got.isEmpty() && System.nanoTime() < deadline) {
                for (Mqtt5BlockingClient.Mqtt5Publishes q : in) {
                    got = got.isPresent() ? got : q.receive(5, TimeUnit.MILLISECONDS);
                }
            }
            assertEquals(payload, ByteBuffer.wrap(got.orElseThrow().getPayloadAsBytes()).getInt());
        }
        return routed("stored") - before;
    }

    @Test
    void messagesForSubscribersOfThisNodeAreRoutedWhenStoredAndArriveOnceInOrder() throws Exception {
        Mqtt5BlockingClient subscriber = broker.connectedV5("ros-sub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = subscriber.publishes(MqttGlobalPublishFilter.ALL)) {
            subscriber.subscribeWith().topicFilter("ros/plain/#").qos(MqttQos.AT_LEAST_ONCE).send();
            Mqtt5AsyncClient publisher = broker.connectedV5("ros-pub").toAsync();
            double routedWhenStored = oneByOne(publisher, "ros/plain/t", 20, in);
            assertTrue(routedWhenStored > 0, "routed when Kafka confirmed them: " + routedWhenStored);

            publishAll(publisher, java.util.Collections.nCopies(MESSAGES, "ros/plain/t"),
                    java.util.Collections.nCopies(MESSAGES, false));
            for (int i = 0; i < MESSAGES; i++) {
                Mqtt5Publish m = Received.next(in);
                assertEquals(i, ByteBuffer.wrap(m.getPayloadAsBytes()).getInt(), "in order, none lost");
            }
            assertTrue(Received.nothingWithin(in, 500), "no message twice");
            publisher.disconnect().get(10, TimeUnit.SECONDS);
        } finally {
            subscriber.disconnect();
        }
    }

    /**
     * A message nobody subscribed to is routed to nobody, and counted so: once, whichever of the two
     * ways routed it (plain messages when stored, a retained one when read back).
     */
    @Test
    void messagesThatMatchNoSubscriptionAreCountedOnceEach() throws Exception {
        Mqtt5BlockingClient subscriber = broker.connectedV5("ros-unmatched-sub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = subscriber.publishes(MqttGlobalPublishFilter.ALL)) {
            subscriber.subscribeWith().topicFilter("ros/matched").qos(MqttQos.AT_LEAST_ONCE).send();
            Mqtt5AsyncClient publisher = broker.connectedV5("ros-unmatched-pub").toAsync();
            double before = broker.metric("fleetmq_publish_unmatched_total", null);

            publishAll(publisher, List.of("ros/nobody/a", "ros/nobody/b", "ros/nobody/c"), List.of(false, false, true));
            io.fleetmq.testkit.Await.until(java.time.Duration.ofSeconds(30), "the three counted",
                    () -> broker.metric("fleetmq_publish_unmatched_total", null) >= before + 3);
            publishAll(publisher, List.of("ros/matched"), List.of(false));
            Received.next(in);

            assertEquals(before + 3, broker.metric("fleetmq_publish_unmatched_total", null),
                    "each unmatched message once; a matched one not at all");
            publisher.publishWith().topic("ros/nobody/c").retain(true).qos(MqttQos.AT_LEAST_ONCE).send()
                    .get(30, TimeUnit.SECONDS); // clears the retained message again
            publisher.disconnect().get(10, TimeUnit.SECONDS);
        } finally {
            subscriber.disconnect();
        }
    }

    /** A shared group whose members are on this node: each message reaches one member, once, in order. */
    @Test
    void aSharedGroupOfThisNodesSessionsGetsEachMessageOnceInOrder() throws Exception {
        Mqtt5BlockingClient a = broker.connectedV5("ros-share-a");
        Mqtt5BlockingClient b = broker.connectedV5("ros-share-b");
        try (Mqtt5BlockingClient.Mqtt5Publishes inA = a.publishes(MqttGlobalPublishFilter.ALL);
                Mqtt5BlockingClient.Mqtt5Publishes inB = b.publishes(MqttGlobalPublishFilter.ALL)) {
            a.subscribeWith().topicFilter("$share/ros/ros/shared/#").qos(MqttQos.AT_LEAST_ONCE).send();
            b.subscribeWith().topicFilter("$share/ros/ros/shared/#").qos(MqttQos.AT_LEAST_ONCE).send();
            Mqtt5AsyncClient publisher = broker.connectedV5("ros-share-pub").toAsync();
            double routedWhenStored = oneByOne(publisher, "ros/shared/t", 20, inA, inB);
            assertTrue(routedWhenStored > 0, "routed when Kafka confirmed them: " + routedWhenStored);

            publishAll(publisher, java.util.Collections.nCopies(MESSAGES, "ros/shared/t"),
                    java.util.Collections.nCopies(MESSAGES, false));
            List<Integer> gotA = new ArrayList<>();
            List<Integer> gotB = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (gotA.size() + gotB.size() < MESSAGES && System.nanoTime() < deadline) {
                inA.receive(5, TimeUnit.MILLISECONDS)
                        .ifPresent(p -> gotA.add(ByteBuffer.wrap(p.getPayloadAsBytes()).getInt()));
                inB.receive(5, TimeUnit.MILLISECONDS)
                        .ifPresent(p -> gotB.add(ByteBuffer.wrap(p.getPayloadAsBytes()).getInt()));
            }
            assertTrue(Received.nothingWithin(inA, 300) && Received.nothingWithin(inB, 300), "no message twice");
            List<Integer> all = new ArrayList<>(gotA);
            all.addAll(gotB);
            java.util.Collections.sort(all);
            assertEquals(java.util.stream.IntStream.range(0, MESSAGES).boxed().toList(), all, "each once");
            assertEquals(gotA.stream().sorted().toList(), gotA, "in order at each member");
            assertEquals(gotB.stream().sorted().toList(), gotB, "in order at each member");
            assertTrue(!gotA.isEmpty() && !gotB.isEmpty(), "both members got some: " + gotA.size() + "/" + gotB.size());
            publisher.disconnect().get(10, TimeUnit.SECONDS);
        } finally {
            a.disconnect();
            b.disconnect();
        }
    }

    /**
     * Every third message also goes to a persistent DEVICE session's queue and every seventh is
     * retained: both go through the routing consumer, and the messages after each of them wait
     * for it, so the plain subscriber sees one publisher's stream in order whichever path routed it.
     */
    @Test
    void messagesTheConsumerMustRouteKeepTheirPlaceAmongThoseRoutedWhenStored() throws Exception {
        Mqtt5BlockingClient device = broker.v5("ros-device");
        device.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
        Mqtt5BlockingClient subscriber = broker.connectedV5("ros-mixed-sub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = subscriber.publishes(MqttGlobalPublishFilter.ALL);
                Mqtt5BlockingClient.Mqtt5Publishes queued = device.publishes(MqttGlobalPublishFilter.ALL)) {
            subscriber.subscribeWith().topicFilter("ros/mixed/#").qos(MqttQos.AT_LEAST_ONCE).send();
            device.subscribeWith().topicFilter("ros/mixed/queued").qos(MqttQos.AT_LEAST_ONCE).send();
            Mqtt5AsyncClient publisher = broker.connectedV5("ros-mixed-pub").toAsync();
            double readBefore = routed("read");
            double routingDelaysBefore = broker.metric("fleetmq_publish_routing_delay_seconds_count", null);
            double queueDelaysBefore = broker.metric("fleetmq_device_queue_write_delay_seconds_count", null);

            List<String> topics = new ArrayList<>();
            List<Boolean> retain = new ArrayList<>();
            List<Integer> toDevice = new ArrayList<>();
            for (int i = 0; i < MESSAGES; i++) {
                boolean queuedToo = i % 3 == 0;
                topics.add(queuedToo ? "ros/mixed/queued" : "ros/mixed/plain");
                retain.add(i % 7 == 0);
                if (queuedToo) {
                    toDevice.add(i);
                }
            }
            publishAll(publisher, topics, retain);
            for (int i = 0; i < MESSAGES; i++) {
                Mqtt5Publish m = Received.next(in);
                assertEquals(i, ByteBuffer.wrap(m.getPayloadAsBytes()).getInt(), "in order, none lost");
            }
            assertTrue(Received.nothingWithin(in, 500), "no message twice");
            for (int expected : toDevice) {
                Mqtt5Publish m = Received.next(queued);
                assertEquals(expected, ByteBuffer.wrap(m.getPayloadAsBytes()).getInt(), "the DEVICE queue in order");
            }
            assertTrue(routed("read") - readBefore >= toDevice.size(),
                    "at least those for the DEVICE queue routed when read back: " + (routed("read") - readBefore));
            assertEquals(0, broker.dropped("session_queue_full"));
            // What the consumer routed and the DEVICE queue stored shows in the delay timers, a batch a sample.
            // (Recorded once a batch's writes are confirmed, which can be just after its messages arrived.)
            io.fleetmq.testkit.Await.until(java.time.Duration.ofSeconds(30), "the routing consumer's batches recorded",
                    () -> broker.metric("fleetmq_publish_routing_delay_seconds_count", null) > routingDelaysBefore);
            io.fleetmq.testkit.Await.until(java.time.Duration.ofSeconds(30), "the DEVICE queue writer's batches recorded",
                    () -> broker.metric("fleetmq_device_queue_write_delay_seconds_count", null) > queueDelaysBefore);
            publisher.disconnect().get(10, TimeUnit.SECONDS);
        } finally {
            subscriber.disconnect();
            device.disconnect();
        }
    }
}
