package io.fleetmq.core.retained;

import io.fleetmq.core.message.BrokerMessage;
import java.nio.charset.StandardCharsets;

/**
 * The bytes a retained message counts for against the cluster's retained-bytes limit: its payload
 * and its topic name in UTF-8. Properties are left out; they are bounded per packet elsewhere.
 */
public final class RetainedWeight {

    private RetainedWeight() {
    }

    public static long of(BrokerMessage message) {
        return (long) message.payload().length + message.topic().getBytes(StandardCharsets.UTF_8).length;
    }
}
