package io.fleetmq.core.security.scram;

import java.util.Locale;

/**
 * The hash functions SCRAM is offered with: SCRAM-SHA-256 (RFC 7677) and SCRAM-SHA-512. The
 * default iteration counts are what a credential is derived with when the admin API stores it:
 * 4096 for SHA-256, the minimum RFC 7677 asks for, and 10,000 for SHA-512, as the SCRAM-SHA-512
 * draft (draft-melnikov-scram-sha-512) recommends.
 */
public enum ScramAlgorithm {
    SHA_256("SHA-256", "SCRAM-SHA-256", "HmacSHA256", 4096),
    SHA_512("SHA-512", "SCRAM-SHA-512", "HmacSHA512", 10_000);

    private final String apiName;
    private final String mechanism;
    private final String hmac;
    private final int defaultIterations;

    ScramAlgorithm(String apiName, String mechanism, String hmac, int defaultIterations) {
        this.apiName = apiName;
        this.mechanism = mechanism;
        this.hmac = hmac;
        this.defaultIterations = defaultIterations;
    }

    /** As the admin API and the {@code credential.algorithm} column name it: {@code SHA-256}, {@code SHA-512}. */
    public String apiName() {
        return apiName;
    }

    /** The SASL mechanism name, which is also the MQTT Authentication Method: {@code SCRAM-SHA-256}. */
    public String mechanism() {
        return mechanism;
    }

    /** The JCA name of its HMAC. */
    String hmac() {
        return hmac;
    }

    /** The JCA name of its hash. */
    String digest() {
        return apiName;
    }

    public int defaultIterations() {
        return defaultIterations;
    }

    /** By API name ({@code SHA-256}), or null if it is none of ours. */
    public static ScramAlgorithm ofApiName(String name) {
        for (ScramAlgorithm a : values()) {
            if (a.apiName.equals(name)) {
                return a;
            }
        }
        return null;
    }

    /** By MQTT Authentication Method ({@code SCRAM-SHA-256}, case as sent), or null if it is none of ours. */
    public static ScramAlgorithm ofMechanism(String method) {
        if (method == null) {
            return null;
        }
        for (ScramAlgorithm a : values()) {
            // SASL mechanism names are upper case (RFC 4422 3.1); a client sending lower case means the same.
            if (a.mechanism.equals(method.toUpperCase(Locale.ROOT))) {
                return a;
            }
        }
        return null;
    }
}
