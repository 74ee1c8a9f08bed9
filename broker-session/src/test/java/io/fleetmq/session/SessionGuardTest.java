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
        return allowingByClientId(clientId -> access);
    }

    /** Lets everyone in, each client ID with the access {@code accessOf} gives it. */
    private static SessionGuard allowingByClientId(java.util.function.Function<String, ClientAccess> accessOf) {
        return new SessionGuard() {
            @Override
            public CompletionStage<Verdict> authenticate(ConnectRequest request) {
                return CompletableFuture.completedFuture(Verdict.allowed(accessOf.apply(request.clientId()), null));
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

    private static ClientAccess withCredential(String id) {
        return new ClientAccess() {
            @Override
            public String credentialId() {
                return id;
            }
        };
    }

    @Test
    @DisplayName("A review of one credential's clients reaches their sessions only; one of every session reaches all")
    void reviewOfOneCredential() {
        SessionHarness h = new SessionHarness(allowingByClientId(id -> id.equals("anon") ? ClientAccess.ALLOW_ALL
                : withCredential(id.startsWith("a") ? "cred-a" : "cred-b")));
        for (String id : new String[] {"a1", "a2", "b1", "anon"}) {
            h.connect(id, true, 0, 10);
        }
        java.util.Set<String> reviewed = java.util.concurrent.ConcurrentHashMap.newKeySet();
        ClientAccess.Review record = s -> {
            reviewed.add(s.clientId());
            return ClientAccess.Outcome.KEEP;
        };
        h.registry.review(ClientAccess.Review.concerning("cred-a", record));
        h.actors.runAll();
        assertEquals(java.util.Set.of("a1", "a2"), reviewed);
        assertEquals(2, h.registry.credentialsHeld(), "cred-a and cred-b");

        reviewed.clear();
        h.session("b1").review(s -> ClientAccess.Outcome.replace(withCredential("cred-a")));
        h.actors.runAll();
        java.util.Set<String> all = java.util.concurrent.ConcurrentHashMap.newKeySet();
        h.registry.review(ClientAccess.Review.concerning("cred-a", record));
        h.registry.review(s -> {
            all.add(s.clientId());
            return ClientAccess.Outcome.KEEP;
        });
        h.actors.runAll();
        assertEquals(java.util.Set.of("a1", "a2", "b1"), reviewed, "b1 holds cred-a's rights since its review");
        assertEquals(java.util.Set.of("a1", "a2", "b1", "anon"), all,
                "a review of every session reaches the anonymous one too");
        assertEquals(1, h.registry.credentialsHeld(), "nobody holds cred-b any more");
    }

    @Test
    @DisplayName("A session that ended is no longer reviewed for its credential, and a new one of the client ID is")
    void endedSessionsLeaveTheirCredential() {
        SessionHarness h = new SessionHarness(allowingByClientId(id -> withCredential("cred-" + id.charAt(0))));
        RecordingConnection a1 = h.connect("a1", true, 0, 10);
        h.connect("a2", true, 0, 10);
        RecordingConnection b1 = h.connect("b1", true, 0, 10);
        h.lose("a1", a1);
        h.lose("b1", b1);
        h.actors.runAll();
        assertEquals(null, h.session("a1"), "a session of expiry 0 ends with its connection");
        assertEquals(1, h.registry.credentialsHeld(), "cred-a by a2; nobody holds cred-b");

        java.util.Set<String> reviewed = java.util.concurrent.ConcurrentHashMap.newKeySet();
        ClientAccess.Review record = s -> {
            reviewed.add(s.clientId());
            return ClientAccess.Outcome.KEEP;
        };
        h.registry.review(ClientAccess.Review.concerning("cred-a", record));
        h.registry.review(ClientAccess.Review.concerning("cred-b", record));
        h.actors.runAll();
        assertEquals(java.util.Set.of("a2"), reviewed);

        reviewed.clear();
        h.connect("a1", true, 0, 10);
        h.registry.review(ClientAccess.Review.concerning("cred-a", record));
        h.actors.runAll();
        assertEquals(java.util.Set.of("a1", "a2"), reviewed);
    }
}
