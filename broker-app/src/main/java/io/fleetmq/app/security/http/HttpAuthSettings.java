package io.fleetmq.app.security.http;

import io.fleetmq.app.config.ConfigException;
import io.fleetmq.app.config.Settings;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The {@code http} provider's settings (section {@code auth.http} of fleetmq.yml).
 *
 * @param url           where CONNECTs are POSTed; null when not set (then the provider cannot be listed)
 * @param headers       static headers sent with every request, in order (say, the service's own credential)
 * @param timeout       connecting plus waiting for the whole answer
 * @param maxConcurrent requests in flight at once; beyond, a CONNECT is answered as if the service were down
 * @param cacheTtl      how long an allow or deny answer is reused for an identical CONNECT; zero: never
 * @param failOpen      when the service is down, pass the CONNECT on (true) instead of refusing it with 0x88
 */
public record HttpAuthSettings(URI url, List<Header> headers, Duration timeout, int maxConcurrent, Duration cacheTtl,
        boolean failOpen) {

    /** One static header. Its value is often a secret: never printed. */
    public record Header(String name, String value) {
        @Override
        public String toString() {
            return name + ": ***";
        }
    }

    /** An HTTP header name (RFC 9110 token). */
    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

    public HttpAuthSettings {
        headers = List.copyOf(headers);
    }

    public static HttpAuthSettings from(Settings s) {
        URI url = url(s);
        if (url == null && listed(s)) {
            throw new ConfigException("setting " + s.describe("auth.http.url")
                    + " is required when setting auth.providers (AUTH_PROVIDERS) lists http");
        }
        Duration timeout = s.duration("auth.http.timeout");
        if (timeout.isZero()) {
            throw s.invalid("auth.http.timeout", s.string("auth.http.timeout"), "must be greater than zero");
        }
        String fail = s.string("auth.http.fail").toLowerCase(Locale.ROOT);
        boolean failOpen = switch (fail) {
            case "closed" -> false;
            case "open" -> true;
            default -> throw s.invalid("auth.http.fail", fail, "must be closed or open");
        };
        return new HttpAuthSettings(url, headers(s), timeout, s.integer("auth.http.max-concurrent", 1, 100_000),
                s.duration("auth.http.cache-ttl"), failOpen);
    }

    /** Whether {@code auth.providers} names http (its spelling is checked with the other providers). */
    private static boolean listed(Settings s) {
        for (String name : s.string("auth.providers").split(",")) {
            if (name.strip().equalsIgnoreCase("http")) {
                return true;
            }
        }
        return false;
    }

    private static URI url(Settings s) {
        String raw = s.string("auth.http.url");
        if (raw.isEmpty()) {
            return null;
        }
        URI url;
        try {
            url = new URI(raw);
        } catch (URISyntaxException e) {
            throw s.invalid("auth.http.url", raw, "is not a URL: " + e.getReason());
        }
        String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https") || url.getHost() == null) {
            throw s.invalid("auth.http.url", raw, "must be an http:// or https:// URL with a host");
        }
        if (url.getRawUserInfo() != null) {
            // The JDK client would ignore it: a credential belongs in auth.http.headers.
            throw new ConfigException("setting " + s.describe("auth.http.url")
                    + " must not carry a user name or password; send one in auth.http.headers (AUTH_HTTP_HEADERS)");
        }
        return url;
    }

    /**
     * {@code Name: value} entries. Separated by newlines when the setting holds any (then values may
     * contain commas), else by commas. Errors never repeat a value: it is usually a secret.
     */
    private static List<Header> headers(Settings s) {
        String raw = s.string("auth.http.headers");
        List<Header> headers = new ArrayList<>();
        String separator = raw.contains("\n") ? "\\r?\\n" : ",";
        int n = 0;
        for (String entry : raw.split(separator)) {
            n++;
            if (entry.isBlank()) {
                continue;
            }
            int colon = entry.indexOf(':');
            String name = colon < 0 ? "" : entry.substring(0, colon).strip();
            if (!TOKEN.matcher(name).matches()) {
                throw new ConfigException("setting " + s.describe("auth.http.headers") + ": entry " + n
                        + " is not 'Name: value'");
            }
            String value = entry.substring(colon + 1).strip();
            try {
                HttpRequest.newBuilder().header(name, value); // the JDK's own checks (restricted names, bad characters)
            } catch (IllegalArgumentException e) {
                throw new ConfigException("setting " + s.describe("auth.http.headers") + ": header " + name
                        + " cannot be set (a name the HTTP client manages itself, or a value with control characters)");
            }
            headers.add(new Header(name, value));
        }
        return headers;
    }
}
