package io.fleetmq.persistence.security;

/** PostgreSQL could not be reached or refused a statement; the broker treats it as "unavailable". */
public final class DataAccessException extends RuntimeException {
    public DataAccessException(String message, Throwable cause) {
        super(message, cause);
    }
}
