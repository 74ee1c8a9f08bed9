package io.fleetmq.session;

import io.fleetmq.kafka.app.AppBacklog;
import io.fleetmq.kafka.app.AppBacklogs;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The backlogs a persistent APPLICATION session reads while connected: its own and those of its
 * shared subscriptions. They live in Kafka ({@link #of(AppBacklogs)}); tests use ones in memory.
 */
public interface AppBacklogStore {

    /** One backlog being read: records come to its sink as credit allows. */
    interface Reader {

        /** Allows {@code n} more records to be handed over. */
        void grant(int n);

        /** Everything of {@code partition} before {@code nextOffset} is delivered; {@code lastSent} the highest sent. */
        void commit(int partition, long nextOffset, long lastSent);

        /** Stops reading; what was handed over and not committed is read again by the next reader. */
        void close();
    }

    /**
     * Starts reading the client's own backlog.
     *
     * @param sink       receives the records, on a thread of the backlog's
     * @param newSession what the backlog held before belongs to an earlier session and is skipped
     */
    Reader open(String clientId, Consumer<List<AppBacklog.Record>> sink, boolean newSession);

    /** Joins the readers of a shared subscription's backlog; {@code revoked} is told of partitions taken away. */
    Reader openShared(String group, String topicFilter, Consumer<List<AppBacklog.Record>> sink,
            Consumer<Set<Integer>> revoked);

    /** Makes (or finds) the client's backlog; completes with whether it exists. */
    CompletableFuture<Boolean> ensure(String clientId);

    /** Makes (or finds) a shared subscription's backlog; completes with whether it exists. */
    CompletableFuture<Boolean> ensureShared(String group, String topicFilter);

    /** Whether this node made or found the shared subscription's backlog. */
    boolean sharedKnown(String group, String topicFilter);

    /** The backlogs in Kafka. */
    static AppBacklogStore of(AppBacklogs backlogs) {
        if (backlogs == null) {
            return null;
        }
        return new AppBacklogStore() {
            @Override
            public Reader open(String clientId, Consumer<List<AppBacklog.Record>> sink, boolean newSession) {
                return reader(backlogs.open(clientId, sink, newSession));
            }

            @Override
            public Reader openShared(String group, String topicFilter, Consumer<List<AppBacklog.Record>> sink,
                    Consumer<Set<Integer>> revoked) {
                return reader(backlogs.openShared(group, topicFilter, sink, revoked));
            }

            @Override
            public CompletableFuture<Boolean> ensure(String clientId) {
                return backlogs.ensure(clientId);
            }

            @Override
            public CompletableFuture<Boolean> ensureShared(String group, String topicFilter) {
                return backlogs.ensureSharedAsync(group, topicFilter);
            }

            @Override
            public boolean sharedKnown(String group, String topicFilter) {
                return backlogs.sharedKnown(group, topicFilter);
            }
        };
    }

    private static Reader reader(AppBacklog backlog) {
        return new Reader() {
            @Override
            public void grant(int n) {
                backlog.grant(n);
            }

            @Override
            public void commit(int partition, long nextOffset, long lastSent) {
                backlog.commit(partition, nextOffset, lastSent);
            }

            @Override
            public void close() {
                backlog.close();
            }
        };
    }
}
