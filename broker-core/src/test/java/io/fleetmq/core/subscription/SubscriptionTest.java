package io.fleetmq.core.subscription;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.topic.InvalidTopicException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SubscriptionTest {

    private static Subscription subscription(String filter, String group, int qos, boolean noLocal,
            int retainHandling, int subscriptionId) {
        return new Subscription("c1", filter, group, qos, noLocal, false, retainHandling, subscriptionId, null);
    }

    @Test
    void acceptsTheFullRangeOfOptions() {
        assertDoesNotThrow(() -> subscription("a/#", null, 2, true, 2, Subscription.MAX_SUBSCRIPTION_ID));
        assertDoesNotThrow(() -> subscription("+", "g", 0, false, 0, 0));
        assertTrue(subscription("a", "g", 1, false, 0, 0).isShared());
        assertFalse(subscription("a", null, 1, false, 0, 0).isShared());
    }

    @Test
    @DisplayName("[MQTT-4.7.1-1] [MQTT-4.7.1-2] the filter is validated")
    void invalidFilter() {
        assertThrows(InvalidTopicException.class, () -> subscription("a/#/b", null, 0, false, 0, 0));
        assertThrows(InvalidTopicException.class, () -> subscription("a+", "g", 0, false, 0, 0));
    }

    @Test
    @DisplayName("[MQTT-4.8.2-1] [MQTT-4.8.2-2] the share group is validated")
    void invalidShareGroup() {
        assertThrows(InvalidTopicException.class, () -> subscription("a", "", 0, false, 0, 0));
        assertThrows(InvalidTopicException.class, () -> subscription("a", "g/h", 0, false, 0, 0));
    }

    @Test
    @DisplayName("[MQTT-3.8.3-4] No Local is not allowed on a shared subscription")
    void noLocalOnSharedSubscription() {
        assertThrows(IllegalArgumentException.class, () -> subscription("a", "g", 0, true, 0, 0));
    }

    @Test
    void optionsOutOfRange() {
        assertThrows(IllegalArgumentException.class, () -> subscription("a", null, 3, false, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> subscription("a", null, -1, false, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> subscription("a", null, 0, false, 3, 0));
        assertThrows(IllegalArgumentException.class, () -> subscription("a", null, 0, false, 0, -1));
        assertThrows(IllegalArgumentException.class,
                () -> subscription("a", null, 0, false, 0, Subscription.MAX_SUBSCRIPTION_ID + 1));
    }
}
