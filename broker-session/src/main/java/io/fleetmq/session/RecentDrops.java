package io.fleetmq.session;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The node's most recent dropped messages, for operators asking "why did my device not get it?".
 * A fixed ring: the newest {@code capacity} drops, each with client ID and topic cut to
 * {@link #MAX_TEXT} characters, so it never holds more than a bounded amount of memory however fast
 * messages are dropped. Writers take no lock (one compare-and-set and one array store); a reader
 * never sees a torn drop, and one following the ring with {@link #after} never skips one.
 */
public final class RecentDrops {

    /** Characters kept of a client ID or topic: enough to recognise it, bounded per entry. */
    public static final int MAX_TEXT = 256;
    public static final int DEFAULT_CAPACITY = 1000;

    /**
     * One dropped message.
     *
     * @param sequence its place among all drops this ring was told of, from 0 (readers use it to ask for what is new)
     * @param reason   the reason as on {@code fleetmq_messages_dropped_total}, lower case
     */
    public record Drop(long sequence, long atMillis, String reason, String clientId, String topic) {
    }

    private final AtomicReferenceArray<Drop> slots;
    private final AtomicLong next = new AtomicLong();

    public RecentDrops(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1");
        }
        this.slots = new AtomicReferenceArray<>(capacity);
    }

    public RecentDrops() {
        this(DEFAULT_CAPACITY);
    }

    public int capacity() {
        return slots.length();
    }

    /** Remembers a drop; the oldest goes once the ring is full. */
    public void add(long atMillis, String reason, String clientId, String topic) {
        String client = cut(clientId);
        String cutTopic = cut(topic);
        // The drop is made before its sequence is taken, so nothing can fail between taking the
        // sequence and storing it: a reader that waits for a taken sequence (see after) never waits
        // for one that will not come.
        long sequence;
        Drop drop;
        do {
            sequence = next.get();
            drop = new Drop(sequence, atMillis, reason, client, cutTopic);
        } while (!next.compareAndSet(sequence, sequence + 1));
        slots.set((int) (sequence % slots.length()), drop);
    }

    /** The number of drops told so far (the sequence the next one gets). */
    public long written() {
        return next.get();
    }

    /**
     * What a reader got, and where its next read starts.
     *
     * @param drops the drops read, oldest first
     * @param next  the sequence to read from next time: past every drop read or gone, but not past
     *              one being written while this read ran
     */
    public record Batch(List<Drop> drops, long next) {
    }

    /** The drops still held with a sequence at or above {@code from}, oldest first. */
    public List<Drop> since(long from) {
        return after(from).drops();
    }

    /**
     * The drops still held with a sequence at or above {@code from}, oldest first, and where to go
     * on from. A reader that follows the ring with {@code next} sees every drop the ring still held
     * when it read, once: a drop whose sequence is taken but whose slot is not written yet ends the
     * batch there, so the next read starts with it rather than skipping it.
     */
    public Batch after(long from) {
        long end = next.get();
        long start = Math.max(from, Math.max(0, end - slots.length()));
        List<Drop> out = new ArrayList<>((int) Math.max(0, end - start));
        for (long s = start; s < end; s++) {
            Drop d = slots.get((int) (s % slots.length()));
            if (d == null || d.sequence() < s) {
                return new Batch(out, s); // its writer has not stored it yet
            }
            if (d.sequence() == s) {
                out.add(d);
            } // else the ring went round: a newer drop took its slot, and it is gone
        }
        return new Batch(out, end);
    }

    /** Every drop still held, oldest first. */
    public List<Drop> all() {
        return since(0);
    }

    private static String cut(String s) {
        if (s == null || s.length() <= MAX_TEXT) {
            return s;
        }
        return s.substring(0, MAX_TEXT);
    }
}
