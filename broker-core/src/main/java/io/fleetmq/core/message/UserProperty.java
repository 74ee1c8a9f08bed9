package io.fleetmq.core.message;

/** An MQTT 5 user property: a name/value pair, order-preserving, names may repeat [MQTT-3.3.2-18]. */
public record UserProperty(String name, String value) {
}
