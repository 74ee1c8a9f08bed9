package io.fleetmq.core.security;

import java.net.InetAddress;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** The blocked entries of the cluster, compiled for matching CONNECTs and connected clients. */
public final class BlockList {

    public static final BlockList EMPTY = null;

    private BlockList() {
        throw new UnsupportedOperationException("stub");
    }

    /** Compiles {@code entries}; an entry that does not pass {@link #validate} matches nothing. */
    public static BlockList of(List<BlockEntry> entries) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Null if the entry is valid, else a one-line reason naming the field ({@code type},
     * {@code value}, {@code target}) for a 400 answer: an IP address or CIDR range (IPv4 or IPv6) for
     * {@code ip}, a regular expression that compiles for {@code regex} with a target.
     */
    public static String validate(String type, String value, String target) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * The first entry, not expired at {@code now}, that blocks a client with these values; username
     * and address may be null (then entries on them do not match).
     */
    public Optional<BlockEntry> match(String clientId, String username, InetAddress address, Instant now) {
        throw new UnsupportedOperationException("stub");
    }

    public int size() {
        throw new UnsupportedOperationException("stub");
    }
}
