package io.fleetmq.bench.report;

import io.fleetmq.bench.cli.BenchOptions;
import java.util.Locale;

/**
 * The result of one storm run: the ramp, what dropped, how the reconnects went, and how long until
 * the dropped devices were served again.
 *
 * @param note          why the run was aborted or saw no storm; empty when completed
 * @param rampSeconds   from the first connect to the end of the last handshake
 * @param ramp          the ramp's handshakes; a storm needs every device up before it starts
 * @param kill          what the tool killed and when, or why it could not; empty when the operator causes the drops
 * @param waitedSeconds from READY to the first drop (or to the end of the wait, without a drop)
 * @param dropped       devices whose connection the broker or the network closed after READY
 * @param drops         such closes; a device that comes back and drops again counts twice
 * @param back          dropped devices served again within the storm timeout
 * @param storm         every handshake and connection after READY: reconnects, refusals, failures
 * @param recovery      time from the first drop until 50/90/99/100 % of the dropped were back
 * @param stormSeconds  from the first drop until all were back (and no new drop came for a second), or the timeout
 */
public record StormReport(
        BenchOptions options,
        String runId,
        String transport,
        Status status,
        String note,
        double rampSeconds,
        FleetCounts ramp,
        String kill,
        double waitedSeconds,
        long dropped,
        long drops,
        long back,
        FleetCounts storm,
        Recovery recovery,
        double stormSeconds) {

    public enum Status {
        COMPLETED, ABORTED, NO_DROP;

        public String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** Devices still not served again when the storm ended. */
    public long stillOut() {
        return dropped - back;
    }

    /**
     * Reconnect attempts beyond the first after each drop: every failed attempt is retried, so this
     * is how many reconnects the broker turned away or let time out.
     */
    public long retries() {
        return Math.max(0, storm.attempts() - drops);
    }

    public boolean allBack() {
        return status == Status.COMPLETED && dropped > 0 && back == dropped;
    }

    public double connectsPerSecond() {
        return rampSeconds > 0 ? ramp.accepted() / rampSeconds : 0;
    }
}
