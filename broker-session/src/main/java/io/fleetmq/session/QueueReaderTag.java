package io.fleetmq.session;

import java.util.Map;

/**
 * How a connection that reads its DEVICE queue registers in the queue: {@code "<incarnation> <epoch>
 * <node>"}. The writer of the queue needs the node and its incarnation, to tell a live reader that
 * the queue grew; the epoch makes each connection's registration its own, so that the end of one
 * connection releases only what it registered.
 */
public final class QueueReaderTag {

    private QueueReaderTag() {
    }

    /** The registration of connection {@code epoch} of a session on {@code nodeId}'s incarnation. */
    public static String of(long incarnation, long epoch, String nodeId) {
        return incarnation + " " + epoch + " " + nodeId;
    }

    /** The node and its incarnation of a registration; null for none, or one this version cannot read. */
    public static Map.Entry<String, Long> nodeOf(String tag) {
        if (tag == null) {
            return null;
        }
        int first = tag.indexOf(' ');
        int second = first < 0 ? -1 : tag.indexOf(' ', first + 1);
        if (second < 0 || second == tag.length() - 1) {
            return null;
        }
        try {
            return Map.entry(tag.substring(second + 1), Long.parseLong(tag.substring(0, first)));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
