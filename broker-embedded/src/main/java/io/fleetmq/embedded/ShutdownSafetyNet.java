package io.fleetmq.embedded;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A JVM shutdown hook that stops a child-process server only if its owner has not stopped it within a grace
 * period. Shutdown hooks run concurrently, so stopping at once would pull Redis or PostgreSQL away from an
 * application that is still flushing its state in its own hook; not stopping at all would leave the processes
 * running after the JVM is gone.
 */
final class ShutdownSafetyNet {

    private static final Logger log = LoggerFactory.getLogger(ShutdownSafetyNet.class);
    private static final Duration GRACE = Duration.ofSeconds(10);

    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Thread hook;

    ShutdownSafetyNet(String name, Runnable stop) {
        hook = new Thread(() -> {
            try {
                if (stopped.await(GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                    return;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            log.warn("{} was not stopped by its owner within {} of JVM shutdown; stopping it now", name, GRACE);
            stop.run();
        }, name + "-safety-net");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Called when the server stops, by its owner or by this hook. */
    void disarm() {
        stopped.countDown();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shutdownInProgress) {
            // the hook has been started (or is this very thread); the latch already tells it to do nothing
        }
    }
}
