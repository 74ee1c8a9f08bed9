package io.fleetmq.core.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.topic.TopicNames;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class TopicRulesTest {

    private static final String ID = "dev-1";
    private static final String USER = "alice";

    private static TopicRules rules(String... filters) {
        return TopicRules.of(List.of(filters));
    }

    // --- validation ---

    @ParameterizedTest
    @ValueSource(strings = {"a", "a/b", "#", "+", "a/+/c", "a/#", "/", "//", "+/+", "$SYS/#",
        "devices/${clientid}/telemetry", "${username}/#", "${clientid}", "${cn}/in",
        "${username}/${clientid}/+", "a/$/b", "a/$x/b", "a/{clientid}", "a/$clientid", "a/}"})
    void validRules(String filter) {
        assertNull(TopicRules.validate(filter), filter);
        assertFalse(TopicRules.of(List.of(filter)).isEmpty());
    }

    @ParameterizedTest
    @NullAndEmptySource
    void anEmptyRuleIsRefused(String filter) {
        assertEquals("a rule must not be empty", TopicRules.validate(filter));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "a/#/b       | '#' must be the last character",
        "a#          | '#' must be the last character",
        "a/b+        | '+' must occupy an entire level",
        "+a          | '+' must occupy an entire level",
        "a${clientid} | a placeholder must be a whole topic level",
        "a/${clientid}x/b | a placeholder must be a whole topic level",
        "a/x${username} | a placeholder must be a whole topic level",
        "a/${foo}    | unknown placeholder '${foo}'",
        "${CLIENTID}/x | unknown placeholder '${CLIENTID}'",
        "a/${}       | unknown placeholder '${}'",
        "a/${clientid | not closed with '}'",
        "$share/g/a  | a rule is a plain topic filter",
    })
    void invalidRulesGetAReasonThatNamesTheRule(String filter, String expected) {
        String reason = TopicRules.validate(filter);
        assertNotNull(reason, filter);
        assertTrue(reason.contains(expected), reason);
        assertTrue(reason.contains(filter), reason);
        assertFalse(reason.contains("\n"), reason);
    }

    @Test
    void aRuleWithNullCharacterOrTooLongIsRefused() {
        assertTrue(TopicRules.validate("a\u0000b").contains("U+0000"));
        String huge = "a".repeat(TopicNames.MAX_ENCODED_LENGTH + 1);
        String reason = TopicRules.validate(huge);
        assertTrue(reason.contains("more than the 65535 allowed"), reason);
        assertTrue(reason.length() < 300, "a long rule is shortened in the reason");
    }

    @Test
    void ofRefusesAnInvalidRuleWithItsReason() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> rules("ok/#", "a/${foo}"));
        assertTrue(e.getMessage().contains("unknown placeholder"), e.getMessage());
    }

    @Test
    void noRulesAllowNothing() {
        TopicRules none = TopicRules.of(List.of());
        assertTrue(none.isEmpty());
        assertFalse(none.allowsPublish("a", ID, USER));
        assertFalse(none.allowsSubscribe("a", ID, USER));
        assertTrue(TopicRules.NONE.isEmpty());
        assertEquals(List.of("a", "b/#"), rules("a", "b/#").filters());
    }

    // --- publish ---

    @ParameterizedTest(name = "rule {0}, topic {1}: {2}")
    @CsvSource({
        "a/b, a/b, true",
        "a/b, a/c, false",
        "a/b, a/b/c, false",
        "a/b, a, false",
        "a/+, a/b, true",
        "a/+, a/, true",
        "a/+, a, false",
        "a/+, a/b/c, false",
        "a/#, a, true",
        "a/#, a/b/c, true",
        "a/#, ab, false",
        "a/#, b/a, false",
        "#, a/b, true",
        "#, /, true",
        "+, a, true",
        "+, a/b, false",
        "+/+, /a, true",
        "#, $SYS/x, true",
        "+/#, $SYS/x, false",
        "+/x, $SYS/x, false",
        "+, $SYS, false",
        "$SYS/#, $SYS/x, true",
        "$SYS/#, $SYS, true",
        "a/+/$x, a/b/$x, true",
    })
    void publishMatchesLikeASubscriptionFilter(String rule, String topic, boolean allowed) {
        assertEquals(allowed, rules(rule).allowsPublish(topic, ID, USER));
    }

    @Test
    void anyOneRuleIsEnough() {
        TopicRules r = rules("x/y", "devices/${clientid}/#", "z");
        assertTrue(r.allowsPublish("z", ID, USER));
        assertTrue(r.allowsPublish("devices/dev-1/t", ID, USER));
        assertFalse(r.allowsPublish("devices/dev-2/t", ID, USER));
    }

    @Test
    void placeholdersAreReplacedByTheClientsValues() {
        TopicRules r = rules("devices/${clientid}/telemetry", "users/${username}/#");
        assertTrue(r.allowsPublish("devices/dev-1/telemetry", ID, USER));
        assertFalse(r.allowsPublish("devices/dev-2/telemetry", ID, USER));
        assertFalse(r.allowsPublish("devices/dev-10/telemetry", ID, USER));
        assertFalse(r.allowsPublish("devices/dev-/telemetry", ID, USER));
        assertFalse(r.allowsPublish("devices/${clientid}/telemetry", ID, USER));
        assertTrue(r.allowsPublish("users/alice", ID, USER));
        assertTrue(r.allowsPublish("users/alice/a/b", ID, USER));
        assertFalse(r.allowsPublish("users/bob/a", ID, USER));
        assertFalse(r.allowsPublish("users/alicex/a", ID, USER));
    }

    @ParameterizedTest
    @ValueSource(strings = {"+", "#", "a/b", "a+", "x#", "/", "a\u0000"})
    @DisplayName("a client ID or user name that is not one plain level matches nothing (no injection)")
    void injectedWildcardsAndLevelsMatchNothing(String value) {
        TopicRules r = rules("devices/${clientid}/telemetry", "users/${username}/in");
        assertFalse(r.allowsPublish("devices/" + "x" + "/telemetry", value, value));
        assertFalse(r.allowsPublish("devices/a/b/telemetry", value, value));
        assertFalse(r.allowsPublish("users/a/b/in", value, value));
        assertFalse(r.allowsSubscribe("devices/+/telemetry", value, value));
        assertFalse(r.allowsSubscribe("devices/#", value, value));
        assertFalse(r.allowsSubscribe("users/+/in", value, value));
    }

    @ParameterizedTest
    @ValueSource(strings = {"+", "#", "a/b", "/", "a+", "x#", "a\u0000b"})
    @NullAndEmptySource
    @DisplayName("values that cannot stand for one level are refused before any comparison")
    void unusableValues(String value) {
        assertNull(TopicRules.usableValue(value));
    }

    @ParameterizedTest
    @ValueSource(strings = {"dev-1", "$x", " ", "\u00e9t\u00e9", "a.b", "${clientid}"})
    void usableValues(String value) {
        assertEquals(value, TopicRules.usableValue(value));
    }

    @Test
    void aLevelInjectedThroughTheValueDoesNotMatchTheTopicItSpells() {
        TopicRules r = rules("devices/${clientid}/telemetry");
        assertFalse(r.allowsPublish("devices/a/b/telemetry", "a/b", USER));
        assertFalse(r.allowsSubscribe("devices/a/b/telemetry", "a/b", USER));
        TopicRules users = rules("${username}/in");
        assertFalse(users.allowsPublish("x/in", ID, "x/#"));
        assertFalse(users.allowsSubscribe("x/#", ID, "x/#"));
        assertFalse(users.allowsSubscribe("x/#/in", ID, "x/#"));
    }

    @Test
    void aMissingValueDisablesOnlyTheRulesThatUseIt() {
        TopicRules r = rules("users/${username}/#", "devices/${clientid}/#", "public/#");
        for (String missing : new String[] {null, ""}) {
            assertFalse(r.allowsPublish("users/x", ID, missing));
            assertFalse(r.allowsPublish("users/", ID, missing));
            assertFalse(r.allowsPublish("users//x", ID, missing));
            assertTrue(r.allowsPublish("devices/dev-1/x", ID, missing));
            assertTrue(r.allowsPublish("public/x", ID, missing));
            assertFalse(r.allowsPublish("devices/x", missing, USER));
            assertFalse(r.allowsPublish("devices//x", missing, USER));
            assertTrue(r.allowsPublish("users/alice/x", missing, USER));
        }
    }

    @Test
    void aPlaceholderInTheFirstLevelDoesNotLeadIntoDollarTopics() {
        TopicRules r = rules("${clientid}/#", "${username}/in");
        assertFalse(r.allowsPublish("$SYS/broker", "$SYS", USER));
        assertFalse(r.allowsSubscribe("$SYS/#", "$SYS", USER));
        assertFalse(r.allowsPublish("$x/in", ID, "$x"));
        assertTrue(r.allowsPublish("dev-1/a", ID, USER));
        // Further down a '$' value is an ordinary level.
        assertTrue(rules("d/${clientid}").allowsPublish("d/$x", "$x", USER));
    }

    @Test
    @DisplayName("a client without certificate has no common name: rules with ${cn} match nothing for it")
    void withoutACertificateTheCommonNamePlaceholderMatchesNothing() {
        TopicRules r = rules("certs/${cn}/#", "${cn}");
        assertFalse(r.isEmpty());
        assertFalse(r.allowsPublish("certs/x/y", "x", "x"));
        assertFalse(r.allowsPublish("certs/${cn}/y", ID, USER));
        assertFalse(r.allowsPublish("x", "x", "x"));
        assertFalse(r.allowsSubscribe("certs/x/#", "x", "x"));
    }

    @Test
    @DisplayName("${cn} is replaced by the certificate's common name, for publish and subscribe")
    void theCommonNamePlaceholderStandsForTheCertificatesName() {
        TopicRules r = rules("certs/${cn}/#", "fleet/${cn}/${clientid}");
        assertTrue(r.allowsPublish("certs/sensor-7/temp", ID, USER, "sensor-7"));
        assertTrue(r.allowsPublish("certs/sensor-7", ID, USER, "sensor-7"));
        assertFalse(r.allowsPublish("certs/sensor-8/temp", ID, USER, "sensor-7"));
        assertTrue(r.allowsPublish("fleet/sensor-7/dev-1", ID, USER, "sensor-7"));
        assertFalse(r.allowsPublish("fleet/sensor-7/dev-2", ID, USER, "sensor-7"));
        assertTrue(r.allowsSubscribe("certs/sensor-7/#", ID, USER, "sensor-7"));
        assertTrue(r.allowsSubscribe("$share/g/certs/sensor-7/+", ID, USER, "sensor-7"));
        assertFalse(r.allowsSubscribe("certs/+/#", ID, USER, "sensor-7"));
        // The user name and client ID do not stand in for a missing common name.
        assertFalse(r.allowsPublish("certs/alice/x", ID, USER, null));
        assertFalse(r.allowsPublish("certs/dev-1/x", ID, USER, null));
    }

    @ParameterizedTest
    @ValueSource(strings = {"a/+", "+", "#", "a/#", "", "x\u0000y"})
    @DisplayName("a common name with a separator or wildcard cannot widen a ${cn} rule")
    void aCommonNameCannotInjectWildcards(String cn) {
        TopicRules r = rules("certs/${cn}/#", "in/${cn}");
        assertFalse(r.allowsPublish("certs/a/b/c", ID, USER, cn));
        assertFalse(r.allowsPublish("certs/x/c", ID, USER, cn));
        assertFalse(r.allowsPublish("in/a", ID, USER, cn));
        assertFalse(r.allowsSubscribe("certs/#", ID, USER, cn));
        assertFalse(r.allowsSubscribe("certs/+/#", ID, USER, cn));
        assertFalse(r.allowsSubscribe("in/+", ID, USER, cn));
    }

    @Test
    @DisplayName("${cn} in the first level does not lead into '$' topics")
    void aCommonNameDoesNotLeadIntoDollarTopics() {
        TopicRules r = rules("${cn}/#");
        assertFalse(r.allowsPublish("$SYS/broker", ID, USER, "$SYS"));
        assertFalse(r.allowsSubscribe("$SYS/#", ID, USER, "$SYS"));
        assertTrue(r.allowsPublish("sensor-7/a", ID, USER, "sensor-7"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"a/+", "a/#", "#", "+"})
    void aTopicWithAWildcardIsNeverPublishable(String topic) {
        assertFalse(rules("#", "a/+").allowsPublish(topic, ID, USER));
    }

    @ParameterizedTest
    @NullAndEmptySource
    void noTopicIsNeverPublishable(String topic) {
        assertFalse(rules("#").allowsPublish(topic, ID, USER));
    }

    // --- subscribe ---

    @ParameterizedTest(name = "rule {0}, filter {1}: {2}")
    @CsvSource({
        "a/b, a/b, true",
        "a/b, a/+, false",
        "a/b, a/#, false",
        "a/b, a, false",
        "a/+, a/b, true",
        "a/+, a/+, true",
        "a/+, a/#, false",
        "a/+, +/b, false",
        "a/+, a, false",
        "a/+, a/b/c, false",
        "a/#, a, true",
        "a/#, a/#, true",
        "a/#, a/+/c, true",
        "a/#, a/b/c/d, true",
        "a/#, a/+, true",
        "a/#, #, false",
        "a/#, +/b, false",
        "a/#, b, false",
        "+/#, a/#, true",
        "+/#, #, true",
        "+/+/#, #, false",
        "/+/#, /#, true",
        "a/+/#, a/+, true",
        "a/+/#, a/#, false",
        "a/+/#, a/+/#, true",
        "+/+, +/+, true",
        "+/+, +/#, false",
        "+/+, +, false",
        "#, #, true",
        "#, +/+/#, true",
        "#, a/b, true",
        "#, /, true",
        "#, $SYS/x, true",
        "#, $SYS/#, true",
        "+/#, $SYS/#, false",
        "+/x, $SYS/x, false",
        "$SYS/#, $SYS/#, true",
        "$SYS/#, $SYS/+/x, true",
        "$SYS/#, #, false",
        "$SYS/+, $SYS/a, true",
    })
    void subscribeNeedsARuleCoveringTheWholeFilter(String rule, String filter, boolean allowed) {
        assertEquals(allowed, rules(rule).allowsSubscribe(filter, ID, USER));
    }

    @Test
    void subscribeWithPlaceholders() {
        TopicRules r = rules("devices/${clientid}/#", "${username}/+/in");
        assertTrue(r.allowsSubscribe("devices/dev-1/#", ID, USER));
        assertTrue(r.allowsSubscribe("devices/dev-1", ID, USER));
        assertTrue(r.allowsSubscribe("devices/dev-1/+/x", ID, USER));
        assertFalse(r.allowsSubscribe("devices/+/#", ID, USER));
        assertFalse(r.allowsSubscribe("devices/#", ID, USER));
        assertFalse(r.allowsSubscribe("devices/dev-2/#", ID, USER));
        assertTrue(r.allowsSubscribe("alice/x/in", ID, USER));
        assertTrue(r.allowsSubscribe("alice/+/in", ID, USER));
        assertFalse(r.allowsSubscribe("+/x/in", ID, USER));
        assertFalse(r.allowsSubscribe("alice/#", ID, USER));
        assertFalse(r.allowsSubscribe("alice/x/in", ID, null));
    }

    @Test
    void aSharedSubscriptionIsCheckedOnItsFilter() {
        TopicRules r = rules("jobs/+", "devices/${clientid}/#");
        assertTrue(r.allowsSubscribe("$share/workers/jobs/a", ID, USER));
        assertTrue(r.allowsSubscribe("$share/workers/jobs/+", ID, USER));
        assertFalse(r.allowsSubscribe("$share/workers/jobs/#", ID, USER));
        assertTrue(r.allowsSubscribe("$share/g/devices/dev-1/#", ID, USER));
        assertFalse(r.allowsSubscribe("$share/g/devices/dev-2/#", ID, USER));
        // The group is not part of the topic space the rules talk about.
        assertFalse(rules("g/#").allowsSubscribe("$share/g/x", ID, USER));
        assertTrue(rules("#").allowsSubscribe("$share/g/#", ID, USER));
        assertTrue(rules("#").allowsSubscribe("$share/$g/a", ID, USER));
        assertTrue(rules("#").allowsSubscribe("$share/g/$SYS/#", ID, USER), "'#' alone allows everything");
        assertFalse(rules("+/#").allowsSubscribe("$share/g/$SYS/#", ID, USER));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "a/#/b", "a+", "$share/", "$share/g", "$share//a", "$share/g/", "$share/g+/a",
        "a\u0000"})
    void anInvalidFilterIsNeverAllowed(String filter) {
        assertFalse(rules("#", "+", "a/#").allowsSubscribe(filter, ID, USER), filter);
    }

    @Test
    void aNullFilterIsNotAllowed() {
        assertFalse(rules("#").allowsSubscribe(null, ID, USER));
    }

    // --- agreement with the spec's matching, over a small universe ---

    private static final String[] FILTER_LEVELS = {"a", "$s", "", "+", "#"};
    private static final String[] TOPIC_LEVELS = {"a", "b", "$s", ""};

    private static List<String> all(String[] alphabet, int maxDepth, boolean filters) {
        List<String> out = new ArrayList<>();
        List<String> current = new ArrayList<>(List.of(alphabet));
        for (int depth = 1; depth <= maxDepth; depth++) {
            for (String s : current) {
                boolean valid = filters ? TopicRules.validate(s) == null : !s.isEmpty();
                if (valid) {
                    out.add(s);
                }
            }
            List<String> next = new ArrayList<>();
            for (String s : current) {
                for (String level : alphabet) {
                    next.add(s + "/" + level);
                }
            }
            current = next;
        }
        return out;
    }

    /** How a rule matches a topic: as a subscription filter, except that the rule '#' alone matches everything. */
    private static boolean ruleMatches(String rule, String topic) {
        return rule.equals("#") || TopicNames.matches(rule, topic);
    }

    @Test
    @DisplayName("publish agrees with TopicNames.matches for every rule and topic of a small universe")
    void publishAgreesWithTopicMatching() {
        List<String> filters = all(FILTER_LEVELS, 3, true);
        List<String> topics = all(TOPIC_LEVELS, 4, false);
        for (String filter : filters) {
            TopicRules r = rules(filter);
            for (String topic : topics) {
                assertEquals(ruleMatches(filter, topic), r.allowsPublish(topic, ID, USER),
                        () -> "rule " + filter + ", topic " + topic);
            }
        }
    }

    @Test
    @DisplayName("a placeholder behaves exactly like the literal level of its value")
    void placeholdersAgreeWithTheirLiteralValue() {
        List<String> filters = all(FILTER_LEVELS, 3, true);
        List<String> topics = all(TOPIC_LEVELS, 4, false);
        for (String literal : filters) {
            if (!List.of(TopicNames.levels(literal)).contains("a")) {
                continue;
            }
            String withId = String.join("/", List.of(TopicNames.levels(literal)).stream()
                    .map(level -> level.equals("a") ? "${clientid}" : level).toList());
            TopicRules expected = rules(literal);
            TopicRules actual = rules(withId);
            for (String topic : topics) {
                assertEquals(expected.allowsPublish(topic, "a", USER), actual.allowsPublish(topic, "a", USER),
                        () -> withId + " publish " + topic);
            }
            for (String filter : filters) {
                assertEquals(expected.allowsSubscribe(filter, "a", USER), actual.allowsSubscribe(filter, "a", USER),
                        () -> withId + " subscribe " + filter);
                assertFalse(actual.allowsSubscribe(filter, "a/+", USER));
            }
        }
    }

    @Test
    @DisplayName("subscribe is allowed exactly when every topic the filter matches is matched by the rule")
    void subscribeAgreesWithCoverageOverAllTopics() {
        List<String> filters = all(FILTER_LEVELS, 3, true);
        // One level deeper than any filter, so '#' and '+' meet topics no rule of this size covers.
        List<String> topics = all(TOPIC_LEVELS, 4, false);
        int allowed = 0;
        for (String rule : filters) {
            TopicRules r = rules(rule);
            for (String filter : filters) {
                boolean covered = true;
                for (String topic : topics) {
                    if (TopicNames.matches(filter, topic) && !ruleMatches(rule, topic)) {
                        covered = false;
                        break;
                    }
                }
                assertEquals(covered, r.allowsSubscribe(filter, ID, USER),
                        () -> "rule " + rule + ", filter " + filter);
                allowed += covered ? 1 : 0;
            }
        }
        assertTrue(allowed > filters.size(), "the universe exercises coverage beyond equality");
    }
}
