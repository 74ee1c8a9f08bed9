package io.fleetmq.app;

/** The node could not start; the message is one line saying what failed and which setting it concerns. */
public final class StartupException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public StartupException(String message, Throwable cause) {
        super(message, cause);
    }
}
