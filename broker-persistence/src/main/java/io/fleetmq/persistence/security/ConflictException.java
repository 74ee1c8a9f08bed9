package io.fleetmq.persistence.security;

/** A write that would break a uniqueness rule; the message says which (for a 409 answer). */
public final class ConflictException extends RuntimeException {
    public ConflictException(String message) {
        super(message);
    }
}
