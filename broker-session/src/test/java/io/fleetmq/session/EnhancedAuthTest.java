package io.fleetmq.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolVersion;
import io.fleetmq.core.mqtt.ReasonCode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * MQTT 5 enhanced authentication in the session (4.12), with a scripted guard: one round of
 * AUTH 0x18 before the CONNACK, which carries the final data; protocol errors during the
 * exchange; the connect timeout bounding it; and re-authentication on the open connection.
 */
class EnhancedAuthTest {

    private static final String CLIENT = "c";
    private static final String METHOD = "TEST";

    /** Answers "challenge" to the first data, then allows "response" (with data "done") and refuses anything else. */
    static final class ScriptedGuard implements SessionGuard {
        final List<String> started = new ArrayList<>();
        boolean answerLater;
        final List<Runnable> later = new ArrayList<>();

        @Override
        public CompletionStage<AuthStep> startAuthentication(ConnectRequest request, String method, byte[] data) {
            if (!METHOD.equals(method)) {
                return CompletableFuture.completedFuture(new AuthStep.Failed(ReasonCode.BAD_AUTHENTICATION_METHOD));
            }
            started.add(text(data));
            return step(new AuthStep.Continue(bytes("challenge"), next -> CompletableFuture.completedFuture(
                    "response".equals(text(next))
                            ? new AuthStep.Allowed(Verdict.allowed(ClientAccess.ALLOW_ALL, null), bytes("done"))
                            : new AuthStep.Failed(ReasonCode.BAD_USER_NAME_OR_PASSWORD))));
        }

        private CompletionStage<AuthStep> step(AuthStep step) {
            if (!answerLater) {
                return CompletableFuture.completedFuture(step);
            }
            CompletableFuture<AuthStep> f = new CompletableFuture<>();
            later.add(() -> f.complete(step));
            return f;
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    private static Packet.Connect connect(String method, String data) {
        return new Packet.Connect(ProtocolVersion.V5, CLIENT, true, 60, null, null, null, 0, 10, 0, 0, false, true,
                method, List.of(), data == null ? null : bytes(data));
    }

    private static RecordingConnection start(SessionHarness h, String method, String data) {
        RecordingConnection c = new RecordingConnection();
        h.registry.connect(connect(method, data), c);
        h.actors.runAll();
        return c;
    }

    @Test
    void anExchangeRunsBeforeTheConnectSequenceAndTheConnackCarriesTheFinalData() {
        ScriptedGuard guard = new ScriptedGuard();
        SessionHarness h = new SessionHarness(guard);
        RecordingConnection c = start(h, METHOD, "hello");
        assertEquals(List.of("hello"), guard.started);
        assertEquals(1, c.written.size());
        Packet.Auth challenge = (Packet.Auth) c.written.get(0);
        assertEquals(ReasonCode.CONTINUE_AUTHENTICATION, challenge.reasonCode());
        assertEquals(METHOD, challenge.authenticationMethod());
        assertArrayEquals(bytes("challenge"), challenge.authenticationData());
        assertTrue(h.sequence.events.isEmpty(), "no connect sequence before the exchange decided");

        h.send(CLIENT, c, new Packet.Auth(ReasonCode.CONTINUE_AUTHENTICATION, METHOD, bytes("response")));

        Packet.ConnAck connack = (Packet.ConnAck) c.written.get(1);
        assertEquals(ReasonCode.SUCCESS, connack.reasonCode());
        assertEquals(METHOD, connack.authenticationMethod());
        assertArrayEquals(bytes("done"), connack.authenticationData());
        assertTrue(h.session(CLIENT).isOnline());
    }

    @Test
    void aWrongResponseIsRefusedWithTheGuardsCodeAndNoSessionStays() {
        SessionHarness h = new SessionHarness(new ScriptedGuard());
        RecordingConnection c = start(h, METHOD, "hello");
        h.send(CLIENT, c, new Packet.Auth(ReasonCode.CONTINUE_AUTHENTICATION, METHOD, bytes("wrong")));
        assertEquals(ReasonCode.BAD_USER_NAME_OR_PASSWORD, ((Packet.ConnAck) c.written.get(1)).reasonCode());
        assertTrue(c.closed);
        assertTrue(h.sequence.events.isEmpty());
        assertNull(h.session(CLIENT));
    }

    @Test
    void anUnknownMethodGets0x8C() {
        SessionHarness h = new SessionHarness(new ScriptedGuard());
        RecordingConnection c = start(h, "OTHER", null);
        assertEquals(ReasonCode.BAD_AUTHENTICATION_METHOD, ((Packet.ConnAck) c.written.get(0)).reasonCode());
        assertTrue(c.closed);
    }

    @Test
    void withoutSecurityEveryMethodGets0x8C() {
        SessionHarness h = new SessionHarness();
        RecordingConnection c = start(h, METHOD, "hello");
        assertEquals(ReasonCode.BAD_AUTHENTICATION_METHOD, ((Packet.ConnAck) c.written.get(0)).reasonCode());
    }

    @Test
    void aPacketOtherThanAuthDuringTheExchangeIsAProtocolError() {
        SessionHarness h = new SessionHarness(new ScriptedGuard());
        RecordingConnection c = start(h, METHOD, "hello");
        h.send(CLIENT, c, new Packet.PingReq());
        assertEquals(ReasonCode.PROTOCOL_ERROR, ((Packet.ConnAck) c.written.get(1)).reasonCode());
        assertTrue(c.closed);
    }

    @Test
    void anAuthBeforeTheServersAnswerIsAProtocolError() {
        ScriptedGuard guard = new ScriptedGuard();
        guard.answerLater = true;
        SessionHarness h = new SessionHarness(guard);
        RecordingConnection c = start(h, METHOD, "hello");
        h.send(CLIENT, c, new Packet.Auth(ReasonCode.CONTINUE_AUTHENTICATION, METHOD, bytes("response")));
        assertEquals(ReasonCode.PROTOCOL_ERROR, ((Packet.ConnAck) c.written.get(0)).reasonCode());
        guard.later.forEach(Runnable::run);
        h.actors.runAll();
        assertEquals(1, c.written.size(), "the late answer goes nowhere");
    }

    @Test
    void theConnectTimeoutBoundsTheWholeExchange() {
        SessionHarness h = new SessionHarness(new ScriptedGuard());
        RecordingConnection c = start(h, METHOD, "hello");
        h.timers.advance(h.sequence.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        h.actors.runAll();
        Packet.ConnAck refused = (Packet.ConnAck) c.written.get(1);
        assertTrue(refused.reasonCode().isError());
        assertTrue(c.closed);
        assertNull(h.session(CLIENT), "the session that never had a connection is gone");
    }

    @Test
    void reauthenticationRunsTheExchangeAgainOnTheOpenConnection() {
        ScriptedGuard guard = new ScriptedGuard();
        SessionHarness h = new SessionHarness(guard);
        RecordingConnection c = start(h, METHOD, "hello");
        h.send(CLIENT, c, new Packet.Auth(ReasonCode.CONTINUE_AUTHENTICATION, METHOD, bytes("response")));

        h.send(CLIENT, c, new Packet.Auth(ReasonCode.RE_AUTHENTICATE, METHOD, bytes("again")));
        assertEquals(List.of("hello", "again"), guard.started);
        Packet.Auth challenge = (Packet.Auth) c.written.get(2);
        assertEquals(ReasonCode.CONTINUE_AUTHENTICATION, challenge.reasonCode());
        h.send(CLIENT, c, new Packet.Auth(ReasonCode.CONTINUE_AUTHENTICATION, METHOD, bytes("response")));
        Packet.Auth success = (Packet.Auth) c.written.get(3);
        assertEquals(ReasonCode.SUCCESS, success.reasonCode());
        assertArrayEquals(bytes("done"), success.authenticationData());

        h.send(CLIENT, c, new Packet.Auth(ReasonCode.RE_AUTHENTICATE, METHOD, bytes("third")));
        h.send(CLIENT, c, new Packet.Auth(ReasonCode.CONTINUE_AUTHENTICATION, METHOD, bytes("wrong")));
        Packet.Disconnect disconnect = (Packet.Disconnect) c.written.get(c.written.size() - 1);
        assertEquals(ReasonCode.NOT_AUTHORIZED, disconnect.reasonCode());
        assertTrue(c.closed);
    }

    @Test
    void reauthenticationWithAnotherMethodOrWithoutOneIsAProtocolError() {
        SessionHarness h = new SessionHarness(new ScriptedGuard());
        RecordingConnection c = start(h, METHOD, "hello");
        h.send(CLIENT, c, new Packet.Auth(ReasonCode.CONTINUE_AUTHENTICATION, METHOD, bytes("response")));
        h.send(CLIENT, c, new Packet.Auth(ReasonCode.RE_AUTHENTICATE, "OTHER", bytes("again")));
        assertEquals(ReasonCode.PROTOCOL_ERROR, ((Packet.Disconnect) c.written.get(c.written.size() - 1)).reasonCode());

        SessionHarness plain = new SessionHarness(new ScriptedGuard());
        RecordingConnection p = plain.connect(CLIENT, true, 0, 10);
        plain.send(CLIENT, p, new Packet.Auth(ReasonCode.RE_AUTHENTICATE, METHOD, bytes("x")));
        assertEquals(ReasonCode.PROTOCOL_ERROR, ((Packet.Disconnect) p.written.get(p.written.size() - 1)).reasonCode());
    }
}
