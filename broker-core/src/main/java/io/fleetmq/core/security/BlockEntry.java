package io.fleetmq.core.security;

import java.time.Instant;

/**
 * A blocked client: CONNECTs that match get CONNACK 0x8A (return code 5 in 3.1.1), and a
 * connected client that matches is disconnected wherever it is.
 *
 * @param id        stable identifier (a UUID)
 * @param type      {@code client_id}, {@code username}, {@code ip} (an address or a CIDR range) or
 *                  {@code regex} (a regular expression matched against the whole {@code target})
 * @param value     what is blocked
 * @param target    for {@code regex}: {@code client_id}, {@code username} or {@code ip}; null otherwise
 * @param expiresAt when the block ends, or null for never
 */
public record BlockEntry(String id, String type, String value, String target, Instant expiresAt,
        Instant createdAt) {

    public static final String CLIENT_ID = "client_id";
    public static final String USERNAME = "username";
    public static final String IP = "ip";
    public static final String REGEX = "regex";

    public boolean expired(Instant now) {
        return expiresAt != null && !now.isBefore(expiresAt);
    }
}
