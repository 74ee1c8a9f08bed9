package io.fleetmq.app.security.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fleetmq.app.security.provider.AuthRequest;
import io.fleetmq.core.mqtt.ProtocolVersion;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** The JSON body that tells the service about one CONNECT. */
final class ConnectDocument {

    private ConnectDocument() {
    }

    /**
     * The body for {@code r}, or null when its password is not valid UTF-8: such a password cannot be
     * sent as a JSON string without changing it, and a lossy form could let a different password match.
     */
    static byte[] of(AuthRequest r) {
        String password = null;
        if (r.password() != null) {
            try {
                password = StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(r.password())).toString();
            } catch (CharacterCodingException e) {
                return null;
            }
        }
        ObjectNode doc = HttpAnswer.JSON.createObjectNode();
        doc.put("clientId", r.clientId());
        doc.put("username", r.username());
        doc.put("password", password);
        doc.put("address", r.address() == null ? null : r.address().getHostAddress());
        doc.put("commonName", r.commonName());
        doc.put("protocol", protocol(r.version()));
        doc.put("tls", r.tls());
        try {
            return HttpAnswer.JSON.writeValueAsBytes(doc);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a JSON tree of strings could not be written", e);
        }
    }

    static String protocol(ProtocolVersion version) {
        if (version == null) {
            return null;
        }
        return switch (version) {
            case V5 -> "MQTT 5";
            case V3_1_1 -> "MQTT 3.1.1";
            case V3_1 -> "MQTT 3.1";
        };
    }
}
