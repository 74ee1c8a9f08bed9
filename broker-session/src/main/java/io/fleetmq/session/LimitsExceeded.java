package io.fleetmq.session;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The counter of requests refused (or cut down) because they went beyond a configured limit:
 * {@code fleetmq_limit_exceeded_total{limit="..."}}, one series per limit.
 */
public final class LimitsExceeded {

    public static final String METER = "fleetmq.limit.exceeded";

    public static final String RETAINED_MESSAGES = "retained_messages";
    public static final String RETAINED_BYTES = "retained_bytes";
    public static final String APPLICATION_SESSIONS = "application_sessions";
    public static final String SUBSCRIPTIONS = "subscriptions";

    private LimitsExceeded() {
    }

    public static Counter counter(MeterRegistry meters, String limit) {
        return Counter.builder(METER).description("Requests refused or cut down because they went beyond a limit")
                .tag("limit", limit).register(meters);
    }

    public static void count(MeterRegistry meters, String limit) {
        counter(meters, limit).increment();
    }
}
