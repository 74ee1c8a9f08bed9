package io.fleetmq.bench.cli;

/** A command line that cannot be run; the message says what to change. */
public final class UsageException extends Exception {

    public UsageException(String message) {
        super(message);
    }
}
