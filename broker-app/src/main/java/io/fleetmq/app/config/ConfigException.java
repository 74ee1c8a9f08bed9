package io.fleetmq.app.config;

/**
 * A setting is wrong, missing or refers to something unusable. The message is one line that names
 * the setting (and its environment variable), so an operator can fix it without reading a trace.
 */
public final class ConfigException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public ConfigException(String message) {
        super(message);
    }

    public ConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
