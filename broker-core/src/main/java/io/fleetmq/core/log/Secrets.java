package io.fleetmq.core.log;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Masks credentials in text bound for logs, health output and error messages. Connection strings
 * reach those places through exception messages of drivers and clients as much as through the
 * broker's own messages, so the mask is applied to the finished text rather than to one field.
 */
public final class Secrets {

    /** What stands in for a removed secret. */
    public static final String MASK = "****";

    /** {@code scheme://user:password@}: the user stays, the password goes. */
    private static final Pattern USERINFO = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*://)([^:/@\\s]*):([^@/\\s]*)@");
    /** {@code password=...} in a query string or key=value list, as JDBC URLs and properties carry it. */
    private static final Pattern PASSWORD_PARAM = Pattern.compile(
            "(?i)((?:password|passwd|pwd|secret|token)\\s*=\\s*)([^&;,\\s\"']+)");

    private Secrets() {
    }

    /** {@code text} with every password in a URL's user info or a {@code password=} parameter masked; null stays null. */
    public static String mask(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String out = USERINFO.matcher(text).replaceAll(m -> Matcher.quoteReplacement(
                m.group(1) + m.group(2) + (m.group(3).isEmpty() ? "" : ":" + MASK) + "@"));
        return PASSWORD_PARAM.matcher(out).replaceAll(m -> Matcher.quoteReplacement(m.group(1) + MASK));
    }
}
