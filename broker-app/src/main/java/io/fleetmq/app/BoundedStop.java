package io.fleetmq.app;

import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops a running node within {@code broker.shutdown-timeout}: the stop runs on a thread of its own
 * and is waited for that long. What has not finished by then is abandoned, so that an orchestrator's
 * grace period (the Helm chart sizes it from the same setting) is never overrun by a stop that hangs
 * on an unreachable Kafka or PostgreSQL.
 */
final class BoundedStop {

    private static final Logger log = LoggerFactory.getLogger(BoundedStop.class);

    private BoundedStop() {
    }

    /**
     * Closes {@code running}, waiting at most {@code timeout}.
     *
     * @return whether the stop finished in time (a failed stop counts as finished: it is over)
     */
    static boolean stop(AutoCloseable running, Duration timeout) {
        Thread stopper = new Thread(() -> {
            try {
                running.close();
            } catch (Exception e) {
                log.warn("Stop was not clean", e);
            }
        }, "fleetmq-stop");
        stopper.setDaemon(true);
        stopper.start();
        try {
            stopper.join(Math.max(1, timeout.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (stopper.isAlive()) {
            log.error("Stopping took longer than broker.shutdown-timeout (BROKER_SHUTDOWN_TIMEOUT, {}); what is "
                    + "left is abandoned", timeout);
            return false;
        }
        return true;
    }
}
