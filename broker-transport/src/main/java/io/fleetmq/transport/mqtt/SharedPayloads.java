package io.fleetmq.transport.mqtt;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Direct-memory copies of large payloads, one per message however many connections it is written
 * to. A message fanned out reaches every session as the same {@code byte[]}, so the array's identity
 * is the key. The most recent copies are kept, up to {@link #MAX_BYTES} and {@link #MAX_ENTRIES}:
 * a copy leaves the cache oldest first, and its memory is freed once the last connection holding a
 * view of it has written it. A copy that left while its message was still being fanned out is made
 * again: memory for speed, never a different payload.
 */
final class SharedPayloads {

    /** Payloads of at least this many bytes are shared; smaller ones are cheaper to copy per packet. */
    static final int SHARE_FROM_BYTES = 16 * 1024;
    /** Direct memory the cache itself holds at most, beyond views still waiting in connections. */
    static final long MAX_BYTES = 32L * 1024 * 1024;
    static final int MAX_ENTRIES = 1024;

    private final long maxBytes;
    private final int maxEntries;
    /** Guarded by this. */
    private final Map<byte[], ByteBuf> copies = new IdentityHashMap<>();
    /** Guarded by this: the keys of {@link #copies}, oldest first. */
    private final ArrayDeque<byte[]> order = new ArrayDeque<>();
    private long bytes;

    SharedPayloads() {
        this(MAX_BYTES, MAX_ENTRIES);
    }

    SharedPayloads(long maxBytes, int maxEntries) {
        this.maxBytes = maxBytes;
        this.maxEntries = maxEntries;
    }

    /**
     * A view of the direct copy of {@code payload} with its own indices and its own reference: the
     * caller releases it (writing it to a channel does) and never writes into it.
     */
    synchronized ByteBuf acquire(byte[] payload, ByteBufAllocator alloc) {
        ByteBuf copy = copies.get(payload);
        if (copy == null) {
            copy = alloc.directBuffer(payload.length, payload.length).writeBytes(payload);
            copies.put(payload, copy);
            order.addLast(payload);
            bytes += payload.length;
            // The newest copy stays even if it alone is above the bound: it is about to be used.
            while (order.size() > 1 && (bytes > maxBytes || order.size() > maxEntries)) {
                byte[] oldest = order.removeFirst();
                bytes -= oldest.length;
                copies.remove(oldest).release();
            }
        }
        return copy.retainedDuplicate();
    }

    /** Copies held now. */
    synchronized int size() {
        return copies.size();
    }

    /** Bytes held now. */
    synchronized long bytes() {
        return bytes;
    }
}
