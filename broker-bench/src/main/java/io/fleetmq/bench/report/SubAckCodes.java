package io.fleetmq.bench.report;

import io.fleetmq.bench.client.Protocol;
import java.util.Map;

/** Names of SUBACK failure codes: MQTT 5 reason codes, or 3.1.1's single 0x80. */
public final class SubAckCodes {

    // MQTT 5 section 3.9.3
    private static final Map<Integer, String> MQTT_5 = Map.of(
            0x80, "unspecified error", 0x83, "implementation specific error", 0x87, "not authorized",
            0x8F, "topic filter invalid", 0x91, "packet identifier in use", 0x97, "quota exceeded",
            0x9E, "shared subscriptions not supported", 0xA1, "subscription identifiers not supported",
            0xA2, "wildcard subscriptions not supported");

    private SubAckCodes() {
    }

    /** {@code 0x87 not authorized}; 3.1.1 has only {@code 0x80 failure}. */
    public static String describe(Protocol protocol, int code) {
        String name = protocol == Protocol.MQTT_5 ? MQTT_5.get(code) : code == 0x80 ? "failure" : null;
        return ConnAckCodes.hex(code) + (name == null ? "" : " " + name);
    }
}
