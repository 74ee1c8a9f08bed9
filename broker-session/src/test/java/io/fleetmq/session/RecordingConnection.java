package io.fleetmq.session;

import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolVersion;
import java.util.ArrayList;
import java.util.List;

/**
 * A connection that records what the session writes and when it flushes, with a socket that is
 * writable or full as the test says. Used from the test thread only.
 */
final class RecordingConnection implements ClientConnection {

    /** Packets written, in order. */
    final List<Packet> written = new ArrayList<>();
    /** How many packets had been written at each flush, in order. */
    final List<Integer> flushedAt = new ArrayList<>();
    boolean writable = true;
    boolean closed;
    /** PUBLISH packets the session said were settled. */
    int settled;
    /** Packet identifiers the client acknowledged (as the test says, see {@link SessionHarness#send}). */
    final java.util.Set<Integer> acknowledged = new java.util.HashSet<>();
    ProtocolVersion version = ProtocolVersion.V5;

    @Override
    public void write(Packet packet) {
        written.add(packet);
    }

    @Override
    public void flush() {
        flushedAt.add(written.size());
    }

    @Override
    public void sendAndClose(Packet last) {
        if (last != null) {
            written.add(last);
        }
        flushedAt.add(written.size());
        closed = true;
    }

    @Override
    public boolean isWritable() {
        return writable;
    }

    @Override
    public void publishSettled() {
        settled++;
    }

    @Override
    public void keepAlive(int seconds) {
    }

    @Override
    public ProtocolVersion version() {
        return version;
    }

    @Override
    public String remoteAddress() {
        return "test";
    }

    /** Topics of the PUBLISH packets written, in order. */
    List<String> publishedTopics() {
        return written.stream().filter(p -> p instanceof Packet.Publish).map(p -> ((Packet.Publish) p).topic()).toList();
    }

    /** The packets written of one type, in order. */
    <T extends Packet> List<T> written(Class<T> type) {
        return written.stream().filter(type::isInstance).map(type::cast).toList();
    }

    /** Whether everything written so far has been flushed. */
    boolean allFlushed() {
        return !flushedAt.isEmpty() && flushedAt.get(flushedAt.size() - 1) == written.size();
    }
}
