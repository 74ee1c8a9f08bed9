package io.fleetmq.core.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class SharedSubscriptionTest {

    @ParameterizedTest
    @ValueSource(strings = {"sport/#", "$SYS/#", "$share", "$sharegroup/x", "$SHARE/g/x", "share/g/x", "#"})
    void filtersNotStartingWithTheSharePrefixAreNotShared(String filter) {
        assertNull(SharedSubscription.parse(filter));
    }

    @ParameterizedTest(name = "{0} is group {1}, filter {2}")
    @CsvSource({
        "$share/consumer1/sport/tennis/+, consumer1, sport/tennis/+",
        "$share/consumer2/sport/tennis/+, consumer2, sport/tennis/+",
        "$share/consumer1//finance, consumer1, /finance",
        "$share/g/#, g, #",
        "$share/g/$SYS/x, g, $SYS/x",
        "$share/$g!/a, $g!, a",
    })
    void splitsGroupAndFilterAtTheFirstSeparatorAfterThePrefix(String raw, String group, String filter) {
        SharedSubscription share = SharedSubscription.parse(raw);
        assertEquals(new SharedSubscription(group, filter), share);
        assertEquals(raw, share.rawFilter());
    }

    @ParameterizedTest
    @ValueSource(strings = {"$share/", "$share//sport"})
    @DisplayName("[MQTT-4.8.2-1] the ShareName has at least one character")
    void emptyShareName(String raw) {
        InvalidTopicException e = assertThrows(InvalidTopicException.class, () -> SharedSubscription.parse(raw));
        assertEquals(InvalidTopicException.TOPIC_FILTER_INVALID, e.reasonCode());
        assertTrue(e.getMessage().contains("at least one character"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"$share/g+/a", "$share/+/a", "$share/#/a", "$share/g#/a", "$share/#"})
    @DisplayName("[MQTT-4.8.2-2] the ShareName contains no '+' or '#'")
    void wildcardInShareName(String raw) {
        InvalidTopicException e = assertThrows(InvalidTopicException.class, () -> SharedSubscription.parse(raw));
        assertTrue(e.getMessage().contains("must not contain '/', '+' or '#'"), e.getMessage());
    }

    @Test
    @DisplayName("[MQTT-4.8.2-2] the ShareName contains no '/' (only constructible directly)")
    void separatorInShareName() {
        assertThrows(InvalidTopicException.class, () -> new SharedSubscription("a/b", "x"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"$share/group", "$share/group/"})
    @DisplayName("[MQTT-4.8.2-2] the ShareName is followed by '/' and a topic filter")
    void missingFilter(String raw) {
        InvalidTopicException e = assertThrows(InvalidTopicException.class, () -> SharedSubscription.parse(raw));
        assertTrue(e.getMessage().contains("followed by '/' and a topic filter"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"$share/g/sport/#/x", "$share/g/sport+", "$share/g/a\u0000"})
    @DisplayName("[MQTT-4.7.1-1] [MQTT-4.7.1-2] [MQTT-4.7.3-2] the filter part follows the filter rules")
    void invalidFilterPart(String raw) {
        assertThrows(InvalidTopicException.class, () -> SharedSubscription.parse(raw));
    }

    @Test
    @DisplayName("[MQTT-4.7.3-2] [MQTT-4.7.3-3] the ShareName counts into the character rules and the length")
    void groupCharactersAndTotalLength() {
        assertThrows(InvalidTopicException.class, () -> SharedSubscription.parse("$share/g\u0000/a"));
        String longGroup = "g".repeat(65_535 - "$share//a".length());
        assertEquals(longGroup, SharedSubscription.parse("$share/" + longGroup + "/a").group());
        assertThrows(InvalidTopicException.class, () -> SharedSubscription.parse("$share/" + longGroup + "x/a"));
    }
}
