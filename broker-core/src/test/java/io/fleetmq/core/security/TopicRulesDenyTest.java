package io.fleetmq.core.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Deny rules ({@code !filter}): they win over allow rules, and fail closed. */
class TopicRulesDenyTest {

    private static TopicRules rules(String... filters) {
        return TopicRules.of(List.of(filters));
    }

    @ParameterizedTest
    @ValueSource(strings = {"!a", "!a/#", "!#", "!+/x", "!${clientid}/secret", "!$SYS/#"})
    void validDenyRules(String filter) {
        assertNull(TopicRules.validate(filter));
        assertTrue(TopicRules.of(List.of(filter)).hasDenyRules());
    }

    @Test
    void invalidDenyRulesAreRefusedWithTheirReason() {
        assertEquals("rule '!': a deny rule needs a topic filter after '!'", TopicRules.validate("!"));
        assertTrue(TopicRules.validate("!!a").contains("only one '!'"));
        assertTrue(TopicRules.validate("!a/#/b").contains("'#' must be the last character"));
        assertTrue(TopicRules.validate("!a${clientid}").contains("whole topic level"));
        assertTrue(TopicRules.validate("!$share/g/a").contains("plain topic filter"));
        assertThrows(IllegalArgumentException.class, () -> rules("#", "!a/#/b"));
    }

    @Test
    void denyOnlyAllowsNothing() {
        TopicRules r = rules("!secret/#");
        assertTrue(r.isEmpty());
        assertFalse(r.allowsPublish("public", "c", "u"));
        assertFalse(r.allowsSubscribe("public", "c", "u"));
    }

    @Test
    void denyWinsOverAllowWhateverTheOrder() {
        for (TopicRules r : List.of(rules("#", "!secret/#"), rules("!secret/#", "#"))) {
            assertTrue(r.allowsPublish("public/x", "c", "u"));
            assertFalse(r.allowsPublish("secret", "c", "u"));
            assertFalse(r.allowsPublish("secret/a/b", "c", "u"));
            assertTrue(r.allowsPublish("secrets", "c", "u"));
        }
    }

    @ParameterizedTest(name = "deny {0}, subscribe {1}: {2}")
    @CsvSource(delimiter = '|', value = {
        "secret/#  | #           | false",
        "secret/#  | +/x         | false",
        "secret/#  | secret      | false",
        "secret/#  | public/#    | true",
        "secret/#  | +           | false",
        "secret/a  | secret/+    | false",
        "secret/a  | secret/b    | true",
        "secret/a  | secret/a/b  | true",
        "secret/a  | secret/a/#  | false",
        "a/+/c     | a/b/#       | false",
        "a/+/c     | a/b/d       | true",
        "a/+/c     | a/b         | true",
        "+/x       | $SYS/x      | true",
        "$SYS/#    | #           | true",
        "$SYS/#    | +/x         | true",
        "$SYS/#    | $SYS/load   | false",
        "#         | $SYS/load   | false",
        "#         | anything    | false",
        "a         | a/#         | false",
        "a/b       | a/#         | false",
    })
    void subscriptionsOverlappingADenyRuleAreRefused(String deny, String filter, boolean allowed) {
        TopicRules r = rules("#", "!" + deny);
        assertEquals(allowed, r.allowsSubscribe(filter, "c", "u"));
        assertEquals(allowed, r.allowsSubscribe("$share/g/" + filter, "c", "u"));
    }

    @Test
    void placeholdersInDenyRulesUseTheClientsValues() {
        TopicRules r = rules("devices/#", "!devices/${clientid}/config");
        assertFalse(r.allowsPublish("devices/dev-1/config", "dev-1", "u"));
        assertTrue(r.allowsPublish("devices/dev-2/config", "dev-1", "u"));
        assertFalse(r.allowsSubscribe("devices/+/config", "dev-1", "u"));
        assertTrue(r.allowsSubscribe("devices/dev-2/config", "dev-1", "u"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "a/b", "+", "#"})
    void aDenyPlaceholderWithAnUnusableValueFailsClosed(String username) {
        TopicRules r = rules("#", "!${username}/private/#");
        assertFalse(r.allowsPublish("anyone/private/x", "c", username));
        assertFalse(r.allowsSubscribe("anyone/private/#", "c", username));
        assertTrue(r.allowsPublish("anyone/public", "c", username));
        assertFalse(rules("#", "!${username}/private/#").allowsPublish("x/private", "c", null));
    }

    @Test
    void aDollarValueInTheFirstLevelFailsClosedToo() {
        TopicRules r = rules("#", "!${clientid}/cmd");
        assertFalse(r.allowsPublish("$SYS/cmd", "$SYS", "u"));
        assertFalse(r.allowsPublish("other/cmd", "$SYS", "u"));
        assertTrue(r.allowsPublish("other/cmd", "dev", "u"));
    }

    @Test
    void filtersKeepTheirWrittenForm() {
        assertEquals(List.of("#", "!a/#"), rules("#", "!a/#").filters());
    }
}
