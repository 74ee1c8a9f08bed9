package io.fleetmq.app.ops;

import io.fleetmq.app.config.Settings;
import java.time.Duration;

/** {@code admin.stats-interval}: how often each node samples its statistics. */
public final class StatsSettings {

    static final String KEY = "admin.stats-interval";

    private StatsSettings() {
    }

    /** Between 1 s and 10 min, whole seconds or milliseconds; the message names the setting otherwise. */
    public static Duration interval(Settings s) {
        Duration d = s.duration(KEY);
        if (d.compareTo(Duration.ofSeconds(1)) < 0 || d.compareTo(Duration.ofMinutes(10)) > 0) {
            throw s.invalid(KEY, s.string(KEY), "must be between 1s and 10m");
        }
        return d;
    }
}
