package io.fleetmq.core.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ClientTextTest {

    @Test
    void shortPlainTextIsUnchanged() {
        assertEquals("sensor-17/temp", ClientText.of("sensor-17/temp"));
        assertEquals("null", ClientText.of(null));
    }

    @Test
    void longTextIsCutAndSaysHowMuchWasLeftOut() {
        String s = ClientText.of("x".repeat(1000));
        assertEquals("x".repeat(ClientText.MAX_LENGTH) + "...(872 more)", s);
    }

    @Test
    void controlCharactersCannotForgeLogLines() {
        String s = ClientText.of("evil\n2026-01-01 INFO forged line\r\u001b[31m\u2028");
        assertFalse(s.contains("\n") || s.contains("\r") || s.contains("\u001b") || s.contains("\u2028"), s);
        assertEquals("evil\\n2026-01-01 INFO forged line\\r\\u001b[31m\\u2028", s);
    }

    @Test
    void bidiOverridesAreEscaped() {
        assertEquals("admin\\u202etxt.exe", ClientText.of("admin\u202etxt.exe"));
    }

    @Test
    void neverSplitsASurrogatePair() {
        String s = ClientText.of("a".repeat(ClientText.MAX_LENGTH - 1) + "\uD83D\uDE00tail");
        assertTrue(s.startsWith("a".repeat(ClientText.MAX_LENGTH - 1) + "..."), s);
    }
}
