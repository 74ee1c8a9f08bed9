package io.fleetmq.core.retained;

/**
 * Where a record sits in a partitioned log: its partition and offset. Positions of one partition
 * are ordered by offset; positions of different partitions are not ordered at all.
 */
public record LogPosition(int partition, long offset) {

    public LogPosition {
        if (partition < 0 || offset < 0) {
            throw new IllegalArgumentException("no log position: " + partition + "@" + offset);
        }
    }

    /** Whether this position is {@code other} or comes after it in the same partition. */
    public boolean isAtOrAfter(LogPosition other) {
        return partition == other.partition && offset >= other.offset;
    }

    /** {@code partition@offset}, the form {@link #parse} reads. */
    @Override
    public String toString() {
        return partition + "@" + offset;
    }

    /** @return the position, or {@code null} if {@code text} is not of the form {@code partition@offset} */
    public static LogPosition parse(String text) {
        if (text == null) {
            return null;
        }
        int at = text.indexOf('@');
        try {
            return at <= 0 ? null
                    : new LogPosition(Integer.parseInt(text.substring(0, at)), Long.parseLong(text.substring(at + 1)));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
