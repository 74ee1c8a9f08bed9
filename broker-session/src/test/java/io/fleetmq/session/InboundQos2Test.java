package io.fleetmq.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.persistence.redis.Qos2Receipts;
import io.fleetmq.persistence.redis.Redis;
import io.fleetmq.persistence.redis.RedisSettings;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.TcpProxy;
import io.fleetmq.testkit.TestServices;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The receive side of QoS 2, against the embedded Redis; the actor's mailbox is a queue run by hand. */
class InboundQos2Test {

    private Redis redis;
    private Qos2Receipts receipts;
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    /** Redis answers on its own threads; the actor's turns run here, on the test's thread. */
    private final Queue<Runnable> mailbox = new ConcurrentLinkedQueue<>();

    @BeforeEach
    void connect() {
        redis = Redis.connect(new RedisSettings(TestServices.shared().redisUrl(), Duration.ofSeconds(5)));
        receipts = new Qos2Receipts(redis.binaryCommands(), "t" + UUID.randomUUID().toString().substring(0, 8) + ":");
    }

    @AfterEach
    void close() {
        redis.close();
    }

    private InboundQos2 session(String clientId) {
        return new InboundQos2(clientId, receipts, meters);
    }

    /** Resumes {@code q} and runs what the mailbox got; returns whether {@code next} ran. */
    private boolean resume(InboundQos2 q) throws Exception {
        boolean[] ran = new boolean[1];
        q.resume(mailbox::add, () -> ran[0] = true);
        Await.until(Duration.ofSeconds(10), "Redis to answer", () -> !mailbox.isEmpty());
        for (Runnable r = mailbox.poll(); r != null; r = mailbox.poll()) {
            r.run();
        }
        return ran[0];
    }

    private double failed(String operation) {
        var c = meters.find("fleetmq.qos2.receipts.failed").tag("operation", operation).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    @DisplayName("[MQTT-4.3.3-10] a resend to a session resumed elsewhere is recognised from Redis")
    void aSessionResumedOnAnotherNodeKnowsWhatTheFirstStored() throws Exception {
        InboundQos2 first = session("c1");
        first.storing(7);
        assertFalse(first.isStored(7), "no PUBREC while Kafka stores it");
        first.settled(7, true, 300).get(10, TimeUnit.SECONDS);
        assertTrue(first.isStored(7));

        InboundQos2 elsewhere = session("c1"); // the actor on the node the session resumes on
        assertFalse(elsewhere.isResend(7, true), "nothing known before resuming");
        assertTrue(resume(elsewhere));
        assertTrue(elsewhere.isResend(7, true), "a DUP resend is answered PUBREC, not stored again");
        assertTrue(elsewhere.isStored(7));
        assertFalse(elsewhere.isResend(7, false), "[MQTT-3.3.1-1] DUP 0 is a first attempt: a new message");
        assertFalse(elsewhere.heldWindow(7), "the resumed flow holds no slot of this connection's window");

        assertTrue(elsewhere.released(7, 300), "[MQTT-4.3.3-11] PUBCOMP with success");
        InboundQos2 third = session("c1");
        assertTrue(resume(third));
        assertFalse(third.isResend(7, true), "released: the identifier is free on every node");
    }

    @Test
    void aSessionThatEndsWithItsConnectionKeepsNothingInRedis() throws Exception {
        InboundQos2 q = session("c2");
        q.storing(3);
        assertTrue(q.settled(3, true, 0).isDone(), "PUBREC at once");
        assertTrue(q.heldWindow(3));
        q.storing(4);
        assertTrue(q.settled(4, false, 300).isDone(), "not stored in Kafka: nothing to record");
        assertFalse(q.isResend(4, true), "the client's next attempt is stored as new");
        InboundQos2 other = session("c2");
        assertTrue(resume(other));
        assertFalse(other.isResend(3, true));
    }

    @Test
    void theSessionsEndDropsItsReceipts() throws Exception {
        InboundQos2 q = session("c3");
        q.storing(1);
        q.settled(1, true, 300).get(10, TimeUnit.SECONDS);
        q.ended();
        assertFalse(q.isResend(1, true));
        InboundQos2 stillStored = session("c3");
        assertTrue(resume(stillStored));
        assertTrue(stillStored.isResend(1, true), "ending the session here leaves the store to its owner");
        q.deleteReceipts();
        InboundQos2 next = session("c3");
        assertTrue(resume(next));
        assertFalse(next.isResend(1, true), "a clean start ends the QoS 2 state everywhere");
    }

    @Test
    @DisplayName("Redis away: PUBREC still goes out (the message is in Kafka), the node remembers, the degraded case is counted")
    void withoutRedisTheMessageIsStillAcknowledgedAndCounted() throws Exception {
        java.net.URI url = java.net.URI.create(TestServices.shared().redisUrl());
        try (TcpProxy link = TcpProxy.start(url.getHost(), url.getPort());
             Redis behind = Redis.connect(new RedisSettings("redis://" + link.address(), Duration.ofSeconds(2)))) {
            Qos2Receipts away = new Qos2Receipts(behind.binaryCommands(), "t" + UUID.randomUUID().toString().substring(0, 8) + ":");
            InboundQos2 q = new InboundQos2("c4", away, meters);
            link.cut(); // the link to Redis is reset and stays down
            q.storing(9);
            q.settled(9, true, 300).get(10, TimeUnit.SECONDS); // completes normally: PUBREC may be sent
            assertTrue(q.isStored(9), "this node still answers a resend");
            assertEquals(1.0, failed("record"));
            InboundQos2 resumed = new InboundQos2("c4", away, meters);
            assertTrue(resume(resumed), "the connection is accepted without Redis");
            assertEquals(1.0, failed("load"));
            assertFalse(resumed.isResend(9, true), "what Redis could not tell is not known there");
        }
    }
}
