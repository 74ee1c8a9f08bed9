package io.fleetmq.bench.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ProcStatusTest {

    @Test
    void vmRssIsReadInKibibytes() {
        assertEquals(123_456L * 1024, ProcStatus.vmRss("Name:\tmosquitto\nVmPeak:\t  9000 kB\nVmRSS:\t  123456 kB\n"));
        assertEquals(ResourceSample.UNKNOWN, ProcStatus.vmRss("Name:\tkthreadd\nState:\tS (sleeping)\n"));
    }

    @Test
    void thisProcessHasAResidentSizeAndAMissingOneHasNone() {
        assumeTrue(Files.isDirectory(Path.of("/proc/self")), "not Linux");
        assertTrue(ProcStatus.rssBytes(ProcessHandle.current().pid()) > 1024 * 1024);
        assertEquals(ResourceSample.UNKNOWN, ProcStatus.rssBytes(Long.MAX_VALUE));
    }

    @Test
    void perConnectionIsTheDifferenceOverTheCountAndUnknownStaysUnknown() {
        assertEquals(2048.0, ResourceSample.perEach(1_000_000, 1_000_000 + 2048 * 100, 100));
        assertEquals(-10.0, ResourceSample.perEach(2000, 1000, 100), "memory may shrink between samples");
        assertTrue(Double.isNaN(ResourceSample.perEach(ResourceSample.UNKNOWN, 5, 1)));
        assertTrue(Double.isNaN(ResourceSample.perEach(1, 5, 0)));
    }

    @Test
    void theFileLimitMustLeaveRoomForEveryConnectionAndSaysHowToRaiseIt() {
        assertNull(FileLimit.problem(20_000, 19_000));
        assertNull(FileLimit.problem(-1, 1_000_000), "a platform that does not tell is not refused");
        String problem = FileLimit.problem(20_000, 100_000);
        assertTrue(problem.startsWith("the open-file limit is 20000, but 100000 connections need at least 101000"),
                problem);
        assertTrue(problem.contains("ulimit -n 1048576"), problem);
    }
}
