package io.fleetmq.session;

import io.fleetmq.core.actor.ActorTimers;
import io.fleetmq.core.actor.Mailbox;
import java.time.Duration;
import java.time.Instant;

/**
 * The end of a client's authentication (a token's expiry): when it passes, the connection ends, so a
 * client cannot stay connected on a credential that no longer holds. One timer per session, armed for
 * each connection and each change of its rights.
 */
final class AuthExpiry {

    private final ActorTimers timers;
    private final Mailbox mailbox;
    private final SessionServices services;
    private final Runnable expired;
    private ActorTimers.Timer timer;

    /** @param expired told in the session's turn when the authentication of its connection has expired */
    AuthExpiry(SessionServices services, Mailbox mailbox, Runnable expired) {
        this.timers = new ActorTimers(services.timers());
        this.mailbox = mailbox;
        this.services = services;
        this.expired = expired;
    }

    /** Arms the timer for {@code access}'s end (none if it has none), replacing any earlier one. */
    void arm(ClientAccess access) {
        cancel();
        Instant end = access.expiresAt();
        if (end == null) {
            return;
        }
        long wait = Math.max(0, end.toEpochMilli() - services.clock().getAsLong());
        timer = timers.schedule(mailbox, Duration.ofMillis(wait), () -> {
            timer = null;
            expired.run();
        });
    }

    void cancel() {
        if (timer != null) {
            timer.cancel();
            timer = null;
        }
    }
}
