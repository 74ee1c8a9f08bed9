package io.fleetmq.app;

import io.fleetmq.core.health.HealthCheck;
import io.fleetmq.core.health.HealthStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelHandler;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's current incarnation in the cluster ({@link Messaging}) and its replacement after the
 * node fenced itself. A fenced incarnation never serves again: its clients are sent elsewhere, its
 * Kafka work stops, and a new incarnation, with a new identity and its state read afresh from
 * Kafka, takes over once Kafka can be reached. Until then CONNECTs are refused with 0x88 and the
 * node reports not ready.
 */
final class Incarnations implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Incarnations.class);
    private static final Duration FIRST_RETRY = Duration.ofSeconds(1);
    private static final Duration MAX_RETRY = Duration.ofSeconds(10);

    /** Makes an incarnation, given the fenced one it replaces (0: none). */
    private final java.util.function.LongFunction<Messaging> factory;
    private final Counter fences;
    private final Object lock = new Object();
    private volatile Messaging current;
    private Thread rejoining;
    private boolean closed;

    Incarnations(java.util.function.LongFunction<Messaging> factory, MeterRegistry meters) {
        this.factory = factory;
        this.fences = Counter.builder("fleetmq.cluster.fences")
                .description("Times this node fenced itself off the cluster and rejoined as a new incarnation")
                .register(meters);
        Gauge.builder("fleetmq.cluster.fenced", this, i -> i.isRejoining() ? 1 : 0)
                .description("1 while this node is fenced and rejoins the cluster, else 0").register(meters);
    }

    /** Joins the cluster; throws if the first incarnation cannot start. */
    void start() {
        Messaging first = factory.apply(0);
        current = first;
        watch(first);
    }

    private boolean isRejoining() {
        synchronized (lock) {
            return rejoining != null;
        }
    }

    private void watch(Messaging m) {
        m.onFenced(() -> fenced(m));
    }

    private void fenced(Messaging m) {
        synchronized (lock) {
            if (closed || m != current || rejoining != null) {
                return;
            }
            fences.increment();
            rejoining = new Thread(() -> rejoin(m), "fleetmq-rejoin");
            rejoining.setDaemon(true);
            rejoining.start();
        }
    }

    private void rejoin(Messaging old) {
        old.fence();
        Duration wait = FIRST_RETRY;
        while (true) {
            synchronized (lock) {
                if (closed) {
                    return;
                }
            }
            try {
                Messaging fresh = factory.apply(old.incarnation());
                synchronized (lock) {
                    if (closed) {
                        fresh.close();
                        return;
                    }
                    current = fresh;
                    rejoining = null;
                }
                watch(fresh);
                old.close();
                log.info("Node rejoined the cluster as incarnation {}", fresh.incarnation());
                return;
            } catch (RuntimeException e) {
                log.warn("Node cannot rejoin the cluster yet ({}); trying again in {} ms", HealthStatus.describe(e),
                        wait.toMillis());
            }
            try {
                Thread.sleep(wait.toMillis());
            } catch (InterruptedException e) {
                return; // closing
            }
            wait = wait.multipliedBy(2).compareTo(MAX_RETRY) > 0 ? MAX_RETRY : wait.multipliedBy(2);
        }
    }

    /** New connections go to the current incarnation (a fenced one refuses them with 0x88). */
    Supplier<ChannelHandler> connectionHandlers() {
        return () -> current.connectionHandlers().get();
    }

    /** The current incarnation's cluster check; down while fenced and rejoining. */
    HealthCheck clusterHealth() {
        return new HealthCheck() {
            @Override
            public String name() {
                return "cluster";
            }

            @Override
            public HealthStatus check() {
                return current.clusterHealth().check();
            }
        };
    }

    /** The current incarnation's loop supervisor: down once one of its loops gave up. */
    HealthCheck loopsHealth() {
        return new HealthCheck() {
            @Override
            public String name() {
                return "loops";
            }

            @Override
            public HealthStatus check() {
                return current.loops().check();
            }
        };
    }

    Messaging current() {
        return current;
    }

    @Override
    public void close() {
        Thread t;
        Messaging m;
        synchronized (lock) {
            closed = true;
            t = rejoining;
            m = current;
        }
        if (t != null) {
            t.interrupt();
        }
        if (m != null) {
            m.close();
        }
    }
}
