package io.fleetmq.core.message;

import java.util.Objects;

/**
 * One MQTT 5 user property of a PUBLISH. Names may repeat and their order is significant, so a
 * message carries a list of these rather than a map [MQTT-3.3.2-17, MQTT-3.3.2-18].
 */
public record UserProperty(String name, String value) {

    public UserProperty {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
    }
}
