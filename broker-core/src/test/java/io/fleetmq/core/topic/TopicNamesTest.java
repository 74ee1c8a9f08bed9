package io.fleetmq.core.topic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class TopicNamesTest {

    private static InvalidTopicException invalidName(String name) {
        return assertThrows(InvalidTopicException.class, () -> TopicNames.validateTopicName(name));
    }

    private static InvalidTopicException invalidFilter(String filter) {
        return assertThrows(InvalidTopicException.class, () -> TopicNames.validateTopicFilter(filter));
    }

    // Validation

    @ParameterizedTest
    @ValueSource(strings = {"a", "/", "//", "sport/tennis/player1", "/finance", "finance/", "$SYS/broker",
        "a b", "caf\u00e9/\u6771\u4eac", "\ud83d\ude00/emoji"})
    void validTopicNamesPass(String name) {
        assertDoesNotThrow(() -> TopicNames.validateTopicName(name));
    }

    @ParameterizedTest
    @ValueSource(strings = {"#", "+", "sport/#", "sport/tennis/#", "sport/+/player1", "+/tennis/#", "/+",
        "+/+", "$SYS/#", "sport/", "/", "$share/g/x"})
    void validTopicFiltersPass(String filter) {
        assertDoesNotThrow(() -> TopicNames.validateTopicFilter(filter));
    }

    @Test
    @DisplayName("[MQTT-4.7.3-1] names and filters have at least one character")
    void emptyIsInvalid() {
        assertEquals(InvalidTopicException.TOPIC_NAME_INVALID, invalidName("").reasonCode());
        assertEquals(InvalidTopicException.TOPIC_FILTER_INVALID, invalidFilter("").reasonCode());
    }

    @Test
    @DisplayName("[MQTT-4.7.3-2] names and filters must not contain U+0000")
    void nullCharacterIsInvalid() {
        assertTrue(invalidName("a/\u0000b").getMessage().contains("U+0000"));
        assertTrue(invalidFilter("a/\u0000/#").getMessage().contains("U+0000"));
    }

    @Test
    @DisplayName("[MQTT-4.7.3-3] at most 65535 bytes of UTF-8, counted in bytes, not chars")
    void encodedLengthLimit() {
        assertDoesNotThrow(() -> TopicNames.validateTopicName("a".repeat(65_535)));
        assertTrue(invalidName("a".repeat(65_536)).getMessage().contains("65536 bytes"));
        // 'é' is two bytes: 32767 of them plus one ASCII fit, one more 'é' does not.
        assertDoesNotThrow(() -> TopicNames.validateTopicName("\u00e9".repeat(32_767) + "a"));
        invalidName("\u00e9".repeat(32_768));
        // '東' is three bytes, a supplementary character (a surrogate pair) four.
        assertDoesNotThrow(() -> TopicNames.validateTopicFilter("\u6771".repeat(21_845)));
        invalidFilter("\u6771".repeat(21_845) + "a");
        assertDoesNotThrow(() -> TopicNames.validateTopicName("\ud83d\ude00".repeat(16_383) + "abc"));
        invalidName("\ud83d\ude00".repeat(16_384));
    }

    @Test
    @DisplayName("[MQTT-1.5.4-1] an unpaired surrogate has no UTF-8 encoding")
    void loneSurrogateIsInvalid() {
        invalidName("a\ud83d");
        invalidName("\ude00a");
        invalidFilter("a/\ud83d/#");
    }

    @ParameterizedTest
    @ValueSource(strings = {"#", "+", "sport/#", "sport/+", "a+b", "sport/tennis#"})
    @DisplayName("[MQTT-4.7.0-1] [MQTT-3.3.2-2] topic names must not contain wildcards")
    void wildcardsInTopicNamesAreInvalid(String name) {
        InvalidTopicException e = invalidName(name);
        assertEquals(InvalidTopicException.TOPIC_NAME_INVALID, e.reasonCode());
        assertTrue(e.getMessage().contains("wildcard"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"sport/tennis#", "sport/tennis/#/ranking", "#/", "##", "a/#b", "a#", "#/a"})
    @DisplayName("[MQTT-4.7.1-1] '#' alone in the last level")
    void misplacedMultiLevelWildcard(String filter) {
        InvalidTopicException e = invalidFilter(filter);
        assertEquals(InvalidTopicException.TOPIC_FILTER_INVALID, e.reasonCode());
        assertTrue(e.getMessage().contains("'#'"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"sport+", "+sport", "a/b+/c", "a/+b", "++", "a/++/b"})
    @DisplayName("[MQTT-4.7.1-2] '+' occupies an entire level")
    void misplacedSingleLevelWildcard(String filter) {
        assertTrue(invalidFilter(filter).getMessage().contains("'+'"));
    }

    // Matching

    @ParameterizedTest(name = "{0} matches {1}")
    @CsvSource({
        // 4.7.1.2: '#' matches the parent level and any number of child levels
        "sport/tennis/player1/#, sport/tennis/player1",
        "sport/tennis/player1/#, sport/tennis/player1/ranking",
        "sport/tennis/player1/#, sport/tennis/player1/score/wimbledon",
        "sport/#, sport",
        "#, sport/tennis",
        "#, /",
        // 4.7.1.3: '+' matches exactly one level, empty levels included
        "sport/tennis/+, sport/tennis/player1",
        "sport/tennis/+, sport/tennis/player2",
        "sport/+, sport/",
        "+/+, /finance",
        "/+, /finance",
        "+, finance",
        "+/tennis/#, sport/tennis/player1",
        "sport/+/player1, sport/tennis/player1",
        "a/+/c, a//c",
        "+/#, a",
        "a/#, a/",
        "a/, a/",
        "//, //",
        // 4.7.2: '$' topics are matched by filters that do not start with a wildcard
        "$SYS/#, $SYS/monitor/Clients",
        "$SYS/monitor/+, $SYS/monitor/Clients",
        "$SYS/#, $SYS",
        "$share/g/#, $share/g/x",
        // exact names, case sensitive
        "ACCOUNTS/x, ACCOUNTS/x",
    })
    void matching(String filter, String topic) {
        assertTrue(TopicNames.matches(filter, topic));
    }

    @ParameterizedTest(name = "{0} does not match {1}")
    @CsvSource({
        "sport/tennis/+, sport/tennis/player1/ranking",
        "sport/+, sport",
        "+, /finance",
        "sport/tennis, sport/tennis/",
        "sport/tennis/, sport/tennis",
        "sport/#, sports",
        "sport/#, spor",
        "ACCOUNTS/x, accounts/x",
        "a/b/c, a/b",
        "a/b, a/b/c",
        "a/+/c, a/b/d",
        "a/+, a/b/c",
        "/+, finance",
        "+/+, finance",
    })
    void notMatching(String filter, String topic) {
        assertFalse(TopicNames.matches(filter, topic));
    }

    @ParameterizedTest(name = "{0} does not match {1}")
    @CsvSource({
        "#, $SYS/monitor/Clients",
        "#, $SYS",
        "+/monitor/Clients, $SYS/monitor/Clients",
        "+, $SYS",
        "+/#, $SYS/x",
    })
    @DisplayName("[MQTT-4.7.2-1] filters starting with a wildcard do not match topics starting with '$'")
    void dollarTopicsAreNotMatchedByLeadingWildcards(String filter, String topic) {
        assertFalse(TopicNames.matches(filter, topic));
    }

    @Test
    @DisplayName("[MQTT-4.7.2-1] only the first character counts: '$' later in the topic is ordinary")
    void dollarLaterInTheTopicIsOrdinary() {
        assertTrue(TopicNames.matches("#", "a/$SYS"));
        assertTrue(TopicNames.matches("+/+", "a/$b"));
    }

    @Test
    @DisplayName("[MQTT-4.7.3-4] no normalisation: composed and decomposed 'é' are different topics")
    void noNormalisation() {
        assertTrue(TopicNames.matches("caf\u00e9", "caf\u00e9"));
        assertFalse(TopicNames.matches("caf\u00e9", "cafe\u0301"));
    }

    @Test
    void deepTopicsMatchWithoutRecursion() {
        String topic = "a/".repeat(30_000) + "z";
        assertTrue(TopicNames.matches("+/".repeat(30_000) + "z", topic));
        assertTrue(TopicNames.matches("a/#", topic));
        assertFalse(TopicNames.matches("+/".repeat(30_000) + "y", topic));
    }

    @Test
    void levelsKeepEmptyLevels() {
        assertArrayEquals(new String[] {"", "a", ""}, TopicNames.levels("/a/"));
        assertArrayEquals(new String[] {"", ""}, TopicNames.levels("/"));
        assertArrayEquals(new String[] {"sport", "+", "#"}, TopicNames.levels("sport/+/#"));
    }

    @Test
    void hasWildcard() {
        assertTrue(TopicNames.hasWildcard("a/+/b"));
        assertTrue(TopicNames.hasWildcard("#"));
        assertFalse(TopicNames.hasWildcard("a/b/$x"));
    }
}
