package io.fleetmq.core.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageCodec;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.core.subscription.Subscription;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Splitting a downlink record whose matched subscriptions make it larger than a Kafka record may be. */
class DownlinkSplitTest {

    private static final BrokerMessage MESSAGE = BrokerMessage.of("fleet/alerts", new byte[10_000], 1, false, "pub",
            1_700_000_000_000L);

    private static List<Subscription> subscribers(int n) {
        List<Subscription> subs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            subs.add(new Subscription("subscriber-" + i, "fleet/#", null, 1, false, false, 0, 0, "node-2"));
        }
        return subs;
    }

    @Test
    void aRecordThatFitsIsNotSplit() {
        Downlink d = new Downlink(3, 77, MESSAGE, subscribers(10));
        byte[] message = MessageCodec.encode(MESSAGE);
        List<Downlink> parts = ClusterCodec.split(d, message.length, 1_000_000);
        assertEquals(1, parts.size());
        assertSame(d, parts.get(0));
        assertEquals(ClusterCodec.encode(d).length, ClusterCodec.encode(d, message).length);
    }

    @Test
    void thousandsOfSubscribersAreSpreadOverPartsThatEachFitAndCoverEverySubscriberOnce() throws Exception {
        List<Subscription> subs = subscribers(3_000);
        Downlink d = new Downlink(3, 77, MESSAGE, subs);
        byte[] message = MessageCodec.encode(MESSAGE);
        int max = 40_000;
        assertTrue(ClusterCodec.encode(d).length > max, "the whole record must exceed the limit for this test");

        List<Downlink> parts = ClusterCodec.split(d, message.length, max);

        assertTrue(parts.size() > 1, "split into " + parts.size());
        List<Subscription> covered = new ArrayList<>();
        for (int i = 0; i < parts.size(); i++) {
            byte[] encoded = ClusterCodec.encode(parts.get(i), message);
            assertTrue(encoded.length <= max, "part " + i + " has " + encoded.length + " bytes");
            Downlink back = ClusterCodec.decodeDownlink(encoded);
            assertEquals(i, back.part(), "parts are numbered in order");
            assertEquals(3, back.sourcePartition());
            assertEquals(77, back.sourceOffset());
            assertEquals(MESSAGE.topic(), back.message().topic());
            assertEquals(new Downlink.Source(3, 77, i), ClusterCodec.downlinkSource(encoded));
            covered.addAll(back.matched());
        }
        assertEquals(subs, covered, "every subscriber exactly once, in order");
    }

    @Test
    void aClientsOverlappingSubscriptionsStayInOnePart() {
        List<Subscription> subs = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            subs.add(new Subscription("client-" + i, "fleet/#", null, 1, false, false, 0, 1, "node-2"));
            subs.add(new Subscription("client-" + i, "fleet/+", null, 2, false, false, 0, 2, "node-2"));
        }
        Downlink d = new Downlink(0, 1, MESSAGE, subs);
        List<Downlink> parts = ClusterCodec.split(d, MessageCodec.encode(MESSAGE).length, 25_000);
        assertTrue(parts.size() > 1);
        Set<String> seen = new HashSet<>();
        for (Downlink part : parts) {
            Set<String> here = new HashSet<>();
            part.matched().forEach(s -> here.add(s.clientId()));
            for (String client : here) {
                assertTrue(seen.add(client), client + " is in more than one part, so it would get two copies");
                assertEquals(2, part.matched().stream().filter(s -> s.clientId().equals(client)).count());
            }
        }
        assertEquals(500, seen.size());
    }

    @Test
    void aMessageTooLargeEvenAloneStaysOneRecord() {
        Downlink d = new Downlink(0, 1, MESSAGE, subscribers(100));
        // One record, which the writer's permanent error sends to the dead-letter topic once.
        assertEquals(List.of(d), ClusterCodec.split(d, MessageCodec.encode(MESSAGE).length, 5_000));
    }

    @Test
    void anUnsplitRecordReadsAsPartZeroAndABrokenPartNumberIsRefused() throws Exception {
        Downlink d = new Downlink(1, 2, MESSAGE, subscribers(1));
        byte[] encoded = ClusterCodec.encode(d);
        assertEquals(new Downlink.Source(1, 2, 0), ClusterCodec.downlinkSource(encoded));
        assertEquals(0, ClusterCodec.decodeDownlink(encoded).part());

        byte[] part = ClusterCodec.encode(new Downlink(1, 2, MESSAGE, subscribers(1), 4));
        part[2 + 4 + 8 + 3] = 0; // part number 4 -> 0, which only the first part's own layout may carry
        assertThrows(MessageFormatException.class, () -> ClusterCodec.decodeDownlink(part));
        assertThrows(MessageFormatException.class, () -> ClusterCodec.downlinkSource(new byte[] {1, 30, 0}));
    }
}
