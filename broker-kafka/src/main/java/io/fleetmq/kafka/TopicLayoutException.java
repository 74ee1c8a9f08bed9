package io.fleetmq.kafka;

/** The topics found in Kafka do not have the layout the broker relies on; the node must not start. */
public final class TopicLayoutException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public TopicLayoutException(String message) {
        super(message);
    }
}
