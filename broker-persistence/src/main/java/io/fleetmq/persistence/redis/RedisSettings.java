package io.fleetmq.persistence.redis;

import java.time.Duration;
import java.util.Objects;

/**
 * Where Redis is: a {@code redis://}, {@code rediss://} (TLS), {@code redis-sentinel://} or
 * {@code redis-cluster://} ({@code rediss-cluster://}) URL, and how long one command may take.
 */
public record RedisSettings(String url, Duration commandTimeout) {

    public RedisSettings {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(commandTimeout, "commandTimeout");
    }

    /** The URL without its credentials, for logs and health reports. */
    public String displayUrl() {
        return url.replaceFirst("^([a-z-]+://)[^@/]*@", "$1");
    }
}
