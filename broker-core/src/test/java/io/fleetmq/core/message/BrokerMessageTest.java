package io.fleetmq.core.message;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class BrokerMessageTest {

    private static final long T0 = 1_780_000_000_000L;

    private static BrokerMessage withExpiry(long expirySeconds) {
        return new BrokerMessage("a/b", new byte[] {1}, 1, false, "c1", T0, expirySeconds,
                BrokerMessage.PAYLOAD_FORMAT_ABSENT, null, null, null, List.of());
    }

    private static BrokerMessage full(byte[] payload, byte[] correlation) {
        return new BrokerMessage("a/b", payload, 2, true, "c1", T0, 60, 1, "text/plain", "reply/here", correlation,
                List.of(new UserProperty("k", "v")));
    }

    @Test
    void rejectsInvalidFields() {
        byte[] p = new byte[0];
        assertThrows(IllegalArgumentException.class, () -> BrokerMessage.of("a", p, 3, false, "c", T0));
        assertThrows(IllegalArgumentException.class, () -> BrokerMessage.of("a", p, -1, false, "c", T0));
        assertThrows(NullPointerException.class, () -> BrokerMessage.of(null, p, 0, false, "c", T0));
        assertThrows(NullPointerException.class, () -> BrokerMessage.of("a", null, 0, false, "c", T0));
        assertThrows(NullPointerException.class, () -> BrokerMessage.of("a", p, 0, false, null, T0));
        assertThrows(IllegalArgumentException.class, () -> BrokerMessage.of("a", p, 0, false, "c", -1));
        assertThrows(IllegalArgumentException.class, () -> withExpiry(-2));
        assertThrows(IllegalArgumentException.class, () -> withExpiry(BrokerMessage.MAX_EXPIRY_INTERVAL_SECONDS + 1));
        assertThrows(IllegalArgumentException.class, () -> new BrokerMessage("a", p, 0, false, "c", T0, -1, 2,
                null, null, null, List.of()));
        assertThrows(NullPointerException.class, () -> new BrokerMessage("a", p, 0, false, "c", T0, -1, -1,
                null, null, null, null));
    }

    @Test
    void aTopicNameIsNeverEmpty_MQTT_4_7_3_1() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BrokerMessage.of("", new byte[0], 0, false, "c", T0));
        assertTrue(e.getMessage().contains("topic"), e.getMessage());
    }

    @Test
    void userPropertiesAreCopiedImmutablyInOrder_MQTT_3_3_2_18() {
        List<UserProperty> source = new ArrayList<>(List.of(new UserProperty("b", "1"), new UserProperty("a", "2"),
                new UserProperty("b", "3")));
        BrokerMessage m = new BrokerMessage("t", new byte[0], 0, false, "c", T0, -1, -1, null, null, null, source);
        source.clear();
        assertEquals(List.of(new UserProperty("b", "1"), new UserProperty("a", "2"), new UserProperty("b", "3")),
                m.userProperties());
        assertThrows(UnsupportedOperationException.class, () -> m.userProperties().add(new UserProperty("x", "y")));
    }

    @Test
    void nullUserPropertyElementsAreRejected() {
        List<UserProperty> withNull = Arrays.asList(new UserProperty("a", "1"), null);
        assertThrows(NullPointerException.class,
                () -> new BrokerMessage("t", new byte[0], 0, false, "c", T0, -1, -1, null, null, null, withNull));
    }

    @Test
    void aMessageWithoutExpiryNeverExpires() {
        BrokerMessage m = withExpiry(BrokerMessage.NO_EXPIRY);
        assertEquals(BrokerMessage.NO_EXPIRY, m.remainingExpirySeconds(Long.MAX_VALUE));
        assertFalse(m.isExpired(Long.MAX_VALUE));
    }

    @Test
    void forwardedExpiryIsTheReceivedValueMinusTheWaitingTime_MQTT_3_3_2_6() {
        BrokerMessage m = withExpiry(10);
        assertEquals(10, m.remainingExpirySeconds(T0));
        assertEquals(10, m.remainingExpirySeconds(T0 + 999));
        assertEquals(9, m.remainingExpirySeconds(T0 + 1_000));
        assertEquals(1, m.remainingExpirySeconds(T0 + 9_999));
        assertFalse(m.isExpired(T0 + 9_999));
        assertEquals(0, m.remainingExpirySeconds(T0 + 10_000));
        assertTrue(m.isExpired(T0 + 10_000));
        assertEquals(-5, m.remainingExpirySeconds(T0 + 15_000));
        assertTrue(m.isExpired(T0 + 15_000));
    }

    @Test
    void aClockBehindTheCreatingNodeDoesNotExtendTheLifetime() {
        assertEquals(10, withExpiry(10).remainingExpirySeconds(T0 - 60_000));
    }

    @Test
    void anExpiryIntervalOfZeroIsExpiredAtOnce() {
        assertTrue(withExpiry(0).isExpired(T0));
    }

    @Test
    void theLargestExpiryIntervalDoesNotOverflow() {
        BrokerMessage m = withExpiry(BrokerMessage.MAX_EXPIRY_INTERVAL_SECONDS);
        assertEquals(BrokerMessage.MAX_EXPIRY_INTERVAL_SECONDS - 1, m.remainingExpirySeconds(T0 + 1_000));
        assertFalse(m.isExpired(T0 + 86_400_000L * 365 * 100));
    }

    @Test
    void equalityComparesArraysByContent() {
        BrokerMessage a = full(new byte[] {1, 2, 3}, new byte[] {9});
        BrokerMessage b = full(new byte[] {1, 2, 3}, new byte[] {9});
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        assertNotEquals(a, full(new byte[] {1, 2, 4}, new byte[] {9}));
        assertNotEquals(a, full(new byte[] {1, 2, 3}, new byte[] {8}));
        // Absent correlation data and empty correlation data are different things to a requester.
        assertNotEquals(full(new byte[0], null), full(new byte[0], new byte[0]));
    }

    @Test
    void toStringNamesTheMessageButNotItsContent() {
        byte[] secret = "hunter2-very-secret".getBytes(StandardCharsets.UTF_8);
        String s = full(secret, secret).toString();
        assertFalse(s.contains("hunter2"), s);
        assertFalse(s.contains("[B@"), s);
        assertTrue(s.contains("topic=a/b"), s);
        assertTrue(s.contains("payload=19 bytes"), s);
        assertTrue(s.contains("correlationData=19 bytes"), s);
        assertTrue(s.contains("userProperties=1"), s);
        assertFalse(BrokerMessage.of("t", secret, 0, false, "c", T0).toString().contains("contentType"));
    }

    @Test
    void hasPropertiesIsFalseOnlyForAPlainMessage() {
        assertFalse(BrokerMessage.of("t", new byte[0], 0, false, "c", T0).hasProperties());
        assertTrue(withExpiry(5).hasProperties());
        assertTrue(full(new byte[0], null).hasProperties());
    }
}
