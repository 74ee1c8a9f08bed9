package io.fleetmq.core.log;

/**
 * Makes text a client chose (client IDs, topics, user names) safe to put in a log line: at most
 * {@link #MAX_LENGTH} characters, and control characters escaped so a client cannot forge log lines
 * with line breaks or hide text with terminal escapes or bidi overrides. MQTT allows 65,535-byte strings with almost any
 * character, and these values end up in files that operators read.
 */
public final class ClientText {

    /** Characters kept of one value; the rest is replaced by a count. */
    public static final int MAX_LENGTH = 128;

    private ClientText() {
    }

    /** {@code value} truncated and escaped; {@code "null"} for null, as a log placeholder would print it. */
    public static String of(Object value) {
        if (value == null) {
            return "null";
        }
        String s = value.toString();
        int limit = Math.min(s.length(), MAX_LENGTH);
        if (limit < s.length() && Character.isHighSurrogate(s.charAt(limit - 1))) {
            limit--; // never split a surrogate pair
        }
        StringBuilder out = null;
        for (int i = 0; i < limit; i++) {
            char c = s.charAt(i);
            // Format characters (bidi overrides, zero-width) can make a line read differently than it is.
            boolean control = Character.isISOControl(c) || c == '\u2028' || c == '\u2029'
                    || Character.getType(c) == Character.FORMAT;
            if (control && out == null) {
                out = new StringBuilder(limit + 16).append(s, 0, i);
            }
            if (out != null) {
                if (!control) {
                    out.append(c);
                } else if (c == '\n') {
                    out.append("\\n");
                } else if (c == '\r') {
                    out.append("\\r");
                } else if (c == '\t') {
                    out.append("\\t");
                } else {
                    out.append(String.format("\\u%04x", (int) c));
                }
            }
        }
        String kept = out != null ? out.toString() : s.substring(0, limit);
        return limit < s.length() ? kept + "...(" + (s.length() - limit) + " more)" : kept;
    }
}
