package io.fleetmq.bench.client;

/** A connection step that failed: refused CONNECT, failed SUBSCRIBE, time-out or lost connection. */
public final class ClientException extends RuntimeException {

    public ClientException(String message) {
        super(message);
    }
}
