package io.fleetmq.app.http;

import io.javalin.http.Context;
import java.util.List;

/** Query parameters of listings: the page asked for, and optional filters. */
record Paging(int page, int pageSize) {

    static final int DEFAULT_PAGE_SIZE = 20;
    static final int MAX_PAGE_SIZE = 1000;

    /** {@code page} (from 0) and {@code pageSize} (1 to 1000, default 20); a 400 naming the parameter otherwise. */
    static Paging of(Context ctx) {
        return new Paging(number(ctx, "page", 0, 0, Integer.MAX_VALUE),
                number(ctx, "pageSize", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE));
    }

    private static int number(Context ctx, String name, int absent, int min, int max) {
        String raw = ctx.queryParam(name);
        if (raw == null || raw.isEmpty()) {
            return absent;
        }
        int value;
        try {
            value = Integer.parseInt(raw.trim());
        } catch (NumberFormatException e) {
            throw ApiException.badRequest(name, "'" + raw + "' is not a whole number");
        }
        if (value < min || value > max) {
            throw ApiException.badRequest(name, "must be between " + min + " and " + max);
        }
        return value;
    }

    /** A filter value, or null when absent or empty (empty filters nothing). */
    static String filter(Context ctx, String name) {
        String raw = ctx.queryParam(name);
        return raw == null || raw.isEmpty() ? null : raw;
    }

    /** A filter that must be one of {@code allowed}, or null when absent. */
    static String filter(Context ctx, String name, List<String> allowed) {
        String value = filter(ctx, name);
        if (value != null && !allowed.contains(value)) {
            throw ApiException.badRequest(name, "must be one of " + String.join(", ", allowed));
        }
        return value;
    }
}
