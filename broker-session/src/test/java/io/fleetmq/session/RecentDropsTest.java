package io.fleetmq.session;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;

class RecentDropsTest {

    @Test
    void keepsTheNewestWithinItsCapacityAndCutsLongText() {
        RecentDrops ring = new RecentDrops(3);
        for (int i = 0; i < 5; i++) {
            ring.add(i, "expired", "c" + i, "t/" + i);
        }
        List<RecentDrops.Drop> all = ring.all();
        assertEquals(List.of("c2", "c3", "c4"), all.stream().map(RecentDrops.Drop::clientId).toList());
        assertEquals(List.of(2L, 3L, 4L), all.stream().map(RecentDrops.Drop::sequence).toList());
        assertEquals(List.of("c4"), ring.since(4).stream().map(RecentDrops.Drop::clientId).toList());
        assertEquals(List.of(), ring.since(5));
        assertEquals(5, ring.written());

        ring.add(9, "expired", "x".repeat(1000), null);
        assertEquals(RecentDrops.MAX_TEXT, ring.since(5).get(0).clientId().length());
    }

    @Test
    void detailedDropsAreCountedAndKeptCountOnlyOnesOnlyCounted() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        MessageDrops drops = new MessageDrops(meters, new RecentDrops(10), () -> 42L);
        drops.count(MessageDrops.Reason.PACKET_TOO_LARGE, "client", "a/b");
        drops.count(MessageDrops.Reason.SESSION_ENDED, 5);
        assertEquals(1.0, meters.get("fleetmq.messages.dropped").tag("reason", "packet_too_large").counter().count());
        assertEquals(5.0, meters.get("fleetmq.messages.dropped").tag("reason", "session_ended").counter().count());
        assertEquals(List.of(new RecentDrops.Drop(0, 42, "packet_too_large", "client", "a/b")), drops.recent().all());
    }
}
