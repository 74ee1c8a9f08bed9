package io.fleetmq.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.message.BrokerMessage;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** When the node counts as behind, and how the waits for it end. */
class DeliveryBackpressureTest {

    private static final long NOW = 5_000_000L;

    private final ManualScheduler timers = new ManualScheduler();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final DeliveryBackpressure b = new DeliveryBackpressure(Duration.ofMillis(100), Duration.ofSeconds(1),
            timers, timers::nanoTime, meters);
    private final List<Boolean> resumed = new ArrayList<>();

    DeliveryBackpressureTest() {
        b.localPublishers(Set.of("local")::contains);
    }

    private static BrokerMessage from(String publisher, long createdAtMillis) {
        return new BrokerMessage("t", new byte[] {1}, 1, false, publisher, createdAtMillis, BrokerMessage.NO_EXPIRY,
                BrokerMessage.PAYLOAD_FORMAT_ABSENT, null, null, null, List.of());
    }

    private double waits(String ended) {
        return meters.get("fleetmq.publish.backpressure.waits").tag("outcome", ended).counter().count();
    }

    @Test
    void onlyALateMessageOfAPublisherOnThisNodeMakesItBehind() {
        b.arrived(from("local", NOW - 100), NOW);
        assertFalse(b.behind(), "exactly the delay is on time");
        b.arrived(from("elsewhere", NOW - 5_000), NOW);
        assertFalse(b.behind(), "a publisher on another node has another clock");
        assertEquals(0, meters.get("fleetmq.publish.backpressure.late").counter().count());

        b.arrived(from("local", NOW - 101), NOW);
        assertTrue(b.behind());
        assertEquals(1, meters.get("fleetmq.publish.backpressure.late").counter().count());
        b.arrived(from("elsewhere", NOW), NOW);
        assertTrue(b.behind(), "another node's publisher's message says nothing");
        b.arrived(from("local", NOW - 20), NOW);
        assertFalse(b.behind(), "caught up: the newest arrival was on time");
    }

    @Test
    void messagesStoredInApplicationBacklogsArriveWhenStored() {
        DeliveryBackpressure atWall = new DeliveryBackpressure(Duration.ofMillis(100), Duration.ofSeconds(1), timers,
                timers::nanoTime, () -> NOW, meters);
        atWall.localPublishers(Set.of("local")::contains);
        atWall.storedInBacklogs(List.of(from("local", NOW - 50), from("elsewhere", NOW - 5_000)));
        assertFalse(atWall.behind(), "on time, and another node's publisher has another clock");
        atWall.storedInBacklogs(List.of(from("local", NOW - 20), from("local", NOW - 101)));
        assertTrue(atWall.behind(), "the newest stored was late");
        assertEquals(1, meters.get("fleetmq.publish.backpressure.late").counter().count());
        atWall.storedInBacklogs(List.of());
        assertTrue(atWall.behind(), "an empty batch says nothing");
        atWall.storedInBacklogs(List.of(from("local", NOW - 30)));
        assertFalse(atWall.behind(), "caught up");
    }

    @Test
    void withoutArrivalsForHalfTheDelayTheNodeIsNoLongerBehind() {
        b.arrived(from("local", NOW - 500), NOW);
        timers.advance(49, TimeUnit.MILLISECONDS);
        assertTrue(b.behind());
        timers.advance(1, TimeUnit.MILLISECONDS);
        assertFalse(b.behind(), "nothing left in the pipeline to be late");
    }

    @Test
    void aWaitEndsAtTheFirstCheckAfterTheNodeCaughtUp() {
        b.arrived(from("local", NOW - 500), NOW);
        b.await(resumed::add);
        b.await(resumed::add);
        timers.advance(40, TimeUnit.MILLISECONDS);
        assertEquals(List.of(), resumed, "still behind");
        b.arrived(from("local", NOW), NOW);
        timers.advance(10, TimeUnit.MILLISECONDS);
        assertEquals(List.of(false, false), resumed, "both caught up, not timed out");
        assertEquals(2, waits("caught_up"));
        assertEquals(0, timers.pending(), "no check is scheduled once nobody waits");
    }

    @Test
    void aWaitEndsAfterTheLongestWaitWhileDeliveriesStayLate() {
        b.arrived(from("local", NOW - 500), NOW);
        b.await(resumed::add);
        for (int i = 0; i < 24; i++) {
            timers.advance(40, TimeUnit.MILLISECONDS);
            b.arrived(from("local", NOW - 500), NOW); // late again and again
        }
        assertEquals(List.of(), resumed, "960 ms: still waiting");
        timers.advance(40, TimeUnit.MILLISECONDS);
        assertEquals(List.of(true), resumed, "released after the longest wait, still behind");
        assertTrue(b.behind());
        assertEquals(1, waits("max_wait"));
        assertEquals(0, waits("caught_up"));
    }

    /** The wall clock of {@link #staged}: {@link #NOW} when the test begins, moving with the timers. */
    private long wallMillis() {
        return NOW + TimeUnit.NANOSECONDS.toMillis(timers.nanoTime());
    }

    private DeliveryBackpressure staged() {
        DeliveryBackpressure s = new DeliveryBackpressure(Duration.ofMillis(100), Duration.ofSeconds(1), timers,
                timers::nanoTime, this::wallMillis, meters);
        s.localPublishers(Set.of("local")::contains);
        return s;
    }

    @Test
    void aStageWorkingOnAMessageOfThisNodeLongerThanTheDelayHoldsPublishersWithNothingArriving() {
        DeliveryBackpressure s = staged();
        DeliveryBackpressure.Stage stage = s.stage();
        long start = wallMillis();
        stage.working(from("elsewhere", start - 5_000));
        stage.working(from("local", start));
        stage.working(from("local", start + 1)); // newer: the oldest stays the measure
        timers.advance(100, TimeUnit.MILLISECONDS);
        assertFalse(s.behind(), "exactly the delay is not yet a stall");
        timers.advance(1, TimeUnit.MILLISECONDS);
        assertTrue(s.behind(), "under way for longer than the delay, nothing arrived meanwhile");
        timers.advance(500, TimeUnit.MILLISECONDS);
        assertTrue(s.behind(), "still stalled: arrivals going quiet do not release it");
        assertEquals(1, meters.get("fleetmq.publish.backpressure.stalls").counter().count(), "one stall, once");

        s.await(resumed::add);
        stage.done();
        timers.advance(10, TimeUnit.MILLISECONDS);
        assertFalse(s.behind());
        assertEquals(List.of(false), resumed, "released once the batch went through");
    }

    @Test
    void aBatchReadAgainAfterAFailureKeepsItsOldestReceipt() {
        DeliveryBackpressure s = staged();
        DeliveryBackpressure.Stage stage = s.stage();
        long first = wallMillis();
        stage.working(from("local", first));
        timers.advance(60, TimeUnit.MILLISECONDS);
        stage.working(from("local", first)); // read again; nothing new is older
        stage.working(from("local", wallMillis()));
        timers.advance(41, TimeUnit.MILLISECONDS);
        assertTrue(s.behind(), "measured from the first reading's oldest message");
    }

    @Test
    void aStageStuckLongerThanTheDelayAndTheLongestWaitIsAwayAndHoldsNoOne() {
        DeliveryBackpressure s = staged();
        DeliveryBackpressure.Stage stage = s.stage();
        stage.working(from("local", wallMillis()));
        timers.advance(1_100, TimeUnit.MILLISECONDS);
        assertTrue(s.behind(), "the delay plus the longest wait: still counted");
        timers.advance(1, TimeUnit.MILLISECONDS);
        assertFalse(s.behind(), "stuck for longer: its messages wait, stored, and publishers go on");

        stage.done();
        stage.working(from("local", wallMillis() - 5_000));
        assertFalse(s.behind(), "a batch whose oldest message is that old already is no stall either");
    }

    @Test
    void stagesOfANodeThatNeverHoldsPublishersAreNotWatched() {
        DeliveryBackpressure off = new DeliveryBackpressure(Duration.ZERO, Duration.ofSeconds(1), timers,
                timers::nanoTime, this::wallMillis, meters);
        off.localPublishers(id -> true);
        DeliveryBackpressure.Stage stage = off.stage();
        stage.working(from("local", wallMillis() - 200)); // late enough, and not too late, to hold if watched
        assertFalse(off.behind());
        DeliveryBackpressure.Stage shared = DeliveryBackpressure.OFF.stage();
        shared.working(from("local", System.currentTimeMillis() - 200));
        assertFalse(DeliveryBackpressure.OFF.behind());
    }

    @Test
    void offNeverHoldsAnyone() {
        DeliveryBackpressure off = new DeliveryBackpressure(Duration.ZERO, Duration.ofSeconds(1), timers,
                timers::nanoTime, meters);
        off.localPublishers(id -> true);
        off.arrived(from("local", 0), NOW);
        assertFalse(off.enabled());
        assertFalse(off.behind());
        DeliveryBackpressure.OFF.arrived(from("local", 0), NOW);
        assertFalse(DeliveryBackpressure.OFF.behind());
    }

    @Test
    void aStoppingNodeReleasesItsWaitersAtOnce() {
        ScheduledExecutorService stopped = Executors.newSingleThreadScheduledExecutor();
        stopped.shutdown();
        DeliveryBackpressure stopping = new DeliveryBackpressure(Duration.ofMillis(100), Duration.ofSeconds(1),
                stopped, System::nanoTime, meters);
        stopping.localPublishers(id -> true);
        stopping.arrived(from("local", NOW - 500), NOW);
        stopping.await(resumed::add);
        assertEquals(List.of(true), resumed);
    }

    @Test
    void gaugesShowWhetherTheNodeIsBehindAndWhoWaits() {
        b.registerGauges(meters);
        assertEquals(0, meters.get("fleetmq.publish.backpressure.behind").gauge().value());
        b.arrived(from("local", NOW - 500), NOW);
        b.await(resumed::add);
        assertEquals(1, meters.get("fleetmq.publish.backpressure.behind").gauge().value());
        assertEquals(1, meters.get("fleetmq.publish.backpressure.waiting").gauge().value());
        timers.advance(50, TimeUnit.MILLISECONDS);
        assertEquals(0, meters.get("fleetmq.publish.backpressure.behind").gauge().value());
        assertEquals(0, meters.get("fleetmq.publish.backpressure.waiting").gauge().value());
    }
}
