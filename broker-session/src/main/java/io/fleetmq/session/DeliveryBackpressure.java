package io.fleetmq.session;

import io.fleetmq.core.message.BrokerMessage;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Slows this node's publishers down while their messages reach this node's subscribers late.
 *
 * <p>A PUBLISH is acknowledged once Kafka stored it; its delivery follows through the routing
 * consumer and the subscribers' sessions. When the node is overloaded, acknowledgements keep coming
 * at Kafka's pace while deliveries fall further behind, and the end-to-end latency grows without a
 * bound the publishers ever feel. This closes the loop: a message that reaches a subscriber's
 * session more than {@code delay} after the node received it arrives <em>late</em>. While the
 * newest arrival was late (and came within half the delay: without arrivals nothing is left to be
 * late), the node is <em>behind</em>, and sessions hold their clients' new PUBLISH packets (see
 * {@link PacketGate}) until an arrival is on time again, or for {@code maxWait} at most. A held
 * PUBLISH is not acknowledged, so each publisher stops within its window (QoS 1/2) or once the
 * transport stops reading its socket (QoS 0). Releasing as soon as the newest arrival is on time,
 * rather than after a quiet period, keeps the pipeline from running dry between holds.
 *
 * <p>Only what the node itself can judge counts:
 * <ul>
 *   <li>The delay runs from the message's receipt (its {@link BrokerMessage#createdAtMillis()}) to
 *   its arrival in the subscriber's session: Kafka, routing and the actors' turns. Time a message
 *   then waits for a client's receive window or socket does not count, so a slow or stalled
 *   subscriber slows no one but itself (its own queue bounds it). For a connected persistent
 *   DEVICE session, the arrival is the notice that the message is stored in its queue in Redis
 *   ({@link DeviceQueueReader#queued}); entries it reads from the queue later waited for the client
 *   and do not count. For a persistent APPLICATION session, or a shared subscription read from a
 *   backlog, the arrival is the routing node's write of the message into the backlog in Kafka
 *   ({@link #storedInBacklogs}), connected or not: how soon the client reads it from there is the
 *   client's own pace.</li>
 *   <li>Only messages of publishers that have their session on this node count, so their receipt
 *   time is this node's own clock: another node's clock, set differently, cannot make this one
 *   hold its publishers.</li>
 * </ul>
 * Nothing is refused or dropped: publishers wait. {@code maxWait} bounds a wait, so no combination
 * of clients can stop a publisher for good.
 *
 * <p>A step of the pipeline that works on batches can stall with nothing arriving at all: while
 * Redis rewrites its append-only file, say, a DEVICE queue write may take a second, and no late
 * arrival says so until it completes. Such a step is a {@link Stage}: while it works on a message
 * of this node's publishers received more than the delay ago, the node is behind as if that message
 * had arrived late. A stage counts for at most {@code maxWait} past the delay: a step stuck longer
 * than that is away rather than slow (its messages wait, stored, until it is back), and holding the
 * publishers longer would bring nothing to a subscriber sooner.
 */
public final class DeliveryBackpressure {

    private static final Logger log = LoggerFactory.getLogger(DeliveryBackpressure.class);

    /** Never behind: for nodes and tests without it. */
    public static final DeliveryBackpressure OFF = new DeliveryBackpressure();

    /** Someone waiting until the node caught up. */
    private record Waiter(long sinceNanos, Resume resume) {
    }

    /** What a waiter is told when its wait ends. */
    @FunctionalInterface
    public interface Resume {

        /** @param timedOut the node was still behind after the longest wait */
        void resume(boolean timedOut);
    }

    private final long delayMillis;
    private final long delayNanos;
    private final long maxWaitNanos;
    /** How old a stage's oldest message may be and still hold publishers: the delay plus the longest wait. */
    private final long stallCapMillis;
    private final LongSupplier wallMillis;
    /** The stages of {@link #stage}; replaced, never changed, so {@link #behind} reads it without a lock. */
    private volatile Stage[] stages = new Stage[0];
    private final long tickNanos;
    private final long staleNanos;
    private final ScheduledExecutorService timers;
    private final LongSupplier nanos;
    private final ConcurrentLinkedQueue<Waiter> waiters = new ConcurrentLinkedQueue<>();
    /** Set while a tick is scheduled or running. */
    private final AtomicBoolean ticking = new AtomicBoolean();
    private final Counter late;
    private final Counter caughtUp;
    private final Counter timedOut;
    private final Counter stalls;
    private volatile Predicate<String> localPublisher = id -> false;
    /** When a delivery last came late. */
    private volatile long lastLateNanos;
    /** The newest arrival of a message of this node's publishers was late. */
    private volatile boolean lateNow;

    private DeliveryBackpressure() {
        this.delayMillis = 0;
        this.delayNanos = 0;
        this.maxWaitNanos = 0;
        this.stallCapMillis = 0;
        this.wallMillis = System::currentTimeMillis;
        this.tickNanos = 0;
        this.staleNanos = 0;
        this.timers = null;
        this.nanos = System::nanoTime;
        this.late = null;
        this.caughtUp = null;
        this.timedOut = null;
        this.stalls = null;
    }

    /**
     * @param delay   deliveries later than this make the node behind; zero turns backpressure off
     * @param maxWait the longest a held PUBLISH waits
     * @param timers  runs the checks that end the waits
     * @param nanos   the monotonic clock
     */
    public DeliveryBackpressure(Duration delay, Duration maxWait, ScheduledExecutorService timers,
            LongSupplier nanos, MeterRegistry meters) {
        this(delay, maxWait, timers, nanos, System::currentTimeMillis, meters);
    }

    /**
     * @param wallMillis the wall clock, as {@link BrokerMessage#createdAtMillis()}: how old the
     *                   messages a {@link Stage} works on are
     */
    public DeliveryBackpressure(Duration delay, Duration maxWait, ScheduledExecutorService timers,
            LongSupplier nanos, LongSupplier wallMillis, MeterRegistry meters) {
        if (delay.isNegative() || maxWait.isNegative()) {
            throw new IllegalArgumentException("negative delay or wait");
        }
        this.delayMillis = Math.max(delay.isZero() ? 0 : 1, delay.toMillis());
        this.delayNanos = delay.toNanos();
        this.maxWaitNanos = maxWait.toNanos();
        this.stallCapMillis = delayMillis + maxWait.toMillis();
        this.wallMillis = wallMillis;
        // Waiters are looked at ten times per delay: a wait ends at most a tenth of it late.
        this.tickNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1), delayNanos / 10);
        this.staleNanos = delayNanos / 2;
        this.timers = timers;
        this.nanos = nanos;
        this.late = Counter.builder("fleetmq.publish.backpressure.late")
                .description("Messages of this node's publishers that reached a subscriber's session on this node, "
                        + "or an APPLICATION backlog it routed them to, later than mqtt.publish-backpressure-delay "
                        + "after their receipt")
                .register(meters);
        this.caughtUp = waits(meters, "caught_up");
        this.timedOut = waits(meters, "max_wait");
        this.stalls = Counter.builder("fleetmq.publish.backpressure.stalls")
                .description("Times a step of the delivery pipeline (writing DEVICE queues to Redis) worked on a "
                        + "message of this node's publishers for longer than mqtt.publish-backpressure-delay "
                        + "with nothing arriving meanwhile")
                .register(meters);
    }

    /** Registers the gauges of this incarnation of the node; the caller removes them when it ends. */
    public List<Gauge> registerGauges(MeterRegistry meters) {
        return List.of(
                Gauge.builder("fleetmq.publish.backpressure.behind", this, b -> b.behind() ? 1 : 0)
                        .description("1 while this node holds its clients' PUBLISH packets because deliveries are late")
                        .register(meters),
                Gauge.builder("fleetmq.publish.backpressure.waiting", waiters, ConcurrentLinkedQueue::size)
                        .description("Sessions holding their clients' PUBLISH packets until deliveries catch up")
                        .register(meters));
    }

    private static Counter waits(MeterRegistry meters, String outcome) {
        return Counter.builder("fleetmq.publish.backpressure.waits")
                .description("Waits of a session's PUBLISH packets for late deliveries to catch up, by how they ended")
                .tag("outcome", outcome)
                .register(meters);
    }

    /** Whether this node ever holds publishers. */
    public boolean enabled() {
        return delayNanos > 0;
    }

    /** Which publishers have their session on this node (set once the node's sessions exist). */
    public void localPublishers(Predicate<String> isLocal) {
        if (enabled()) { // OFF is shared: it keeps no one's sessions
            this.localPublisher = isLocal;
        }
    }

    /**
     * A routed message reached a subscriber's session at {@code nowMillis} (wall clock, as
     * {@link BrokerMessage#createdAtMillis()}). Any thread; cheap unless the message is late.
     */
    void arrived(BrokerMessage m, long nowMillis) {
        if (delayMillis == 0) {
            return;
        }
        boolean isLate = nowMillis - m.createdAtMillis() > delayMillis;
        if (!isLate && !lateNow) {
            return; // the common case: on time, and nothing to change
        }
        if (!localPublisher.test(m.publisherId())) {
            return;
        }
        if (isLate) {
            lastLateNanos = nanos.getAsLong();
            lateNow = true;
            late.increment();
        } else {
            lateNow = false; // caught up: the newest arrival was on time
        }
    }

    /**
     * The routing consumer stored {@code messages} in APPLICATION backlogs just now: each arrives
     * (see the class comment). Routing thread; cheap unless a message is late.
     */
    public void storedInBacklogs(List<BrokerMessage> messages) {
        if (delayMillis == 0 || messages.isEmpty()) {
            return;
        }
        long now = wallMillis.getAsLong();
        for (int i = 0; i < messages.size(); i++) {
            arrived(messages.get(i), now);
        }
    }

    /**
     * Whether the newest arrival of a message of this node's publishers was late, and recent, or a
     * {@link Stage} has been working on such a message since more than the delay after its receipt:
     * new PUBLISH packets wait meanwhile. Without arrivals for half the delay, and with no stage
     * stalled, the node is not behind (nothing is left in the pipeline to be late).
     */
    public boolean behind() {
        return lateNow && nanos.getAsLong() - lastLateNanos < staleNanos || stalled();
    }

    /** Whether a stage works on a message received more than the delay ago (and not too long ago). */
    private boolean stalled() {
        Stage[] all = stages;
        long now = Long.MIN_VALUE;
        for (Stage stage : all) {
            long oldest = stage.oldestMillis;
            if (oldest == Stage.IDLE) {
                continue;
            }
            if (now == Long.MIN_VALUE) {
                now = wallMillis.getAsLong();
            }
            long age = now - oldest;
            if (age > delayMillis && age <= stallCapMillis) {
                if (stage.counted.compareAndSet(false, true)) {
                    stalls.increment();
                }
                return true;
            }
        }
        return false;
    }

    /**
     * A new step between the receipt of messages and their arrival, one that works on batches (see
     * the class comment). Steps of a node that never holds publishers are not watched.
     */
    public synchronized Stage stage() {
        Stage stage = new Stage();
        if (enabled()) {
            Stage[] more = java.util.Arrays.copyOf(stages, stages.length + 1);
            more[more.length - 1] = stage;
            stages = more;
        }
        return stage;
    }

    /**
     * One step that works on batches of messages, driven by one thread: it tells {@link #working}
     * for each message of a batch as it takes it on, and {@link #done} once the batch is through. A
     * batch that failed and is taken on again keeps the receipt of its oldest message.
     */
    public final class Stage {

        static final long IDLE = Long.MAX_VALUE;

        /** The receipt (wall clock) of the oldest message of this node's publishers under way, or IDLE. */
        private volatile long oldestMillis = IDLE;
        /** Whether this batch's stall was counted. */
        private final AtomicBoolean counted = new AtomicBoolean();

        private Stage() {
        }

        /** The step took {@code m} on. Cheap: the predicate is asked only about a message older than all before it. */
        public void working(BrokerMessage m) {
            if (delayMillis == 0) {
                return;
            }
            long receipt = m.createdAtMillis();
            if (receipt < oldestMillis && localPublisher.test(m.publisherId())) {
                oldestMillis = receipt;
            }
        }

        /** Everything taken on so far is through: nothing is under way. */
        public void done() {
            if (oldestMillis != IDLE) {
                oldestMillis = IDLE;
                counted.set(false);
            }
        }
    }

    /**
     * Tells {@code resume} (from the timer thread) once the node is no longer {@link #behind}, or
     * after the longest wait if it still is.
     */
    void await(Resume resume) {
        waiters.add(new Waiter(nanos.getAsLong(), resume));
        if (ticking.compareAndSet(false, true)) {
            schedule();
        }
    }

    private void schedule() {
        try {
            timers.schedule(this::tick, tickNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // The node is stopping: nobody is left waiting on a check that never comes.
            ticking.set(false);
            for (Waiter w = waiters.poll(); w != null; w = waiters.poll()) {
                tell(w, true);
            }
        }
    }

    private void tick() {
        long now = nanos.getAsLong();
        if (!behind()) {
            for (Waiter w = waiters.poll(); w != null; w = waiters.poll()) {
                caughtUp.increment();
                tell(w, false);
            }
        } else {
            // Waiters queue in the order they began to wait: the ones waited out are at the head.
            // Only this tick takes waiters out (ticks never overlap), so the head looked at is the one taken.
            for (Waiter w = waiters.peek(); w != null && now - w.sinceNanos() >= maxWaitNanos; w = waiters.peek()) {
                waiters.poll();
                timedOut.increment();
                tell(w, true);
            }
        }
        ticking.set(false);
        // A waiter added after the loop looked found the flag still set: it is looked at next time.
        if (!waiters.isEmpty() && ticking.compareAndSet(false, true)) {
            schedule();
        }
    }

    private static void tell(Waiter w, boolean timedOut) {
        try {
            w.resume().resume(timedOut);
        } catch (RuntimeException e) {
            log.warn("A session waiting for deliveries to catch up could not be resumed", e);
        }
    }
}
