package io.fleetmq.core.security.scram;

/** A SCRAM exchange that cannot go on: a malformed message, a nonce that does not match, a wrong proof. */
public final class ScramException extends Exception {

    /** Why the exchange failed; the client is told no more than "bad authentication" in any case. */
    public enum Kind { MALFORMED, UNSUPPORTED, NONCE_MISMATCH, INVALID_PROOF }

    private final Kind kind;

    public ScramException(Kind kind, String message) {
        super(message, null, false, false);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
