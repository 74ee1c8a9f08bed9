package io.fleetmq.app.security.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class HttpAnswerTest {

    private static final Instant NOW = Instant.parse("2026-06-01T12:00:00Z");

    private static HttpAnswer read(String body) {
        return HttpAnswer.read(200, body.getBytes(StandardCharsets.UTF_8), NOW);
    }

    @Test
    void expiresAtIsIsoWithOffsetOrEpochSeconds() {
        var iso = assertInstanceOf(HttpAnswer.Allow.class,
                read("{\"result\":\"allow\",\"expiresAt\":\"2026-06-01T15:00:00+02:00\"}"));
        assertEquals(Instant.parse("2026-06-01T13:00:00Z"), iso.expiresAt());
        var epoch = assertInstanceOf(HttpAnswer.Allow.class,
                read("{\"result\":\"allow\",\"expiresAt\":" + NOW.plusSeconds(60).getEpochSecond() + "}"));
        assertEquals(NOW.plusSeconds(60), epoch.expiresAt());
        assertInstanceOf(HttpAnswer.Invalid.class, read("{\"result\":\"allow\",\"expiresAt\":\"tomorrow\"}"));
        assertInstanceOf(HttpAnswer.Invalid.class, read("{\"result\":\"allow\",\"expiresAt\":1.5}"));
        assertInstanceOf(HttpAnswer.Invalid.class, read("{\"result\":\"allow\",\"expiresAt\":99999999999999999}"));
        var passed = assertInstanceOf(HttpAnswer.Invalid.class,
                read("{\"result\":\"allow\",\"expiresAt\":" + NOW.getEpochSecond() + "}"));
        assertTrue(passed.why().contains("has passed"), passed.why());
    }

    @Test
    void rulesAndClientTypeAreChecked() {
        var allow = assertInstanceOf(HttpAnswer.Allow.class,
                read("{\"result\":\"allow\",\"clientType\":\"DEVICE\",\"publish\":[\"a/${username}\"],\"subscribe\":null}"));
        assertEquals("DEVICE", allow.clientType());
        assertEquals(List.of("a/${username}"), allow.publish());
        assertEquals(List.of(), allow.subscribe());
        assertInstanceOf(HttpAnswer.Invalid.class, read("{\"result\":\"allow\",\"clientType\":\"ROBOT\"}"));
        assertInstanceOf(HttpAnswer.Invalid.class, read("{\"result\":\"allow\",\"clientType\":7}"));
        assertInstanceOf(HttpAnswer.Invalid.class, read("{\"result\":\"allow\",\"publish\":\"a/b\"}"));
        assertInstanceOf(HttpAnswer.Invalid.class, read("{\"result\":\"allow\",\"subscribe\":[1]}"));
        var bad = assertInstanceOf(HttpAnswer.Invalid.class, read("{\"result\":\"allow\",\"subscribe\":[\"$share/g/a\"]}"));
        assertTrue(bad.why().startsWith("\"subscribe\": rule '$share/g/a'"), bad.why());
    }

    @Test
    void onlyTheThreeResultsAreAnswers() {
        assertInstanceOf(HttpAnswer.Deny.class, read("{\"result\":\"deny\",\"publish\":[\"#\"]}"));
        assertInstanceOf(HttpAnswer.Ignore.class, read("{\"result\":\"ignore\"}"));
        assertInstanceOf(HttpAnswer.Malformed.class, read("{\"result\":\"ALLOW\"}"));
        assertInstanceOf(HttpAnswer.Malformed.class, read("{\"result\":true}"));
        assertInstanceOf(HttpAnswer.Malformed.class, read("{}"));
        assertInstanceOf(HttpAnswer.Malformed.class, read(""));
        assertInstanceOf(HttpAnswer.Malformed.class, read("\"allow\""));
        assertInstanceOf(HttpAnswer.Malformed.class, HttpAnswer.read(401, new byte[0], NOW));
        assertInstanceOf(HttpAnswer.Allow.class, HttpAnswer.read(204, new byte[0], NOW));
    }
}
