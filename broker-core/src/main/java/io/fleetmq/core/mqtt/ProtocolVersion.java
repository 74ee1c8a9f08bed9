package io.fleetmq.core.mqtt;

/** The protocol level of a CONNECT: 3 is MQTT 3.1, 4 is 3.1.1, 5 is MQTT 5.0. */
public enum ProtocolVersion {
    V3_1(3),
    V3_1_1(4),
    V5(5);

    private final int level;

    ProtocolVersion(int level) {
        this.level = level;
    }

    public int level() {
        return level;
    }

    public boolean isV5() {
        return this == V5;
    }

    /** The version of a protocol level, or null if the broker does not speak it. */
    public static ProtocolVersion ofLevel(int level) {
        return switch (level) {
            case 3 -> V3_1;
            case 4 -> V3_1_1;
            case 5 -> V5;
            default -> null;
        };
    }
}
