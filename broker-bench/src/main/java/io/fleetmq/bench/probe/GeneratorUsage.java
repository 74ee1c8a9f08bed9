package io.fleetmq.bench.probe;

import java.lang.management.ManagementFactory;

/**
 * The load generator's own footprint, reported beside the broker's: a generator that needs a thread
 * or megabytes per connection would measure itself, not the broker.
 *
 * @param threads   live JVM threads, event loops and the JVM's own
 * @param heapBytes heap in use (garbage included)
 * @param rssBytes  resident memory of this process; {@link ResourceSample#UNKNOWN} off Linux
 */
public record GeneratorUsage(int threads, long heapBytes, long rssBytes) {

    public static GeneratorUsage now() {
        return new GeneratorUsage(ManagementFactory.getThreadMXBean().getThreadCount(),
                ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed(),
                ProcStatus.rssBytes(ProcessHandle.current().pid()));
    }
}
