package io.fleetmq.session;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.persistence.redis.DeviceQueues;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * DEVICE queues in memory. Reads are answered at once, or, while {@link #holdReads} is set, when the
 * test calls {@link #answerReads()} (as Redis answers later). Used from the test thread only.
 */
final class InMemoryDeviceQueues implements DeviceQueueStore {

    /** {@code asAsked}: what the queue held when the read was asked for, or null to read it when answering. */
    private record Read(String clientId, long afterSeq, int max, CompletableFuture<List<DeviceQueues.Entry>> answer,
            List<DeviceQueues.Entry> asAsked) {
    }

    private final Map<String, TreeMap<Long, DeviceQueues.Entry>> queues = new HashMap<>();
    private final List<Read> held = new ArrayList<>();
    private long lastSeq;
    boolean holdReads;
    /**
     * Held reads answer with what the queue held when they were asked for (Redis ran them at once; the
     * answer is on its way), not with what it holds when the test answers them.
     */
    boolean readAsAsked;
    /** The {@code max} of every read asked for, in order. */
    final List<Integer> readSizes = new ArrayList<>();
    /** The reader each client's queue has registered, as the store keeps it. */
    final Map<String, String> readers = new HashMap<>();

    /** Appends a message to a client's queue, as the router does; returns its sequence number. */
    long append(String clientId, Downlink downlink) {
        long seq = ++lastSeq;
        queue(clientId).put(seq, new DeviceQueues.Entry(seq, ClusterCodec.encode(downlink), 0));
        return seq;
    }

    /** The entries of a client's queue. */
    List<DeviceQueues.Entry> entries(String clientId) {
        return List.copyOf(queue(clientId).values());
    }

    /** Answers the reads held so far. */
    void answerReads() {
        List<Read> now = List.copyOf(held);
        held.clear();
        now.forEach(r -> r.answer().complete(r.asAsked() != null ? r.asAsked()
                : readNow(r.clientId(), r.afterSeq(), r.max())));
    }

    @Override
    public CompletionStage<List<DeviceQueues.Entry>> read(String clientId, long afterSeq, int max, String reader) {
        if (reader != null) {
            readers.put(clientId, reader);
        }
        readSizes.add(max);
        if (holdReads) {
            CompletableFuture<List<DeviceQueues.Entry>> answer = new CompletableFuture<>();
            held.add(new Read(clientId, afterSeq, max, answer, readAsAsked ? readNow(clientId, afterSeq, max) : null));
            return answer;
        }
        return CompletableFuture.completedFuture(readNow(clientId, afterSeq, max));
    }

    private List<DeviceQueues.Entry> readNow(String clientId, long afterSeq, int max) {
        return queue(clientId).tailMap(afterSeq, false).values().stream().limit(max).toList();
    }

    @Override
    public void remove(String clientId, long seq) {
        queue(clientId).remove(seq);
    }

    /** Packet identifiers written, in order: "seq=packetId". */
    final List<String> identifiersWritten = new java.util.ArrayList<>();

    @Override
    public void sentWith(String clientId, long seq, int packetId) {
        identifiersWritten.add(seq + "=" + packetId);
        DeviceQueues.Entry e = queue(clientId).get(seq);
        if (e != null) {
            queue(clientId).put(seq, new DeviceQueues.Entry(seq, e.value(), packetId));
        }
    }

    @Override
    public void release(String clientId, String reader) {
        readers.remove(clientId, reader);
    }

    @Override
    public CompletionStage<Long> delete(String clientId) {
        TreeMap<Long, DeviceQueues.Entry> q = queues.remove(clientId);
        return CompletableFuture.completedFuture(q == null ? 0L : (long) q.size());
    }

    @Override
    public Duration ttl() {
        return Duration.ofDays(1);
    }

    private TreeMap<Long, DeviceQueues.Entry> queue(String clientId) {
        return queues.computeIfAbsent(clientId, c -> new TreeMap<>());
    }
}
