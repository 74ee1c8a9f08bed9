package io.fleetmq.bench.client;

import io.netty.handler.codec.mqtt.MqttVersion;
import java.util.Locale;

/** The MQTT protocol level a run speaks; every client of a run uses the same one. */
public enum Protocol {
    MQTT_3_1_1("3.1.1", MqttVersion.MQTT_3_1_1),
    MQTT_5("5", MqttVersion.MQTT_5);

    private final String label;
    private final MqttVersion version;

    Protocol(String label, MqttVersion version) {
        this.label = label;
        this.version = version;
    }

    /** The name used on the command line and in reports: {@code 5} or {@code 3.1.1}. */
    public String label() {
        return label;
    }

    public MqttVersion version() {
        return version;
    }

    /** Accepts {@code 5}, {@code 5.0}, {@code 3.1.1} and {@code 311}, the spellings people type. */
    public static Protocol parse(String text) {
        return switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "5", "5.0", "mqtt5" -> MQTT_5;
            case "3.1.1", "311", "mqtt3.1.1" -> MQTT_3_1_1;
            default -> throw new IllegalArgumentException("unknown protocol '" + text + "': use 5 or 3.1.1");
        };
    }
}
