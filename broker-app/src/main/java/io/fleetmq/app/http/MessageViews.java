package io.fleetmq.app.http;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.UserProperty;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Locale;

/**
 * A message as JSON for an operator. The payload is shown as text when it is text: valid UTF-8,
 * and either marked so (Payload Format Indicator 1, or a textual Content Type such as text/* or
 * JSON), or, with neither property, free of control characters other than tab and line breaks.
 * Otherwise, and whenever the publisher marked it as bytes (indicator 0 without a textual content
 * type), it is base64. The {@code encoding} field says which, so no client has to guess.
 */
final class MessageViews {

    static final String UTF8 = "utf8";
    static final String BASE64 = "base64";

    private MessageViews() {
    }

    /**
     * @param payloadLimit payloads above this many bytes are left out ({@code payloadOmitted})
     */
    static RetainedModels.RetainedMessageView retained(BrokerMessage m, long nowMillis, int payloadLimit) {
        String text = asText(m);
        String encoding = text != null ? UTF8 : BASE64;
        boolean omitted = m.payload().length > payloadLimit;
        String payload = omitted ? null : text != null ? text : Base64.getEncoder().encodeToString(m.payload());
        return new RetainedModels.RetainedMessageView(m.topic(), m.qos(), m.payload().length, payload, encoding,
                omitted, properties(m, nowMillis), m.publisherId(), Instant.ofEpochMilli(m.createdAtMillis()));
    }

    static RetainedModels.RetainedProperties properties(BrokerMessage m, long nowMillis) {
        long left = m.remainingExpirySeconds(nowMillis);
        List<RetainedModels.MessageUserProperty> users = m.userProperties().stream()
                .map((UserProperty u) -> new RetainedModels.MessageUserProperty(u.name(), u.value())).toList();
        return new RetainedModels.RetainedProperties(m.contentType(),
                m.payloadFormat() == BrokerMessage.PAYLOAD_FORMAT_ABSENT ? null : m.payloadFormat(),
                left == BrokerMessage.NO_EXPIRY ? null : Math.max(0, left), m.responseTopic(),
                m.correlationData() == null ? null : Base64.getEncoder().encodeToString(m.correlationData()), users);
    }

    /** The payload as text by the rules above, or null if it is shown as base64. */
    static String asText(BrokerMessage m) {
        String text = utf8(m.payload());
        if (text == null) {
            return null;
        }
        if (m.payloadFormat() == BrokerMessage.PAYLOAD_FORMAT_UTF8 || textual(m.contentType())) {
            return text;
        }
        if (m.payloadFormat() == BrokerMessage.PAYLOAD_FORMAT_BYTES || m.contentType() != null) {
            return null;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isISOControl(c) && c != '\t' && c != '\n' && c != '\r') {
                return null;
            }
        }
        return text;
    }

    /** Whether a content type names text: text/*, JSON, XML, YAML, CSV, JavaScript, or one with a charset. */
    static boolean textual(String contentType) {
        if (contentType == null) {
            return false;
        }
        String t = contentType.toLowerCase(Locale.ROOT);
        return t.startsWith("text/") || t.contains("json") || t.contains("xml") || t.contains("yaml")
                || t.contains("csv") || t.contains("javascript") || t.contains("charset=");
    }

    /** The bytes as a string if they are valid UTF-8, else null. */
    static String utf8(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
