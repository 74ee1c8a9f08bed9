package io.fleetmq.transport.proxy;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.Channel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connections closed on a listener that expects the PROXY protocol because they came without a
 * header or with a malformed one: counted as {@code fleetmq.proxy.protocol.refused} (tag
 * {@code reason}: {@value #MISSING} or {@value #MALFORMED}) and logged at debug, at most once every
 * ten seconds with the number left unlogged, so that a scan of the port cannot flood the log.
 * Such a connection is most often a client that bypasses the load balancer, or a balancer not set
 * to send the header. Thread-safe; one per node.
 */
public final class ProxyRefusals {

    public static final String MISSING = "missing";
    public static final String MALFORMED = "malformed";

    private static final Logger log = LoggerFactory.getLogger(ProxyRefusals.class);
    private static final long LOG_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Counter missing;
    private final Counter malformed;
    private final AtomicLong nextLog = new AtomicLong(System.nanoTime());
    private final AtomicLong unlogged = new AtomicLong();

    public ProxyRefusals(MeterRegistry registry) {
        this.missing = counter(registry, MISSING);
        this.malformed = counter(registry, MALFORMED);
    }

    private static Counter counter(MeterRegistry registry, String reason) {
        return Counter.builder("fleetmq.proxy.protocol.refused")
                .description("Connections closed on a PROXY protocol listener for a missing or malformed header")
                .tag("reason", reason)
                .register(registry);
    }

    /** Connections refused so far for {@code reason}. */
    public double count(String reason) {
        return (MISSING.equals(reason) ? missing : malformed).count();
    }

    /** Counts, maybe logs, and closes {@code channel}. */
    void refuse(Channel channel, String reason, String detail) {
        (MISSING.equals(reason) ? missing : malformed).increment();
        channel.close();
        if (!log.isDebugEnabled()) {
            return;
        }
        long now = System.nanoTime();
        long next = nextLog.get();
        if (now - next >= 0 && nextLog.compareAndSet(next, now + LOG_EVERY_NANOS)) {
            long skipped = unlogged.getAndSet(0);
            String text = detail == null ? "" : detail.length() > 200 ? detail.substring(0, 200) + "…" : detail;
            log.debug("Closed connection from {} on a PROXY protocol listener ({}): {}{}", channel.remoteAddress(),
                    reason, text, skipped == 0 ? "" : " (" + skipped + " more since the last such message)");
        } else {
            unlogged.incrementAndGet();
        }
    }
}
