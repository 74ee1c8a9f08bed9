package io.fleetmq.app.security.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fleetmq.core.security.TopicRules;
import java.io.IOException;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What the service answered to one CONNECT, read from the HTTP status and body. Pure: the provider
 * turns it into a decision and a metric.
 */
sealed interface HttpAnswer {

    /** Let in with these rights. */
    record Allow(String clientType, List<String> publish, List<String> subscribe, Instant expiresAt)
            implements HttpAnswer {
    }

    /** Refused: bad credentials. */
    record Deny() implements HttpAnswer {
    }

    /** Not the service's client: the next provider decides. */
    record Ignore() implements HttpAnswer {
    }

    /** An allow the broker cannot apply (a bad rule, client type or expiry): refused as a deny. */
    record Invalid(String why) implements HttpAnswer {
    }

    /** Not an answer at all (another status, a body that is not the expected JSON): the service is down. */
    record Malformed(String why) implements HttpAnswer {
    }

    ObjectMapper JSON = new ObjectMapper();

    /**
     * Reads an answer. 200 carries the decision in its body; 204 is an allow without rules, the
     * same as 200 {@code {"result": "allow"}}; anything else is not an answer.
     *
     * @param now what {@code expiresAt} is compared with
     */
    static HttpAnswer read(int status, byte[] body, Instant now) {
        if (status == 204) {
            return new Allow(null, List.of(), List.of(), null);
        }
        if (status != 200) {
            return new Malformed("status " + status);
        }
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (JsonProcessingException e) {
            return new Malformed("body is not JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            return new Malformed("body is not JSON: " + e.getMessage());
        }
        if (root == null || !root.isObject()) {
            return new Malformed("body is not a JSON object");
        }
        JsonNode result = root.get("result");
        if (result == null || !result.isTextual()) {
            return new Malformed("no \"result\" string");
        }
        return switch (result.asText()) {
            case "allow" -> allow(root, now);
            case "deny" -> new Deny();
            case "ignore" -> new Ignore();
            default -> new Malformed("\"result\" is '" + shorten(result.asText())
                    + "', not allow, deny or ignore");
        };
    }

    private static HttpAnswer allow(JsonNode root, Instant now) {
        String clientType = null;
        JsonNode type = root.get("clientType");
        if (type != null && !type.isNull()) {
            clientType = type.isTextual() ? type.asText().toUpperCase(Locale.ROOT) : "";
            if (!clientType.equals("DEVICE") && !clientType.equals("APPLICATION")) {
                return new Invalid("\"clientType\" must be DEVICE, APPLICATION or absent");
            }
        }
        List<String> publish = new ArrayList<>();
        String problem = rules(root, "publish", publish);
        if (problem == null) {
            List<String> subscribe = new ArrayList<>();
            problem = rules(root, "subscribe", subscribe);
            if (problem == null) {
                Instant expiresAt;
                try {
                    expiresAt = expiresAt(root.get("expiresAt"));
                } catch (DateTimeException | ArithmeticException e) {
                    return new Invalid("\"expiresAt\" must be an ISO-8601 time with offset, or epoch seconds");
                }
                if (expiresAt != null && !expiresAt.isAfter(now)) {
                    return new Invalid("\"expiresAt\" " + expiresAt + " has passed (clocks apart?)");
                }
                return new Allow(clientType, publish, subscribe, expiresAt);
            }
        }
        return new Invalid(problem);
    }

    /** Reads the list {@code field} into {@code into}; null if it is absent or valid, else why not. */
    private static String rules(JsonNode root, String field, List<String> into) {
        JsonNode list = root.get(field);
        if (list == null || list.isNull()) {
            return null;
        }
        if (!list.isArray()) {
            return "\"" + field + "\" must be a list of topic filters";
        }
        for (JsonNode rule : list) {
            if (!rule.isTextual()) {
                return "\"" + field + "\" must be a list of topic filters";
            }
            String problem = TopicRules.validate(rule.asText());
            if (problem != null) {
                return "\"" + field + "\": " + problem;
            }
            into.add(rule.asText());
        }
        return null;
    }

    private static Instant expiresAt(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        if (node.isIntegralNumber() && node.canConvertToLong()) {
            return Instant.ofEpochSecond(node.asLong());
        }
        if (node.isTextual()) {
            return OffsetDateTime.parse(node.asText()).toInstant();
        }
        throw new DateTimeException("not a time");
    }

    private static String shorten(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...";
    }
}
