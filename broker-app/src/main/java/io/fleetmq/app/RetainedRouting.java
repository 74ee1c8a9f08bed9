package io.fleetmq.app;

import io.fleetmq.core.log.ClientText;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageCodec;
import io.fleetmq.core.retained.LogPosition;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.DeadLetters;
import io.fleetmq.kafka.publish.PublishedRecord;
import io.fleetmq.kafka.retained.RetainedStore;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The routing consumer's part in retained messages: a retained PUBLISH it routes becomes the
 * topic's record in the retained log, marked with where the PUBLISH is in the publish log so the
 * node that acknowledged it recognises it (see {@link io.fleetmq.core.retained.RetainedIndex}).
 * Runs on the routing consumer's thread only.
 */
final class RetainedRouting {

    private static final Logger log = LoggerFactory.getLogger(RetainedRouting.class);

    private final RetainedStore store;
    private final DeadLetters deadLetters;
    private final BrokerTopics topics;
    /** A retained update of the batch failed for a reason that may pass: the batch is routed again. */
    private boolean failed;

    RetainedRouting(RetainedStore store, DeadLetters deadLetters, BrokerTopics topics) {
        this.store = store;
        this.deadLetters = deadLetters;
        this.topics = topics;
    }

    /** Stores the record's message in the retained log if it is a retained PUBLISH. */
    void route(PublishedRecord record) {
        BrokerMessage message = record.message();
        if (!message.retain()) {
            return;
        }
        // [MQTT-3.3.1-5..7] a retained PUBLISH replaces the topic's retained message; an empty
        // payload removes it. Waiting keeps the order with later publishes to the same topic.
        try {
            LogPosition from = new LogPosition(record.partition(), record.offset());
            if (message.payload().length == 0) {
                store.delete(message.topic(), from).join();
            } else {
                store.put(message, from).join();
            }
        } catch (CompletionException | CancellationException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            if (DeadLetters.permanent(cause)) {
                // Kafka will never take it: kept in the dead-letter topic; subscribers still get it.
                deadLetters.send("retained message not storable: " + cause.getMessage(), topics.publish(),
                        record.partition(), record.offset(), topics.retained(), message.topic(),
                        MessageCodec.encode(message));
            } else {
                if (!failed) {
                    log.warn("Retained message of {} not stored; the batch is routed again: {}",
                            ClientText.of(message.topic()),
                            cause.toString());
                }
                failed = true;
            }
        }
    }

    /** Whether every retained update of the batch was stored (or dead-lettered); starts the next batch. */
    boolean flushed() {
        boolean stored = !failed;
        failed = false;
        return stored;
    }
}
