package io.fleetmq.core.subscription;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * Picks the member of a shared subscription that gets a message (MQTT 5.0 section 4.8.2: each
 * message goes to one session of the group). Members take turns, per shared subscription and
 * across calls from any thread, so load spreads evenly. Members that cannot take a message now
 * (disconnected, or over their in-flight window) are passed over, and the next turn goes to the
 * member after the one that took the message, so a skipped member's share does not all go to its
 * neighbour.
 *
 * <p>Turns follow the order of the member list, so they are round-robin as long as the caller
 * passes the members in a stable order, as {@link SubscriptionTrie#match} does while the
 * membership does not change. Under concurrent calls two threads may occasionally pick the same
 * member; the spread stays even.
 */
public final class SharedGroupSelector {

    private final ConcurrentHashMap<SharedGroupKey, AtomicInteger> turns = new ConcurrentHashMap<>();

    /**
     * @param available whether a member can take the message now
     * @return the chosen member, or {@code null} if none is available
     */
    public Subscription select(SharedGroupKey group, List<Subscription> members,
            Predicate<Subscription> available) {
        Objects.requireNonNull(group, "group");
        int count = members.size();
        if (count == 0) {
            return null;
        }
        AtomicInteger turn = turns.computeIfAbsent(group, g -> new AtomicInteger());
        int start = turn.getAndIncrement();
        for (int skipped = 0; skipped < count; skipped++) {
            Subscription candidate = members.get(Math.floorMod(start + skipped, count));
            if (available.test(candidate)) {
                if (skipped > 0) {
                    // The next turn goes to the member after this one, not to this one again.
                    turn.addAndGet(skipped);
                }
                return candidate;
            }
        }
        return null;
    }

    /**
     * Drops the turn counter of a shared subscription that has lost its last member, so that
     * groups coming and going do not accumulate.
     */
    public void forget(SharedGroupKey group) {
        turns.remove(group);
    }
}
