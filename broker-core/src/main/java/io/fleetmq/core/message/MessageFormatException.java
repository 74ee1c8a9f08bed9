package io.fleetmq.core.message;

/**
 * Bytes that should hold an encoded {@link BrokerMessage} do not: unknown format version,
 * truncated, or garbage.
 *
 * <p>Checked on purpose: such bytes come from Kafka, which anyone with write access to a topic can
 * fill, so every reader must decide what to do with a bad record (skip it and count it) instead of
 * letting the exception end its consumer loop.
 */
public final class MessageFormatException extends Exception {

    private static final long serialVersionUID = 1L;

    public MessageFormatException(String message) {
        super(message);
    }

    public MessageFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
