package io.fleetmq.core.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.core.message.UserProperty;
import io.fleetmq.core.subscription.Subscription;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClusterCodecTest {

    private static final BrokerMessage WILL = new BrokerMessage("wills/dev-1", "gone".getBytes(StandardCharsets.UTF_8),
            1, true, "dev-1", 1_700_000_000_000L, 60, 1, "text/plain", "reply/dev-1", new byte[] {1, 2},
            List.of(new UserProperty("a", "1"), new UserProperty("a", "2")));

    private static final Subscription SHARED = new Subscription("c", "jobs/#", "workers", 1, false, false, 0, 7, "node-2");
    private static final Subscription PLAIN = new Subscription("c", "a/+/b", null, 2, true, true, 2, 0, "node-2");

    @Test
    void aSessionRecordWithoutTheQueuingFlagQueuesWhenItsExpiryIsAboveZero() throws MessageFormatException {
        for (long expiry : new long[] {0, 300}) {
            byte[] now = ClusterCodec.encode(new SessionState("dev-1", "node-1", 42, 7, false, expiry, 999, null,
                    "req-1", "DEVICE", false));
            byte[] before = java.util.Arrays.copyOf(now, now.length - 1); // as written before the flag existed
            assertEquals(expiry > 0, ClusterCodec.decodeSessionState(before).queuing(), "expiry " + expiry);
            assertEquals(false, ClusterCodec.decodeSessionState(now).queuing());
        }
    }

    @Test
    void theClearFlagTravelsInAHeaderSoAnAnswersValueStaysWhatEarlierNodesRead() throws MessageFormatException {
        for (boolean present : new boolean[] {false, true}) {
            for (boolean clear : new boolean[] {false, true}) {
                NodeCommand.ConnectAccepted a = new NodeCommand.ConnectAccepted("r", "dev-1", 3, present, true, clear);
                byte[] value = ClusterCodec.encode(a);
                // The value of an answer without the flag, byte for byte: an earlier node decodes it.
                assertArrayEquals(ClusterCodec.encode(new NodeCommand.ConnectAccepted("r", "dev-1", 3, present, true,
                        !present)), value);
                assertEquals(a, ClusterCodec.decodeCommand(value, ClusterCodec.clearStoreHeader(a)));
                // Without the header (an earlier sequencer's answer): every new session clears, as before.
                assertEquals(!present, ((NodeCommand.ConnectAccepted) ClusterCodec.decodeCommand(value)).clearStore());
            }
            byte[] now = ClusterCodec.encode(new NodeCommand.ConnectAccepted("r", "dev-1", 3, present, true, false));
            byte[] oldest = java.util.Arrays.copyOf(now, now.length - 1);
            assertEquals(new NodeCommand.ConnectAccepted("r", "dev-1", 3, present, false, !present),
                    ClusterCodec.decodeCommand(oldest), "an answer from before the queuing flag");
        }
        assertThrows(MessageFormatException.class, () -> ClusterCodec.decodeCommand(
                ClusterCodec.encode(new NodeCommand.ConnectAccepted("r", "dev-1", 3, false, true, true)), new byte[] {2}));
        assertEquals(null, ClusterCodec.clearStoreHeader(new NodeCommand.TakeOver("dev-1", 4)));
    }

    private static final SessionState.ClientInfo CLIENT =
            new SessionState.ClientInfo("10.1.2.3", "alice", "5", 1_700_000_000_123L, 60);

    /**
     * Every node holds the decoded session and subscription records of the whole cluster: node IDs,
     * client types and protocol versions are shared instances, and each subscription shares its
     * record's client ID rather than holding a copy of its own.
     */
    @Test
    void decodedRecordsShareTheirRepeatedStrings() throws MessageFormatException {
        SessionState state = new SessionState("dev-1", "node-1", 42, 7, true, 300, 0, null, "req-1", "DEVICE",
                true, CLIENT);
        SessionState a = ClusterCodec.decodeSessionState(ClusterCodec.encode(state));
        SessionState b = ClusterCodec.decodeSessionState(ClusterCodec.encode(state));
        assertEquals(state, a);
        assertSame(a.nodeId(), b.nodeId());
        assertSame(a.clientType(), b.clientType());
        assertSame(a.client().protocol(), b.client().protocol());
        assertNotSame(a.clientId(), b.clientId(), "client IDs are many: each record has its own");

        ClientSubscriptions subs = new ClientSubscriptions("c", "node-2", 9, List.of(SHARED, PLAIN));
        ClientSubscriptions back = ClusterCodec.decodeSubscriptions(ClusterCodec.encode(subs));
        assertEquals(subs, back);
        for (Subscription s : back.subscriptions()) {
            assertSame(back.clientId(), s.clientId());
            assertSame(back.nodeId(), s.nodeId());
        }
    }

    @Test
    void sessionRecordsOfOlderNodesDecodeWithoutConnectionDetails() throws MessageFormatException {
        SessionState state = new SessionState("dev-1", "node-1", 42, 7, true, 300, 0,
                new SessionState.PendingWill(WILL, 5), "req-1", "DEVICE", true, CLIENT);
        byte[] now = ClusterCodec.encode(state);
        SessionState withoutClient = new SessionState("dev-1", "node-1", 42, 7, true, 300, 0,
                new SessionState.PendingWill(WILL, 5), "req-1", "DEVICE", true);
        byte[] without = ClusterCodec.encode(withoutClient);
        // An older node's record ends after the queuing flag; one without details is written the same way.
        // The block: its length, address "10.1.2.3", user name "alice", protocol "5", since, keep alive.
        byte[] older = Arrays.copyOf(now, now.length - 4 - (4 + 8) - (4 + 5) - (4 + 1) - 8 - 4);
        assertArrayEquals(without, older);
        assertEquals(state, ClusterCodec.decodeSessionState(now));
        assertEquals(withoutClient, ClusterCodec.decodeSessionState(older));

        SessionEvent.Connect connect = new SessionEvent.Connect("r", "dev-1", "node-1", 42, false, 300, null,
                "DEVICE", CLIENT);
        byte[] event = ClusterCodec.encode(connect);
        assertEquals(connect, ClusterCodec.decodeEvent(event));
        byte[] olderEvent = ClusterCodec.encode(new SessionEvent.Connect("r", "dev-1", "node-1", 42, false, 300,
                null, "DEVICE"));
        SessionEvent.Connect back = (SessionEvent.Connect) ClusterCodec.decodeEvent(olderEvent);
        assertEquals(null, back.client());
        assertEquals("dev-1", back.clientId());
    }

    @Test
    void fieldsALaterVersionAddsToTheConnectionDetailsAreSkipped() throws MessageFormatException {
        SessionState state = new SessionState("dev-1", "node-1", 42, 7, true, 300, 0, null, "req-1", "DEVICE",
                true, new SessionState.ClientInfo(null, null, "3.1.1", 5, 0));
        byte[] now = ClusterCodec.encode(state);
        // The block is the record's tail: its length, then its fields. Grow it by two unknown bytes.
        int blockLength = 4 + 4 + (4 + 5) + 8 + 4; // no address, no user name, "3.1.1", since, keep alive
        assertEquals(blockLength, java.nio.ByteBuffer.wrap(now, now.length - blockLength - 4, 4).getInt());
        byte[] later = Arrays.copyOf(now, now.length + 2);
        java.nio.ByteBuffer.wrap(later, now.length - blockLength - 4, 4).putInt(blockLength + 2);
        assertEquals(state, ClusterCodec.decodeSessionState(later));
    }

    @Test
    void everyRecordSurvivesARoundTrip() throws MessageFormatException {
        NodeStatus node = new NodeStatus("node-1", 42, true, 123);
        assertEquals(node, ClusterCodec.decodeNodeStatus(ClusterCodec.encode(node)));

        SessionState state = new SessionState("dev-1", "node-1", 42, 7, false, 300, 999,
                new SessionState.PendingWill(WILL, 5), "req-1", "DEVICE", true);
        assertEquals(state, ClusterCodec.decodeSessionState(ClusterCodec.encode(state)));
        SessionState noWill = new SessionState("dev-1", "node-1", 42, 7, true, 0, 0, null, "req-1", "APPLICATION", true);
        assertEquals(noWill, ClusterCodec.decodeSessionState(ClusterCodec.encode(noWill)));

        ClientSubscriptions subs = new ClientSubscriptions("c", "node-2", 9, List.of(SHARED, PLAIN));
        assertEquals(subs, ClusterCodec.decodeSubscriptions(ClusterCodec.encode(subs)));

        List<SessionEvent> events = List.of(
                new SessionEvent.Connect("r", "dev-1", "node-1", 42, false, 300, new SessionState.PendingWill(WILL, 0), "DEVICE"),
                new SessionEvent.Disconnected("dev-1", 3, 0, null, 555),
                new SessionEvent.WillPublished("dev-1", 3),
                new SessionEvent.Expired("dev-1", 3),
                new SessionEvent.Released("dev-1", 4));
        for (SessionEvent e : events) {
            assertEquals(e, ClusterCodec.decodeEvent(ClusterCodec.encode(e)));
        }
        List<NodeCommand> commands = List.of(new NodeCommand.ConnectAccepted("r", "dev-1", 4, true, true, false),
                new NodeCommand.ConnectAccepted("r", "dev-1", 1, false, true, true),
                new NodeCommand.ConnectAccepted("r", "dev-1", 1, false, false, false),
                new NodeCommand.TakeOver("dev-1", 5),
                new NodeCommand.Queued("dev-1", 77, new Downlink(1, 2, WILL, List.of(PLAIN))),
                new NodeCommand.AdminDisconnect("a/b/c", 3, true),
                new NodeCommand.AdminDisconnect("dev-1", 1, false));
        for (NodeCommand c : commands) {
            assertEquals(c, ClusterCodec.decodeCommand(ClusterCodec.encode(c), ClusterCodec.clearStoreHeader(c)));
        }

        Downlink downlink = new Downlink(3, 12_345, WILL, List.of(SHARED, PLAIN));
        Downlink back = ClusterCodec.decodeDownlink(ClusterCodec.encode(downlink));
        assertEquals(downlink, back);
        assertArrayEquals(WILL.payload(), back.message().payload());
    }

    @Test
    void aRecordOfAnotherTypeOrVersionIsRefused() {
        byte[] node = ClusterCodec.encode(new NodeStatus("n", 1, true, 1));
        assertThrows(MessageFormatException.class, () -> ClusterCodec.decodeSessionState(node));
        assertThrows(MessageFormatException.class, () -> ClusterCodec.decodeEvent(node));
        byte[] future = node.clone();
        future[0] = 9;
        assertThrows(MessageFormatException.class, () -> ClusterCodec.decodeNodeStatus(future));
    }

    @Test
    void truncatedOrPaddedRecordsAreRefused() {
        byte[] full = ClusterCodec.encode(new Downlink(1, 2, WILL, List.of(PLAIN)));
        for (int length = 0; length < full.length; length++) {
            byte[] cut = Arrays.copyOf(full, length);
            assertThrows(MessageFormatException.class, () -> ClusterCodec.decodeDownlink(cut), "length " + length);
        }
        byte[] padded = Arrays.copyOf(full, full.length + 1);
        assertThrows(MessageFormatException.class, () -> ClusterCodec.decodeDownlink(padded));
    }

    @Test
    void anInvalidSubscriptionInsideARecordIsAFormatError() {
        byte[] bytes = ClusterCodec.encode(new ClientSubscriptions("c", "n", 1, List.of(PLAIN)));
        String text = new String(bytes, StandardCharsets.ISO_8859_1).replace("a/+/b", "a/#/b");
        assertThrows(MessageFormatException.class,
                () -> ClusterCodec.decodeSubscriptions(text.getBytes(StandardCharsets.ISO_8859_1)));
    }

    @Test
    void aDrainCommandAndNodeInfoSurviveARoundTripAndInfoOfALaterVersionIsRead() throws MessageFormatException {
        NodeCommand drain = new NodeCommand.Drain(true, "node-1");
        assertEquals(drain, ClusterCodec.decodeCommand(ClusterCodec.encode(drain)));
        NodeInfo info = new NodeInfo("10.0.0.1:1883", 1_700_000_000_000L, "1.2.3", 17, true);
        byte[] bytes = ClusterCodec.encode(info);
        assertEquals(info, ClusterCodec.decodeNodeInfo(bytes));
        byte[] later = Arrays.copyOf(bytes, bytes.length + 5); // fields a later version added
        assertEquals(info, ClusterCodec.decodeNodeInfo(later));
        NodeInfo unknown = new NodeInfo(null, 0, null, 0, false);
        assertEquals(unknown, ClusterCodec.decodeNodeInfo(ClusterCodec.encode(unknown)));
    }

    @Test
    void aCommandOfAnUnknownTypeIsRefusedAsMalformed() {
        byte[] unknown = {ClusterCodec.FORMAT_VERSION, 99, 0, 0};
        assertThrows(MessageFormatException.class, () -> ClusterCodec.decodeCommand(unknown));
    }
}
