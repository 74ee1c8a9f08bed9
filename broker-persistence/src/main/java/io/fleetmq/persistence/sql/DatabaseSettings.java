package io.fleetmq.persistence.sql;

import java.time.Duration;
import java.util.Objects;

/** Where PostgreSQL is and how many connections this node may hold. */
public record DatabaseSettings(String url, String user, String password, int maxPoolSize, Duration connectTimeout) {

    public DatabaseSettings {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(password, "password");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        if (maxPoolSize < 1) {
            throw new IllegalArgumentException("maxPoolSize must be at least 1");
        }
    }
}
