package io.fleetmq.transport;

/** A listener could not bind its address; carries the listener's name so the caller can name the setting. */
public final class ListenerBindException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String listener;
    private final String host;
    private final int port;

    public ListenerBindException(String listener, String host, int port, Throwable cause) {
        super(listener + " listener cannot bind " + host + ":" + port + ": "
                + (cause.getMessage() != null ? cause.getMessage() : cause.getClass().getSimpleName()), cause);
        this.listener = listener;
        this.host = host;
        this.port = port;
    }

    public String listener() {
        return listener;
    }

    public String host() {
        return host;
    }

    public int port() {
        return port;
    }
}
