package io.fleetmq.core.subscription;

import static io.fleetmq.core.subscription.SubscriptionTrieTest.shared;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

class SharedGroupSelectorTest {

    private static final SharedGroupKey GROUP = new SharedGroupKey("g", "sport/#");
    private static final Predicate<Subscription> ALL = s -> true;

    private final SharedGroupSelector selector = new SharedGroupSelector();
    private final Subscription a = shared("a", "g", "sport/#");
    private final Subscription b = shared("b", "g", "sport/#");
    private final Subscription c = shared("c", "g", "sport/#");
    private final List<Subscription> members = List.of(a, b, c);

    private List<String> pick(int times, Predicate<Subscription> available) {
        List<String> picked = new ArrayList<>();
        for (int i = 0; i < times; i++) {
            Subscription chosen = selector.select(GROUP, members, available);
            picked.add(chosen == null ? null : chosen.clientId());
        }
        return picked;
    }

    @Test
    void membersTakeTurns() {
        assertEquals(List.of("a", "b", "c", "a", "b", "c", "a"), pick(7, ALL));
    }

    @Test
    void unavailableMembersArePassedOverWithoutDoublingTheNextOnesShare() {
        Set<String> connected = ConcurrentHashMap.newKeySet();
        connected.addAll(Set.of("a", "c"));
        assertEquals(List.of("a", "c", "a", "c"), pick(4, s -> connected.contains(s.clientId())));
        connected.add("b");
        assertEquals(List.of("a", "b", "c"), pick(3, s -> connected.contains(s.clientId())));
    }

    @Test
    void noAvailableMemberGivesNull() {
        assertNull(selector.select(GROUP, members, s -> false));
        assertNull(selector.select(GROUP, List.of(), ALL));
    }

    @Test
    void eachSharedSubscriptionHasItsOwnTurns() {
        SharedGroupKey sameGroupOtherFilter = new SharedGroupKey("g", "news/#");
        assertEquals("a", selector.select(GROUP, members, ALL).clientId());
        assertEquals("a", selector.select(sameGroupOtherFilter, members, ALL).clientId());
        assertEquals("b", selector.select(GROUP, members, ALL).clientId());
    }

    @Test
    void forgetStartsTheTurnsAgain() {
        assertEquals(List.of("a", "b"), pick(2, ALL));
        selector.forget(GROUP);
        assertEquals(List.of("a"), pick(1, ALL));
    }

    @Test
    void concurrentSelectionsSpreadExactlyEvenlyWhenAllAreAvailable() throws Exception {
        int threads = 8;
        int perThread = 3_000;
        Map<String, AtomicInteger> counts = Map.of("a", new AtomicInteger(), "b", new AtomicInteger(),
                "c", new AtomicInteger());
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        counts.get(selector.select(GROUP, members, ALL).clientId()).incrementAndGet();
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(1, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        }
        int each = threads * perThread / members.size();
        counts.forEach((member, count) -> assertEquals(each, count.get(), member));
    }
}
