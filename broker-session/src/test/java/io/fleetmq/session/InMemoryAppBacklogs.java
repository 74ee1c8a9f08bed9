package io.fleetmq.session;

import io.fleetmq.kafka.app.AppBacklog;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/** APPLICATION backlogs in memory: the test hands records to a client's open reader. Test thread only. */
final class InMemoryAppBacklogs implements AppBacklogStore {

    private final Map<String, Consumer<List<AppBacklog.Record>>> sinks = new HashMap<>();
    private final Map<String, Long> committed = new HashMap<>();

    /** Hands a record to the client's open reader, as its Kafka consumer does. */
    void hand(String clientId, AppBacklog.Record r) {
        sinks.get(clientId).accept(List.of(r));
    }

    /** The next offset committed of partition 0, -1 if none. */
    long committed(String clientId) {
        return committed.getOrDefault(clientId, -1L);
    }

    @Override
    public Reader open(String clientId, Consumer<List<AppBacklog.Record>> sink, boolean newSession) {
        sinks.put(clientId, sink);
        return new Reader() {
            @Override
            public void grant(int n) {
            }

            @Override
            public void commit(int partition, long nextOffset, long lastSent) {
                committed.put(clientId, nextOffset);
            }

            @Override
            public void close() {
                sinks.remove(clientId, sink);
            }
        };
    }

    @Override
    public Reader openShared(String group, String topicFilter, Consumer<List<AppBacklog.Record>> sink,
            Consumer<Set<Integer>> revoked) {
        throw new UnsupportedOperationException();
    }

    @Override
    public CompletableFuture<Boolean> ensure(String clientId) {
        return CompletableFuture.completedFuture(true);
    }

    @Override
    public CompletableFuture<Boolean> ensureShared(String group, String topicFilter) {
        return CompletableFuture.completedFuture(true);
    }

    @Override
    public boolean sharedKnown(String group, String topicFilter) {
        return true;
    }
}
