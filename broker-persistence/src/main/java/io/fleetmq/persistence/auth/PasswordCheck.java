package io.fleetmq.persistence.auth;

import java.util.Objects;

/**
 * The result of checking a password against a stored hash. Only {@link Outcome#MATCH} lets a
 * client in; the other outcomes all mean "refused", and the reason says why for the operator's
 * log. The reason never contains the password or the stored hash, and a client is never told
 * which of these it was.
 */
public record PasswordCheck(Outcome outcome, String reason) {

    /** What the check found. */
    public enum Outcome {
        /** The password matches the stored hash. */
        MATCH,
        /** A well-formed stored hash that the password does not match. */
        MISMATCH,
        /** No password was given (a CONNECT with a user name but without a password). */
        NO_PASSWORD,
        /** The stored value is not a hash in any accepted format, or is damaged. */
        MALFORMED,
        /** The stored hash asks for more work than this node allows for one check. */
        TOO_COSTLY
    }

    public PasswordCheck {
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(reason, "reason");
    }

    public boolean matched() {
        return outcome == Outcome.MATCH;
    }

    static PasswordCheck match(String format) {
        return new PasswordCheck(Outcome.MATCH, format + " hash matches");
    }

    static PasswordCheck mismatch(String format) {
        return new PasswordCheck(Outcome.MISMATCH, "password does not match the " + format + " hash");
    }

    static PasswordCheck malformed(String why) {
        return new PasswordCheck(Outcome.MALFORMED, "stored hash is malformed: " + why);
    }

    static PasswordCheck tooCostly(String why) {
        return new PasswordCheck(Outcome.TOO_COSTLY, "stored hash refused: " + why);
    }
}
