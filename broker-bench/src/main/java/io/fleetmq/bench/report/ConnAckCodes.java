package io.fleetmq.bench.report;

import io.fleetmq.bench.client.Protocol;
import java.util.Locale;
import java.util.Map;

/** Names of CONNACK refusal codes, which differ between MQTT 5 (reason codes) and 3.1.1 (return codes). */
public final class ConnAckCodes {

    // MQTT 5 section 3.2.2.2
    private static final Map<Integer, String> MQTT_5 = Map.ofEntries(
            Map.entry(0x80, "unspecified error"), Map.entry(0x81, "malformed packet"),
            Map.entry(0x82, "protocol error"), Map.entry(0x83, "implementation specific error"),
            Map.entry(0x84, "unsupported protocol version"), Map.entry(0x85, "client identifier not valid"),
            Map.entry(0x86, "bad user name or password"), Map.entry(0x87, "not authorized"),
            Map.entry(0x88, "server unavailable"), Map.entry(0x89, "server busy"), Map.entry(0x8A, "banned"),
            Map.entry(0x8C, "bad authentication method"), Map.entry(0x90, "topic name invalid"),
            Map.entry(0x95, "packet too large"), Map.entry(0x97, "quota exceeded"),
            Map.entry(0x99, "payload format invalid"), Map.entry(0x9A, "retain not supported"),
            Map.entry(0x9B, "QoS not supported"), Map.entry(0x9C, "use another server"),
            Map.entry(0x9D, "server moved"), Map.entry(0x9F, "connection rate exceeded"));
    // MQTT 3.1.1 table 3.1
    private static final Map<Integer, String> MQTT_3_1_1 = Map.of(
            1, "unacceptable protocol version", 2, "identifier rejected", 3, "server unavailable",
            4, "bad user name or password", 5, "not authorized");

    private ConnAckCodes() {
    }

    /** {@code 0x86 bad user name or password}; codes the protocol does not define show as just the number. */
    public static String describe(Protocol protocol, int code) {
        String name = (protocol == Protocol.MQTT_5 ? MQTT_5 : MQTT_3_1_1).get(code);
        return hex(code) + (name == null ? "" : " " + name);
    }

    /** {@code 0x86}: the JSON key of a code. */
    public static String hex(int code) {
        return String.format(Locale.ROOT, "0x%02X", code);
    }
}
