package io.fleetmq.app.security;

import io.fleetmq.core.mqtt.ReasonCode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;

/**
 * {@code fleetmq_auth_results_total{provider,result}}: the CONNECTs (and SCRAM exchanges) each
 * authentication provider decided, as {@code allowed}, {@code denied} or {@code unavailable} (the
 * provider could not decide: its service or database away, or the node too busy). Provider
 * {@code anonymous} counts CONNECTs no provider took, {@code blocklist} those refused as blocked,
 * and {@code none} those refused before any provider answered. Both tags are fixed sets, every
 * counter registered up front.
 */
final class AuthMeters {

    /** The providers the broker ships, then the pseudo-providers; anything else counts as {@code other}. */
    static final List<String> PROVIDERS = List.of("basic", "scram", "x509", "http", "jwt", "anonymous", "blocklist",
            "none", "other");

    enum Result {
        ALLOWED, DENIED, UNAVAILABLE
    }

    private final Counter[][] counters = new Counter[PROVIDERS.size()][Result.values().length];

    AuthMeters(MeterRegistry meters) {
        for (int p = 0; p < PROVIDERS.size(); p++) {
            for (Result r : Result.values()) {
                counters[p][r.ordinal()] = Counter.builder("fleetmq.auth.results")
                        .description("Authentication decisions by provider and result")
                        .tag("provider", PROVIDERS.get(p)).tag("result", r.name().toLowerCase(java.util.Locale.ROOT))
                        .register(meters);
            }
        }
    }

    void allowed(String provider) {
        count(provider, Result.ALLOWED);
    }

    /** A refusal with {@code code}: 0x88 Server unavailable and 0x89 Server busy count as unavailable. */
    void refused(String provider, ReasonCode code) {
        count(provider, code == ReasonCode.SERVER_UNAVAILABLE || code == ReasonCode.SERVER_BUSY
                ? Result.UNAVAILABLE : Result.DENIED);
    }

    private void count(String provider, Result result) {
        int p = PROVIDERS.indexOf(provider); // a handful of entries: cheaper than hashing, once per CONNECT
        counters[p < 0 ? PROVIDERS.size() - 1 : p][result.ordinal()].increment();
    }
}
