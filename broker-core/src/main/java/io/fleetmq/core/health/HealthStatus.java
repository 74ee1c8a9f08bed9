package io.fleetmq.core.health;

import io.fleetmq.core.log.Secrets;
import java.util.Objects;

/**
 * Outcome of one {@link HealthCheck}: up or down, with a human-readable detail. The detail is shown
 * on {@code /health/ready} to anyone who can reach the admin port, so credentials in it (a password in
 * a connection string quoted by a driver's error) are masked here, whatever the check wrote.
 */
public record HealthStatus(boolean up, String detail) {

    public HealthStatus {
        Objects.requireNonNull(detail, "detail");
        detail = Secrets.mask(detail);
    }

    public static HealthStatus up(String detail) {
        return new HealthStatus(true, detail);
    }

    public static HealthStatus down(String detail) {
        return new HealthStatus(false, detail);
    }

    /** A failed probe, described by its exception's message without the stack. */
    public static HealthStatus down(Throwable cause) {
        return new HealthStatus(false, describe(cause));
    }

    /** The innermost message of a cause chain, which is usually the one that says what went wrong. */
    public static String describe(Throwable cause) {
        Throwable t = cause;
        String message = null;
        while (t != null) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                message = t.getMessage();
            }
            t = t.getCause() == t ? null : t.getCause();
        }
        return message != null ? message : cause.getClass().getSimpleName();
    }
}
