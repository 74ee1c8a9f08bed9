package io.fleetmq.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ReasonCode;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** How a session applies its guard's answers: refusals, rights, their review, and their end. */
class SessionGuardTest {

    /** Lets everyone in with {@code access}. */
    private static SessionGuard allowing(ClientAccess access) {
        return new SessionGuard() {
            @Override
            public CompletionStage<Verdict> authenticate(ConnectRequest request) {
                return CompletableFuture.completedFuture(Verdict.allowed(access, null));
            }
        };
    }

    private static ClientAccess expiringAt(long epochMillis) {
        return new ClientAccess() {
            @Override
            public Instant expiresAt() {
                return Instant.ofEpochMilli(epochMillis);
            }
        };
    }

    @Test
    @DisplayName("A refusing verdict answers CONNACK with its code and never reaches the connect sequence")
    void refusal() {
        SessionHarness h = new SessionHarness(new SessionGuard() {
            @Override
            public CompletionStage<Verdict> authenticate(ConnectRequest request) {
                return CompletableFuture.completedFuture(Verdict.refused(ReasonCode.BAD_USER_NAME_OR_PASSWORD));
            }
        });
        RecordingConnection c = h.connect("c1", true, 0, 10);
        Packet.ConnAck connAck = assertInstanceOf(Packet.ConnAck.class, c.written.get(0));
        assertEquals(ReasonCode.BAD_USER_NAME_OR_PASSWORD, connAck.reasonCode());
        assertTrue(c.closed);
    }

    @Test
    @DisplayName("When the client's authentication expires its connection ends with DISCONNECT 0x87")
    void expiry() {
        SessionHarness h = new SessionHarness(allowing(expiringAt(1_000_000L + 5_000)));
        RecordingConnection c = h.connect("c2", true, 0, 10);
        assertEquals(ReasonCode.SUCCESS, ((Packet.ConnAck) c.written.get(0)).reasonCode());
        h.timers.advance(4_000, TimeUnit.MILLISECONDS);
        h.actors.runAll();
        assertFalse(c.closed, "still valid after 4 s");
        h.timers.advance(1_000, TimeUnit.MILLISECONDS);
        h.actors.runAll();
        assertTrue(c.closed, "ended at the expiry");
        Packet.Disconnect d = assertInstanceOf(Packet.Disconnect.class, c.written.get(c.written.size() - 1));
        assertEquals(ReasonCode.NOT_AUTHORIZED, d.reasonCode());
    }

    @Test
    @DisplayName("Rights replaced by a review apply at once: a subscription they forbid is removed, and a new expiry is armed")
    void review() {
        SessionHarness h = new SessionHarness(SessionGuard.ALLOW_ALL);
        RecordingConnection c = h.connect("c3", true, 0, 10);
        h.subscribe("c3", c, "a/b", 1);
        assertEquals(1, h.subscriptions.subscriptionsOf("c3").size());
        ClientAccess narrow = new ClientAccess() {
            @Override
            public ReasonCode authorizeSubscribe(String filter, int qos) {
                return filter.startsWith("x/") ? ReasonCode.SUCCESS : ReasonCode.NOT_AUTHORIZED;
            }

            @Override
            public Instant expiresAt() {
                return Instant.ofEpochMilli(1_000_000L + 1_000);
            }
        };
        h.session("c3").review(s -> ClientAccess.Outcome.replace(narrow));
        h.actors.runAll();
        assertEquals(List.of(), h.subscriptions.subscriptionsOf("c3"), "the forbidden subscription is gone");
        h.timers.advance(1_000, TimeUnit.MILLISECONDS);
        h.actors.runAll();
        assertTrue(c.closed, "the new rights' expiry ended the connection");
    }
}
