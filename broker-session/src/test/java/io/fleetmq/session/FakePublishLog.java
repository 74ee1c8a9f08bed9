package io.fleetmq.session;

import io.fleetmq.core.message.BrokerMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** A publish log that stores nothing until the test confirms (or fails) what was appended. */
final class FakePublishLog implements PublishPort {

    record Append(BrokerMessage message, CompletableFuture<Void> stored) {
    }

    /** Appends not yet answered, in order. */
    final List<Append> pending = new ArrayList<>();
    /** Every message appended, in order. */
    final List<BrokerMessage> appended = new ArrayList<>();

    @Override
    public CompletableFuture<Void> append(BrokerMessage message) {
        CompletableFuture<Void> stored = new CompletableFuture<>();
        pending.add(new Append(message, stored));
        appended.add(message);
        return stored;
    }

    @Override
    public boolean hasRoom() {
        return true;
    }

    @Override
    public void whenRoom(Runnable task) {
        task.run();
    }

    /** Confirms every pending append. */
    void storeAll() {
        List<Append> now = List.copyOf(pending);
        pending.clear();
        now.forEach(a -> a.stored().complete(null));
    }

    /** Fails every pending append, as Kafka does when it is away. */
    void failAll() {
        List<Append> now = List.copyOf(pending);
        pending.clear();
        now.forEach(a -> a.stored().completeExceptionally(new IllegalStateException("Kafka away")));
    }
}
