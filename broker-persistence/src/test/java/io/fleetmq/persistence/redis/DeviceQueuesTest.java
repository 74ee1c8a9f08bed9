package io.fleetmq.persistence.redis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.testkit.TestServices;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Against the embedded Redis of the test kit. */
class DeviceQueuesTest {

    private static Redis redis;
    private static DeviceQueues queues;
    private static String prefix;

    @BeforeAll
    static void connect() {
        redis = Redis.connect(new RedisSettings(TestServices.shared().redisUrl(), Duration.ofSeconds(5)));
        prefix = "t" + UUID.randomUUID().toString().substring(0, 8) + ":";
        queues = new DeviceQueues(redis.binaryCommands(), prefix, 3, Duration.ofMinutes(10));
    }

    @AfterAll
    static void close() {
        redis.close();
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static List<String> texts(List<DeviceQueues.Entry> entries) {
        return entries.stream().map(e -> new String(e.value(), StandardCharsets.UTF_8)).toList();
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> stage) {
        return stage.toCompletableFuture().join();
    }

    @Test
    void entriesComeBackInOrderAndGoWhenRemoved() {
        String c = "dev-order";
        long s1 = await(queues.append(c, 0, 10, b("a"))).seq();
        long s2 = await(queues.append(c, 1, 5, b("b"))).seq();
        long s3 = await(queues.append(c, 0, 11, b("c"))).seq();
        assertTrue(s1 < s2 && s2 < s3);
        assertEquals(List.of("a", "b", "c"), texts(await(queues.read(c, 0, 10))));
        assertEquals(List.of("b", "c"), texts(await(queues.read(c, s1, 10))));
        assertEquals(List.of("a"), texts(await(queues.read(c, 0, 1))));
        await(queues.remove(c, s1));
        assertEquals(List.of("b", "c"), texts(await(queues.read(c, 0, 10))));
        assertEquals(2L, await(queues.size(c)));
    }

    @Test
    void aMessageRoutedAgainIsQueuedOnce() {
        String c = "dev-dup";
        assertEquals(false, await(queues.append(c, 2, 100, b("x"))).duplicate());
        assertEquals(true, await(queues.append(c, 2, 100, b("x"))).duplicate());
        assertEquals(false, await(queues.append(c, 3, 1, b("other partition"))).duplicate());
        assertEquals(List.of("x", "other partition"), texts(await(queues.read(c, 0, 10))));
    }

    @Test
    void aRecordWrittenAgainAfterALaterOneOfItsPartitionIsStillQueued() {
        // The router's write of offset 99 failed while that of 100 was stored; routing the batch
        // again writes 99 (and 100) after 100. 99 was never queued: it must be, once.
        String c = "dev-gap";
        assertEquals(false, await(queues.append(c, 2, 100, b("later"))).duplicate());
        assertEquals(false, await(queues.append(c, 2, 99, b("earlier"))).duplicate());
        assertEquals(true, await(queues.append(c, 2, 100, b("later"))).duplicate());
        assertEquals(true, await(queues.append(c, 2, 99, b("earlier"))).duplicate());
        assertEquals(List.of("later", "earlier"), texts(await(queues.read(c, 0, 10))));
    }

    @Test
    void anAppendAnswersWithTheReaderTheLastReadRegisteredUntilItIsReleased() {
        String c = "dev-reader";
        DeviceQueues.Item m1 = new DeviceQueues.Item(0, 1, b("m1"));
        assertEquals(null, await(queues.appendAll(c, List.of(m1))).reader(), "nobody reads yet");
        assertEquals(List.of("m1"), texts(await(queues.read(c, 0, 10, "1 5 node-a"))));
        assertEquals("1 5 node-a", await(queues.appendAll(c, List.of(new DeviceQueues.Item(0, 2, b("m2"))))).reader());
        assertEquals("1 5 node-a", await(queues.appendAll(c, List.of(m1))).reader(), "also for a repeat");
        await(queues.read(c, 0, 10)); // a read that does not register leaves the reader
        await(queues.read(c, 0, 10, "2 6 node-b")); // the session moved on
        await(queues.release(c, "1 5 node-a")); // the old connection's release comes late
        assertEquals("2 6 node-b", await(queues.appendAll(c, List.of(new DeviceQueues.Item(0, 3, b("m3"))))).reader(),
                "a release of another reader leaves the registration");
        await(queues.release(c, "2 6 node-b"));
        assertEquals(null, await(queues.appendAll(c, List.of(new DeviceQueues.Item(0, 4, b("m4"))))).reader());
        String empty = "dev-reader-empty";
        await(queues.read(empty, 0, 10, "1 1 node-a"));
        assertTrue(redis.binaryCommands().pttl(prefix + "q:{" + empty + "}:m").toCompletableFuture().join() > 0,
                "a registration on an empty queue expires");
    }

    @Test
    void severalMessagesAreQueuedInOneCallInOrderSkippingRepeatsAndTrimmingToTheLimit() {
        String c = "dev-batch";
        assertEquals(false, await(queues.append(c, 0, 1, b("m1"))).duplicate());
        List<DeviceQueues.Appended> r = await(queues.appendAll(c, List.of(
                new DeviceQueues.Item(0, 1, b("m1")), // queued before
                new DeviceQueues.Item(0, 2, b("m2")),
                new DeviceQueues.Item(0, 2, b("m2")), // twice in one call
                new DeviceQueues.Item(1, 7, b("m3")),
                new DeviceQueues.Item(0, 3, b("m4"))))).items();
        assertEquals(5, r.size(), "one answer per message");
        assertEquals(List.of(true, false, true, false, false), r.stream().map(DeviceQueues.Appended::duplicate).toList());
        assertTrue(r.get(1).seq() < r.get(3).seq() && r.get(3).seq() < r.get(4).seq(), "sequence follows the call's order");
        assertEquals(List.of(0L, 0L, 0L, 0L, 1L), r.stream().map(DeviceQueues.Appended::dropped).toList(),
                "the fourth entry pushes the oldest (m1) out of a queue of three");
        assertEquals(List.of("m2", "m3", "m4"), texts(await(queues.read(c, 0, 10))));
    }

    @Test
    void aCallOfManyMessagesStoresThemAllInOrder() {
        // More messages than the script hands Redis in one command (100 per command).
        DeviceQueues big = new DeviceQueues(redis.binaryCommands(), prefix, 1000, Duration.ofMinutes(10));
        String c = "dev-many";
        List<DeviceQueues.Item> items = new java.util.ArrayList<>();
        List<String> expected = new java.util.ArrayList<>();
        for (int i = 0; i < 250; i++) {
            items.add(new DeviceQueues.Item(i % 3, 100 + i, b("m" + i)));
            expected.add("m" + i);
        }
        List<DeviceQueues.Appended> r = await(big.appendAll(c, items)).items();
        assertEquals(250, r.stream().filter(a -> !a.duplicate()).count());
        for (int i = 1; i < r.size(); i++) {
            assertEquals(r.get(i - 1).seq() + 1, r.get(i).seq(), "consecutive sequence numbers");
        }
        assertEquals(expected, texts(await(big.read(c, 0, 1000))));
        assertTrue(await(big.appendAll(c, items)).items().stream().allMatch(DeviceQueues.Appended::duplicate),
                "the same call again queues nothing");
    }

    @Test
    void aPositionIsRememberedForAWindowOfLaterOnesAndBeyondItTakenAsQueued() {
        DeviceQueues big = new DeviceQueues(redis.binaryCommands(), prefix, 10 * DeviceQueues.SEEN_WINDOW,
                Duration.ofMinutes(10));
        String c = "dev-window";
        int w = DeviceQueues.SEEN_WINDOW;
        // Even offsets only, one per call: the odd ones between were never queued for this client.
        for (int i = 1; i <= w; i++) {
            assertEquals(false, await(big.append(c, 0, 2 * i, b("m" + i))).duplicate());
        }
        assertEquals(true, await(big.append(c, 0, 2, b("m1"))).duplicate(),
                "the first position is still within a window of later ones");
        assertEquals(false, await(big.append(c, 0, 3, b("gap"))).duplicate(),
                "never queued, below the highest offset: queued now (a write that failed before a later one)");
        for (int i = w + 1; i <= 2 * w + 1; i++) {
            assertEquals(false, await(big.append(c, 0, 2 * i, b("m" + i))).duplicate());
        }
        assertEquals(true, await(big.append(c, 0, 5, b("old gap"))).duplicate(),
                "older than the window: taken as queued, though it never was");
        assertEquals(true, await(big.append(c, 0, 2, b("m1"))).duplicate(), "forgotten, and taken as queued");
        assertEquals(true, await(big.append(c, 0, 4 * w, b("recent"))).duplicate(), "remembered");
        assertEquals(false, await(big.append(c, 0, 4 * w + 1, b("recent gap"))).duplicate(),
                "never queued, within the window: queued now");
        assertEquals(true, await(big.append(c, 0, 4 * w + 1, b("recent gap"))).duplicate());
        assertEquals(false, await(big.append(c, 0, 4 * w + 3, b("next"))).duplicate());
        assertEquals(2 * w + 4L, await(big.size(c)), "every new position queued once");
    }

    /**
     * Positions of several partitions leave the window together, in calls that hold both partitions
     * and in calls that hold only one: each partition's mark becomes the highest of its own
     * positions that left, never another partition's.
     */
    @Test
    void positionsOfSeveralPartitionsLeaveTheWindowEachToItsOwnMark() {
        DeviceQueues big = new DeviceQueues(redis.binaryCommands(), prefix, 10 * DeviceQueues.SEEN_WINDOW,
                Duration.ofMinutes(10));
        String c = "dev-window-partitions";
        int w = DeviceQueues.SEEN_WINDOW;
        int perCall = 64;
        // Odd offsets only (partition 1's 100,000 higher), partitions 0 and 1 alternating, 64 per
        // call. After w positions the window's first generation is full; after 2w the first
        // generation (the first w/2 offsets of each partition) is forgotten.
        List<DeviceQueues.Item> calls = new java.util.ArrayList<>();
        for (int i = 0; i < w; i++) {
            calls.add(new DeviceQueues.Item(0, 2 * i + 1, b("p0-" + i)));
            calls.add(new DeviceQueues.Item(1, 100_000 + 2 * i + 1, b("p1-" + i)));
            if (calls.size() == perCall) {
                assertTrue(await(big.appendAll(c, calls)).items().stream().noneMatch(DeviceQueues.Appended::duplicate));
                calls.clear();
            }
        }
        int firstMark = 2 * (w / 2 - 1) + 1; // the highest offset of the forgotten generation
        assertEquals(true, await(big.append(c, 0, firstMark - 1, b("x"))).duplicate(), "below partition 0's mark");
        assertEquals(false, await(big.append(c, 0, firstMark + 1, b("x"))).duplicate(), "above partition 0's mark");
        assertEquals(true, await(big.append(c, 0, firstMark + 2, b("x"))).duplicate(), "partition 0, remembered");
        assertEquals(true, await(big.append(c, 1, 100_000 + firstMark - 1, b("x"))).duplicate(),
                "below partition 1's mark");
        assertEquals(false, await(big.append(c, 1, 100_000 + firstMark + 1, b("x"))).duplicate(),
                "above partition 1's mark");
        assertEquals(true, await(big.append(c, 1, 100_000 + firstMark + 2, b("x"))).duplicate(),
                "partition 1, remembered");

        // Partition 0 alone fills the current generation (w, less the two appended above): the
        // generation before it, the second half of both partitions, is forgotten in calls that do
        // not name partition 1, whose mark rises to its highest offset, 100,000 + 2w - 1.
        int next = w;
        for (int left = w - 2; left > 0; ) {
            int n = Math.min(60, left);
            for (int k = 0; k < n; k++, next++) {
                calls.add(new DeviceQueues.Item(0, 2 * next + 1, b("p0-" + next)));
            }
            assertTrue(await(big.appendAll(c, calls)).items().stream().noneMatch(DeviceQueues.Appended::duplicate));
            calls.clear();
            left -= n;
        }
        assertEquals(true, await(big.append(c, 1, 100_000 + 2 * w - 2, b("x"))).duplicate(),
                "never queued, now below partition 1's new mark");
        assertEquals(true, await(big.append(c, 0, 2 * w - 2, b("x"))).duplicate(), "below partition 0's new mark");
        assertEquals(false, await(big.append(c, 0, 2 * w, b("x"))).duplicate(),
                "never queued, above partition 0's mark and below its highest offset");
    }

    /**
     * A queue written by the version that kept its window as a sorted set ({@code :s}) and only
     * the marks: its positions are still known as queued until that set expires.
     */
    @Test
    void aQueueWrittenWithTheEarlierWindowKeepsItsRepeatsOut() {
        String c = "dev-earlier-window";
        List<String> keys = queues.keysOf(c);
        String meta = keys.get(2);
        String sorted = keys.get(6);
        // As the earlier script left it: offsets 10 and 14 of partition 0 remembered, 1..7 forgotten.
        redis.sync().hset(meta, java.util.Map.of("seq", "2", "wp0", "7"));
        redis.sync().zadd(sorted, 1, "p0:10");
        redis.sync().zadd(sorted, 2, "p0:14");
        assertEquals(true, await(queues.append(c, 0, 10, b("old"))).duplicate(), "in the earlier window");
        assertEquals(true, await(queues.append(c, 0, 5, b("old"))).duplicate(), "below the earlier mark");
        assertEquals(false, await(queues.append(c, 0, 12, b("gap"))).duplicate(), "never queued");
        assertEquals(true, await(queues.append(c, 0, 14, b("old"))).duplicate(),
                "in the earlier window, above the highest offset of this version's first call");
        assertEquals(false, await(queues.append(c, 0, 15, b("new"))).duplicate());
        assertEquals(List.of("gap", "new"), texts(await(queues.read(c, 0, 10))));
        assertEquals(3L, await(queues.read(c, 0, 10)).get(0).seq(), "sequence numbers go on from the earlier ones");
    }

    /**
     * During a rolling upgrade a node of the version before may append to a queue between two
     * appends of this version, adding its positions to the sorted set and moving neither the
     * highest offsets nor the generations: its positions are still known as queued.
     */
    @Test
    void positionsTheEarlierVersionQueuedBetweenTwoAppendsAreRepeats() {
        DeviceQueues queues = new DeviceQueues(redis.binaryCommands(), prefix, 100, Duration.ofMinutes(10));
        String c = "dev-mixed-versions";
        List<String> keys = queues.keysOf(c);
        assertEquals(false, await(queues.append(c, 0, 10, b("new 10"))).duplicate());
        // The version before appends offset 20 (and 15 of partition 1) as its script did.
        redis.sync().zadd(keys.get(6), 2, "p0:20");
        redis.sync().zadd(keys.get(6), 3, "p1:15");
        redis.sync().hset(keys.get(2), java.util.Map.of("seq", "3", "t2", "1", "t3", "1"));
        redis.sync().zadd(keys.get(0), 2, "2");
        redis.sync().zadd(keys.get(0), 3, "3");
        redis.sync().hset(keys.get(1), java.util.Map.of("2", "old 20", "3", "old p1 15"));
        assertEquals(true, await(queues.append(c, 0, 20, b("again"))).duplicate(),
                "queued by the version before, above this version's highest offset");
        assertEquals(true, await(queues.append(c, 1, 15, b("again"))).duplicate(),
                "of a partition this version had not seen for the queue");
        assertEquals(false, await(queues.append(c, 0, 18, b("new 18"))).duplicate(), "never queued");
        assertEquals(false, await(queues.append(c, 0, 21, b("new 21"))).duplicate());
        assertEquals(0L, redis.sync().exists(keys.get(6)), "the sorted set was taken in and deleted");
        assertEquals(List.of("new 10", "old 20", "old p1 15", "new 18", "new 21"),
                texts(await(queues.read(c, 0, 10))));
    }

    @Test
    void beyondTheLimitTheOldestGoesAndIsCounted() {
        String c = "dev-limit";
        long dropped = 0;
        for (int i = 0; i < 5; i++) {
            dropped += await(queues.append(c, 0, i, b("m" + i))).dropped();
        }
        assertEquals(2, dropped);
        assertEquals(List.of("m2", "m3", "m4"), texts(await(queues.read(c, 0, 10))));
    }

    @Test
    void thePacketIdentifierAnEntryWasSentWithIsKept() {
        String c = "dev-pid";
        long seq = await(queues.append(c, 0, 1, b("p"))).seq();
        assertEquals(0, await(queues.read(c, 0, 1)).get(0).packetId());
        await(queues.sentWith(c, seq, 4711));
        DeviceQueues.Entry e = await(queues.read(c, 0, 1)).get(0);
        assertEquals(4711, e.packetId());
        assertArrayEquals(b("p"), e.value());
    }

    @Test
    void aStoreKeepsEntriesAndTheirPacketIdentifiersInOneStepSoRunningItAgainFindsBoth() {
        List<DeviceQueues.Item> items = List.of(new DeviceQueues.Item(0, 1, b("s1")),
                new DeviceQueues.Item(0, 2, b("s2")), new DeviceQueues.Item(1, 1, b("s3")));
        int[] ids = {7, 0, 9};
        await(queues.store("dev-store-warm", items, ids)); // the script is loaded: one call each below
        String c = "dev-store";
        long before = scriptCalls();
        List<DeviceQueues.Appended> first = await(queues.store(c, items, ids)).items();
        assertEquals(1, scriptCalls() - before, "entries and identifiers are one script, so never one without the other");
        assertTrue(first.stream().noneMatch(DeviceQueues.Appended::duplicate));
        // Its answer lost (Redis took it, the node did not hear), the store is run again: it adds
        // nothing, and the identifiers the first run kept are there.
        assertTrue(await(queues.store(c, items, ids)).items().stream().allMatch(DeviceQueues.Appended::duplicate));
        List<DeviceQueues.Entry> read = await(queues.read(c, 0, 10));
        assertEquals(List.of("s1", "s2", "s3"), texts(read));
        assertEquals(List.of(7, 0, 9), read.stream().map(DeviceQueues.Entry::packetId).toList());
        assertEquals(2, redis.sync().hlen(queues.keysOf(c).get(3)), "no identifier kept for the entry sent with none");
        assertTrue(redis.sync().pttl(queues.keysOf(c).get(3)) > 0, "the identifiers' key expires with the queue");
    }

    /** Script calls Redis ran so far (EVALSHA and EVAL). */
    private static long scriptCalls() {
        long calls = 0;
        for (String line : redis.sync().info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                int at = line.indexOf("calls=") + 6;
                calls += Long.parseLong(line.substring(at, line.indexOf(',', at)));
            }
        }
        return calls;
    }

    @Test
    void removesAndPacketIdentifiersAskedForTogetherAreAppliedInOneGoAsInOrder() {
        DeviceQueues roomy = new DeviceQueues(redis.binaryCommands(), prefix, 100, Duration.ofMinutes(10));
        String c = "dev-merged";
        long[] seq = new long[20];
        for (int i = 0; i < seq.length; i++) {
            seq[i] = await(roomy.append(c, 0, i, b("m" + i))).seq();
        }
        // Asked for without waiting, as a session sending a window and taking its acknowledgements
        // does: all but the first wait behind the one running and go to Redis as one script.
        List<java.util.concurrent.CompletionStage<Void>> writes = new java.util.ArrayList<>();
        for (int i = 0; i < 10; i++) {
            writes.add(roomy.sentWith(c, seq[i], 100 + i));
        }
        for (int i = 0; i < 5; i++) {
            writes.add(roomy.remove(c, seq[i]));
        }
        writes.add(roomy.sentWith(c, seq[0], 999)); // for an entry removed just before: not kept
        writes.add(roomy.sentWith(c, seq[7], -107)); // PUBREC came for it
        writes.forEach(DeviceQueuesTest::await);

        List<DeviceQueues.Entry> left = await(roomy.read(c, 0, 100));
        assertEquals(15, left.size());
        assertEquals(seq[5], left.get(0).seq());
        assertEquals(List.of(105, 106, -107, 108, 109, 0), left.subList(0, 6).stream().map(DeviceQueues.Entry::packetId)
                .toList());
        List<String> stamps = redis.sync().hkeys(roomy.keysOf(c).get(2)).stream().filter(k -> k.startsWith("t")).toList();
        assertEquals(15, stamps.size(), "the removed entries' time stamps went with them: " + stamps);
        List<String> identified = redis.sync().hkeys(roomy.keysOf(c).get(3));
        assertEquals(5, identified.size(), "no packet identifier of a removed entry stays: " + identified);
    }

    @Test
    void aQueueExpiresAfterItsTtlAndCanBeDeleted() {
        String c = "dev-ttl";
        await(queues.append(c, 0, 1, b("t")));
        for (String key : queues.keysOf(c)) {
            Long ttl = redis.sync().pttl(key);
            if (ttl != -2) { // -2: that key does not exist yet (no packet identifiers stored)
                // The time to live, and a slack of a hundredth of it (6 s of 10 min).
                assertTrue(ttl > Duration.ofMinutes(10).toMillis() && ttl <= Duration.ofSeconds(606).toMillis(),
                        key + " expires: " + ttl);
            }
        }
        // A delete keeps entries stamped at or after its own millisecond (a new session's); this one was
        // stamped before the append completed, so once the clock has moved on the delete takes it.
        long appended = System.currentTimeMillis();
        while (System.currentTimeMillis() <= appended) {
            Thread.onSpinWait();
        }
        await(queues.delete(c));
        assertEquals(0L, await(queues.size(c)));
        assertEquals(List.of(), await(queues.read(c, 0, 10)));
    }

    @Test
    void aWriteSetsAKeysExpiryOnlyOnceItHasRunDownBelowTheTimeToLive() {
        String c = "dev-ttl-refresh";
        DeviceQueues queues = new DeviceQueues(redis.binaryCommands(), prefix, 10, Duration.ofMinutes(10));
        await(queues.append(c, 0, 1, b("first")));
        await(queues.sentWith(c, 1, 7));
        long tenMinutes = Duration.ofMinutes(10).toMillis();
        List<String> keys = queues.keysOf(c).stream().filter(k -> redis.sync().pttl(k) != -2).toList();
        assertEquals(5, keys.size(), "every key of the queue exists: " + keys);
        // Within the slack: still at least the time to live ahead, so a write leaves the expiry alone.
        keys.forEach(k -> redis.sync().pexpire(k, tenMinutes + 3_000));
        await(queues.append(c, 0, 2, b("second")));
        await(queues.sentWith(c, 2, 8));
        for (String k : keys) {
            long ttl = redis.sync().pttl(k);
            assertTrue(ttl > tenMinutes && ttl <= tenMinutes + 3_000, k + " kept its expiry: " + ttl);
        }
        // Run down below the time to live: the next write gives it the time to live and the slack again.
        keys.forEach(k -> redis.sync().pexpire(k, tenMinutes - 1_000));
        await(queues.append(c, 0, 3, b("third")));
        await(queues.sentWith(c, 3, 9));
        for (String k : keys) {
            long ttl = redis.sync().pttl(k);
            assertTrue(ttl > tenMinutes + 3_000 && ttl <= tenMinutes + 6_000, k + " expires later again: " + ttl);
        }
        // A key without an expiry (made by hand, or by an older version) gets one at the next write.
        keys.forEach(k -> redis.sync().persist(k));
        await(queues.append(c, 0, 4, b("fourth")));
        await(queues.sentWith(c, 4, 10));
        for (String k : keys) {
            long ttl = redis.sync().pttl(k);
            assertTrue(ttl > tenMinutes && ttl <= tenMinutes + 6_000, k + " expires: " + ttl);
        }
        assertEquals(List.of("first", "second", "third", "fourth"), texts(await(queues.read(c, 0, 10))));
    }

    /**
     * An append asks only the meta hash whether expiries are due; a key it makes anew (the queue
     * emptied and filling again, the window's next generation) gets its expiry at once all the same.
     */
    @Test
    void keysMadeAnewWhileTheMetaHashHasTimeLeftGetAnExpiry() {
        String c = "dev-ttl-fresh";
        DeviceQueues big = new DeviceQueues(redis.binaryCommands(), prefix, 10 * DeviceQueues.SEEN_WINDOW,
                Duration.ofMinutes(10));
        List<String> keys = big.keysOf(c);
        long s1 = await(big.append(c, 0, 1, b("first"))).seq();
        redis.sync().pexpire(keys.get(2), Duration.ofMinutes(10).toMillis() + 3_000); // not due for a while
        await(big.remove(c, s1));
        assertEquals(0L, redis.sync().exists(keys.get(0)), "the queue emptied");
        await(big.append(c, 0, 2, b("second")));
        List<DeviceQueues.Item> items = new java.util.ArrayList<>();
        for (int i = 3; i < 3 + DeviceQueues.SEEN_WINDOW; i++) {
            items.add(new DeviceQueues.Item(0, i, b("m" + i)));
        }
        await(big.appendAll(c, items)); // the window's generation is full: it becomes the older one
        assertEquals(0L, redis.sync().exists(keys.get(4)), "no current generation yet");
        await(big.append(c, 0, 5_000, b("next")));
        for (int k : new int[] {0, 1, 4, 5}) {
            long ttl = redis.sync().pttl(keys.get(k));
            assertTrue(ttl > Duration.ofMinutes(10).toMillis(), keys.get(k) + " expires: " + ttl);
        }
    }

    @Test
    void aDeleteTakesWhatWasQueuedBeforeItWasAskedForAndSparesTheNextSessionsEntries() {
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong(1_000);
        DeviceQueues timed = new DeviceQueues(redis.binaryCommands(), prefix, 3, Duration.ofMinutes(10), null, null,
                now::get);
        String c = "dev-late-delete";
        await(timed.append(c, 0, 1, b("old session")));
        now.set(3_000);
        // Queued for the new session by a node whose clock is ahead of the delete's: as if the old
        // session's delete had waited out a Redis outage and reached Redis after it.
        await(timed.append(c, 0, 2, b("new session")));
        now.set(2_000);
        assertEquals(1L, await(timed.delete(c)));
        assertEquals(List.of("new session"), texts(await(timed.read(c, 0, 10))));
        assertEquals(true, await(timed.append(c, 0, 2, b("new session"))).duplicate(),
                "the queue's deduplication survives a partial delete");

        now.set(4_000);
        assertEquals(1L, await(timed.delete(c)));
        for (String key : timed.keysOf(c)) {
            assertEquals(0L, redis.sync().exists(key), key + " is gone with the last entry");
        }
    }

    @Test
    void aRemovedOrDroppedEntryLeavesNoTimeStampBehind() {
        String c = "dev-stamps";
        long s1 = await(queues.append(c, 0, 1, b("a"))).seq();
        for (int i = 2; i <= 5; i++) {
            await(queues.append(c, 0, i, b("m" + i))); // the limit is 3: the two oldest go
        }
        long seqRemoved = await(queues.read(c, 0, 1)).get(0).seq();
        await(queues.remove(c, seqRemoved));
        String meta = queues.keysOf(c).get(2);
        List<String> stamps = redis.sync().hkeys(meta).stream().filter(k -> k.startsWith("t")).sorted().toList();
        assertEquals(2, stamps.size(), "one stamp per entry left: " + stamps);
        assertTrue(!stamps.contains("t" + s1) && !stamps.contains("t" + seqRemoved), stamps.toString());
    }

    @Test
    void allKeysOfOneClientShareAHashSlot() {
        for (String client : List.of("dev-1", "weird{id}", "a:b", "ünïcode")) {
            List<Integer> slots = queues.keysOf(client).stream().map(SlotHash::getSlot).distinct().toList();
            assertEquals(1, slots.size(), client + " keys in slots " + slots);
        }
    }

    /** A timer whose tasks wait until {@code release} is counted down: nothing it holds runs before. */
    private static java.util.concurrent.ScheduledExecutorService heldTimer(java.util.concurrent.CountDownLatch release) {
        java.util.concurrent.ScheduledThreadPoolExecutor timer = new java.util.concurrent.ScheduledThreadPoolExecutor(1);
        timer.execute(() -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        return timer;
    }

    /** A test of queues whose deferred writes wait on a {@link #heldTimer} until {@code release}. */
    private interface HeldTimerTest {
        void run(DeviceQueues deferring, java.util.concurrent.CountDownLatch release,
                java.util.concurrent.ScheduledExecutorService timer) throws Exception;
    }

    private static void withHeldTimer(int limit, HeldTimerTest test) throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.ScheduledExecutorService timer = heldTimer(release);
        try {
            // A clock that moves on every reading: a delete asked for right after an append is later.
            java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong(1_000);
            test.run(new DeviceQueues(redis.binaryCommands(), prefix, limit, Duration.ofMinutes(10), timer, null,
                    clock::incrementAndGet), release, timer);
        } finally {
            release.countDown();
            timer.shutdownNow();
        }
    }

    /** Waits (10 s at most) until nothing is left to write to Redis. */
    private static void awaitNoPendingWrites(DeviceQueues queues) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (queues.pendingWrites() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
    }

    /** Waits until everything the timer was given before this call has run. */
    private static void drain(java.util.concurrent.ScheduledExecutorService timer) throws Exception {
        timer.schedule(() -> null, DeviceQueues.CARRY_DELAY.toMillis() * 2, java.util.concurrent.TimeUnit.MILLISECONDS)
                .get(10, java.util.concurrent.TimeUnit.SECONDS);
    }

    @Test
    void anAcknowledgedEntryIsRemovedByTheClientsNextAppendWithoutACallOfItsOwn() throws Exception {
        withHeldTimer(3, (deferring, release, timer) -> {
            String c = "dev-carried";
            long s1 = await(deferring.append(c, 0, 1, b("a"))).seq();
            long s2 = await(deferring.append(c, 0, 2, b("b"))).seq();
            await(deferring.append(c, 0, 3, b("c")));
            deferring.removeSoon(c, s1);
            deferring.removeSoon(c, s2);
            assertEquals(2, deferring.pendingWrites(), "the removes wait for an append");
            assertEquals(List.of("a", "b", "c"), texts(await(deferring.read(c, 0, 10))), "not removed yet");

            // The timer cannot run: only the append can have removed them. The queue's limit is 3,
            // so the removes also made the room that spares "c" from being trimmed.
            DeviceQueues.Appended d = await(deferring.append(c, 0, 4, b("d")));
            assertEquals(0, d.dropped());
            assertEquals(0, deferring.pendingWrites());
            assertEquals(List.of("c", "d"), texts(await(deferring.read(c, 0, 10))));
            List<String> stamps = redis.sync().hkeys(deferring.keysOf(c).get(2)).stream()
                    .filter(k -> k.startsWith("t")).toList();
            assertEquals(2, stamps.size(), "the removed entries' time stamps went with them: " + stamps);
        });
    }

    @Test
    void aRemoveNoAppendCarriesGoesOnItsOwnAfterTheDelayOrWhenFlushed() throws Exception {
        java.util.concurrent.ScheduledExecutorService timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try {
            DeviceQueues deferring = new DeviceQueues(redis.binaryCommands(), prefix, 10, Duration.ofMinutes(10), timer,
                    null);
            String c = "dev-remove-later";
            long s1 = await(deferring.append(c, 0, 1, b("a"))).seq();
            long s2 = await(deferring.append(c, 0, 2, b("b"))).seq();
            deferring.removeSoon(c, s1);
            drain(timer); // the delay passed: the remove went on its own
            awaitNoPendingWrites(deferring);
            assertEquals(List.of("b"), texts(await(deferring.read(c, 0, 10))));

            deferring.removeSoon(c, s2);
            deferring.flushWrites(c); // the connection ended: at once, ahead of a next read
            assertEquals(List.of(), texts(await(deferring.read(c, 0, 10))));
        } finally {
            timer.shutdownNow();
        }
    }

    @Test
    void aDeleteMakesWaitingRemovesMootSoTheNextSessionsEntriesOfTheSameNumbersStay() throws Exception {
        withHeldTimer(10, (deferring, release, timer) -> {
            String c = "dev-remove-moot";
            long old = await(deferring.append(c, 0, 1, b("old"))).seq();
            deferring.removeSoon(c, old);
            assertEquals(1L, await(deferring.delete(c)));
            // The next session's queue numbers its entries from the start again; its first entry is
            // queued by another node's writer, so no append of this node carries the waiting remove.
            DeviceQueues otherNode = new DeviceQueues(redis.binaryCommands(), prefix, 10, Duration.ofMinutes(10));
            assertEquals(old, await(otherNode.append(c, 0, 2, b("new"))).seq());
            release.countDown();
            drain(timer);
            assertEquals(List.of("new"), texts(await(deferring.read(c, 0, 10))));
            assertEquals(0, deferring.pendingWrites());
        });
    }

    @Test
    void removesAnAppendCarriedGoOnTheirOwnWhenTheAppendFails() throws Exception {
        withHeldTimer(10, (deferring, release, timer) -> {
            String c = "dev-carry-failed";
            long s1 = await(deferring.append(c, 0, 1, b("a"))).seq();
            deferring.removeSoon(c, s1);
            // The meta hash replaced by a string: the append fails on its first command that touches it.
            String meta = deferring.keysOf(c).get(2);
            redis.sync().del(meta);
            redis.sync().set(meta, "not a hash");
            java.util.concurrent.CompletionException failed = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.CompletionException.class, () -> await(deferring.append(c, 0, 2, b("b"))));
            assertTrue(failed.getCause().getMessage().contains("WRONGTYPE"), failed.toString());
            assertEquals(1, deferring.pendingWrites(), "the remove went back to the client's writes, retried");
            redis.sync().del(meta);
            release.countDown(); // its retries may run now, and succeed
            awaitNoPendingWrites(deferring);
            assertEquals(0, deferring.pendingWrites());
            assertEquals(List.of(), texts(await(deferring.read(c, 0, 10))));
        });
    }

    @Test
    void aPacketIdentifierRidesOnTheNextAppendAndIsKeptOnlyForAnEntryStillQueued() throws Exception {
        withHeldTimer(10, (deferring, release, timer) -> {
            String c = "dev-carried-pid";
            long s1 = await(deferring.append(c, 0, 1, b("a"))).seq();
            long s2 = await(deferring.append(c, 0, 2, b("b"))).seq();
            deferring.sentWithSoon(c, s1, 17);
            deferring.removeSoon(c, s1); // acknowledged after all: its identifier is not kept
            deferring.sentWithSoon(c, s2, 18);
            assertEquals(List.of(0, 0), await(deferring.read(c, 0, 10)).stream().map(DeviceQueues.Entry::packetId)
                    .toList(), "nothing written before an append carries it");

            await(deferring.append(c, 0, 3, b("c")));
            assertEquals(0, deferring.pendingWrites());
            List<DeviceQueues.Entry> left = await(deferring.read(c, 0, 10));
            assertEquals(List.of("b", "c"), texts(left));
            assertEquals(List.of(18, 0), left.stream().map(DeviceQueues.Entry::packetId).toList());
            assertEquals(List.of(Long.toString(s2)), redis.sync().hkeys(deferring.keysOf(c).get(3)));
            Long expiry = redis.sync().pttl(deferring.keysOf(c).get(3));
            assertTrue(expiry > Duration.ofMinutes(10).toMillis(), "the identifiers' hash expires: " + expiry);
        });
    }

    /** A timer that only keeps what it is given, for the test to run by hand. */
    private static final class ManualTimer extends java.util.concurrent.ScheduledThreadPoolExecutor {
        final List<Runnable> tasks = new java.util.concurrent.CopyOnWriteArrayList<>();

        ManualTimer() {
            super(1);
        }

        @Override
        public java.util.concurrent.ScheduledFuture<?> schedule(Runnable task, long delay,
                java.util.concurrent.TimeUnit unit) {
            tasks.add(task);
            return null;
        }
    }

    @Test
    void aWritesDeadlineIsItsOwnNotThatOfWritesAnEarlierAppendCarried() throws Exception {
        ManualTimer timer = new ManualTimer();
        try {
            DeviceQueues deferring = new DeviceQueues(redis.binaryCommands(), prefix, 10, Duration.ofMinutes(10), timer,
                    null);
            String c = "dev-own-deadline";
            long s1 = await(deferring.append(c, 0, 1, b("a"))).seq();
            deferring.removeSoon(c, s1);
            long s2 = await(deferring.append(c, 0, 2, b("b"))).seq(); // carries the remove of "a"
            deferring.removeSoon(c, s2);
            assertEquals(2, timer.tasks.size(), "a deadline per list of waiting writes");

            timer.tasks.get(0).run(); // the deadline of the list the append took: nothing to send
            assertEquals(1, deferring.pendingWrites(), "the remove of b still waits for an append");
            assertEquals(List.of("b"), texts(await(deferring.read(c, 0, 10))));

            timer.tasks.get(1).run(); // its own deadline: on its own
            assertEquals(List.of(), texts(await(deferring.read(c, 0, 10))));
            assertEquals(0, deferring.pendingWrites());
        } finally {
            timer.shutdownNow();
        }
    }
}
