package io.fleetmq.kafka.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.cluster.Downlink;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The commit metadata of a backlog: what was sent, and the source positions below the commit. */
class BacklogPositionTest {

    @Test
    void roundTripsEveryPublishPartitionsPosition() {
        Map<Integer, Downlink.Source> seen = new HashMap<>();
        seen.put(0, new Downlink.Source(0, 123_456_789_012L, 0));
        seen.put(15, new Downlink.Source(15, 7, 3));
        AppBacklog.Position p = new AppBacklog.Position(42, seen);
        assertEquals(p, AppBacklog.Position.parse(p.format()));
    }

    @Test
    void readsTheEarlierFormatAndIgnoresWhatItCannotRead() {
        assertEquals(new AppBacklog.Position(17, Map.of()), AppBacklog.Position.parse("lastSent=17"));
        assertEquals(new AppBacklog.Position(-1, Map.of()), AppBacklog.Position.parse(null));
        assertEquals(new AppBacklog.Position(5, Map.of()), AppBacklog.Position.parse("lastSent=5;seen=zz"));
    }

    @Test
    void staysWithinKafkasMetadataLimitByLeavingPositionsOut() {
        Map<Integer, Downlink.Source> seen = new HashMap<>();
        for (int p = 0; p < 2_000; p++) {
            seen.put(p, new Downlink.Source(p, Long.MAX_VALUE, 0));
        }
        String metadata = new AppBacklog.Position(9, seen).format();
        assertTrue(metadata.length() <= 4_096, metadata.length() + " chars");
        assertEquals(9, AppBacklog.Position.parse(metadata).lastSent());
    }
}
