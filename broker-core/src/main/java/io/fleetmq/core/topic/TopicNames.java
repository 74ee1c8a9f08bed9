package io.fleetmq.core.topic;

import static io.fleetmq.core.topic.InvalidTopicException.TOPIC_FILTER_INVALID;
import static io.fleetmq.core.topic.InvalidTopicException.TOPIC_NAME_INVALID;

import java.util.Objects;

/**
 * The rules for topic names and topic filters (MQTT 5.0 section 4.7), in one place so that the
 * codec, the session, the subscription trie and the retained index all agree on them.
 *
 * <p>Validation and matching work on the Java string without encoding it: a topic arrives
 * decoded from the packet, and the spec forbids any normalisation before matching
 * [MQTT-4.7.3-4], so comparing UTF-16 code units is the same as comparing the encoded bytes.
 */
public final class TopicNames {

    /** Topic level separator. */
    public static final char SEPARATOR = '/';
    /** Single-level wildcard. */
    public static final char SINGLE_LEVEL = '+';
    /** Multi-level wildcard. */
    public static final char MULTI_LEVEL = '#';

    /** Largest UTF-8 encoded length of a topic name or filter, in bytes [MQTT-4.7.3-3]. */
    public static final int MAX_ENCODED_LENGTH = 65_535;

    private TopicNames() {
    }

    /**
     * Checks a topic name as sent in PUBLISH or as a will topic.
     *
     * @throws InvalidTopicException with {@link InvalidTopicException#TOPIC_NAME_INVALID}
     */
    public static void validateTopicName(String name) {
        Objects.requireNonNull(name, "name");
        checkCommon(name, "topic name", TOPIC_NAME_INVALID);
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == SINGLE_LEVEL || c == MULTI_LEVEL) {
                // [MQTT-4.7.0-1] [MQTT-3.3.2-2]
                throw new InvalidTopicException(TOPIC_NAME_INVALID,
                        "topic name must not contain the wildcard '" + c + "' (at index " + i + ")");
            }
        }
    }

    /**
     * Checks a topic filter as sent in SUBSCRIBE or UNSUBSCRIBE. A shared subscription
     * ({@code $share/group/filter}) is split by {@link SharedSubscription#parse} first; given here
     * unsplit, it is checked as the plain filter it also is.
     *
     * @throws InvalidTopicException with {@link InvalidTopicException#TOPIC_FILTER_INVALID}
     */
    public static void validateTopicFilter(String filter) {
        Objects.requireNonNull(filter, "filter");
        checkCommon(filter, "topic filter", TOPIC_FILTER_INVALID);
        int levelStart = 0;
        for (int i = 0; i < filter.length(); i++) {
            char c = filter.charAt(i);
            if (c == SEPARATOR) {
                levelStart = i + 1;
            } else if (c == MULTI_LEVEL) {
                if (i != levelStart || i != filter.length() - 1) {
                    // [MQTT-4.7.1-1]
                    throw new InvalidTopicException(TOPIC_FILTER_INVALID,
                            "'#' must be the last character of the topic filter and alone in its level"
                                    + " (at index " + i + ")");
                }
            } else if (c == SINGLE_LEVEL) {
                boolean levelEnds = i + 1 == filter.length() || filter.charAt(i + 1) == SEPARATOR;
                if (i != levelStart || !levelEnds) {
                    // [MQTT-4.7.1-2]
                    throw new InvalidTopicException(TOPIC_FILTER_INVALID,
                            "'+' must occupy an entire level of the topic filter (at index " + i + ")");
                }
            }
        }
    }

    /** Whether the filter contains {@code +} or {@code #}, i.e. may match more than one topic. */
    public static boolean hasWildcard(String filter) {
        return filter.indexOf(SINGLE_LEVEL) >= 0 || filter.indexOf(MULTI_LEVEL) >= 0;
    }

    /**
     * Splits at every separator, keeping empty levels: {@code "/a/"} has the three levels
     * {@code "", "a", ""}. Empty levels are real levels that {@code +} matches.
     */
    public static String[] levels(String topicOrFilter) {
        // A one-character, non-regex separator takes String.split's fast path.
        return topicOrFilter.split("/", -1);
    }

    /**
     * Whether the topic name matches the filter. Both are assumed valid (see the validate
     * methods); the result for invalid input is unspecified. Runs without allocating.
     */
    public static boolean matches(String filter, String topicName) {
        if (startsWithWildcard(filter) && topicName.startsWith("$")) {
            return false; // [MQTT-4.7.2-1]
        }
        int f = 0;
        int t = 0;
        int filterLength = filter.length();
        int topicLength = topicName.length();
        while (true) {
            // f and t are at the start of a level in each string.
            if (f < filterLength && filter.charAt(f) == MULTI_LEVEL) {
                return true; // '#' matches the remaining levels, however many.
            }
            if (f < filterLength && filter.charAt(f) == SINGLE_LEVEL) {
                f++;
                while (t < topicLength && topicName.charAt(t) != SEPARATOR) {
                    t++;
                }
            } else {
                while (f < filterLength && filter.charAt(f) != SEPARATOR) {
                    if (t == topicLength || topicName.charAt(t) != filter.charAt(f)) {
                        return false;
                    }
                    f++;
                    t++;
                }
                if (t < topicLength && topicName.charAt(t) != SEPARATOR) {
                    return false; // the topic's level is longer than the filter's
                }
            }
            // Both are at the end of a level.
            if (f == filterLength) {
                return t == topicLength;
            }
            if (t == topicLength) {
                // The filter goes on where the topic stops: only "/#" still matches, because '#'
                // includes the parent level ("sport/#" matches "sport").
                return f + 2 == filterLength && filter.charAt(f + 1) == MULTI_LEVEL;
            }
            f++;
            t++;
        }
    }

    private static boolean startsWithWildcard(String filter) {
        return !filter.isEmpty()
                && (filter.charAt(0) == SINGLE_LEVEL || filter.charAt(0) == MULTI_LEVEL);
    }

    /** The rules names and filters share: length, no U+0000, well-formed UTF-16 so UTF-8 exists. */
    private static void checkCommon(String s, String what, int reasonCode) {
        if (s.isEmpty()) {
            // [MQTT-4.7.3-1]
            throw new InvalidTopicException(reasonCode, what + " must be at least one character long");
        }
        long encodedLength = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\u0000') {
                // [MQTT-4.7.3-2]
                throw new InvalidTopicException(reasonCode,
                        what + " must not contain the null character U+0000 (at index " + i + ")");
            }
            if (c < 0x80) {
                encodedLength += 1;
            } else if (c < 0x800) {
                encodedLength += 2;
            } else if (Character.isHighSurrogate(c)
                    && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                encodedLength += 4;
                i++;
            } else if (Character.isSurrogate(c)) {
                // A lone surrogate has no UTF-8 encoding [MQTT-1.5.4-1].
                throw new InvalidTopicException(reasonCode,
                        what + " contains an unpaired surrogate (at index " + i + ")");
            } else {
                encodedLength += 3;
            }
        }
        if (encodedLength > MAX_ENCODED_LENGTH) {
            // [MQTT-4.7.3-3]
            throw new InvalidTopicException(reasonCode, what + " encodes to " + encodedLength
                    + " bytes of UTF-8, more than the " + MAX_ENCODED_LENGTH + " allowed");
        }
    }
}
