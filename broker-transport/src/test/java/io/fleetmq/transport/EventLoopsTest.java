package io.fleetmq.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** How many I/O threads the listeners get. */
class EventLoopsTest {

    @Test
    void byDefaultOneIoThreadPerCoreAndAtLeastTwo() {
        try (EventLoops loops = new EventLoops(0)) {
            assertEquals(Math.max(2, Runtime.getRuntime().availableProcessors()), loops.ioThreads());
        }
    }

    @Test
    void asManyIoThreadsAsConfigured() {
        try (EventLoops loops = new EventLoops(3)) {
            assertEquals(3, loops.ioThreads());
        }
    }
}
