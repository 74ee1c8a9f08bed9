package io.fleetmq.bench.report;

import java.util.List;
import java.util.Locale;

/** A minimal writer for one flat-ish JSON object: enough for the report line, no library needed. */
final class Json {

    private final StringBuilder out = new StringBuilder("{");
    private boolean empty = true;

    Json field(String name, String value) {
        return raw(name, quote(value));
    }

    Json field(String name, long value) {
        return raw(name, Long.toString(value));
    }

    Json field(String name, boolean value) {
        return raw(name, Boolean.toString(value));
    }

    /** One decimal; NaN and infinities, which JSON cannot say, become null. */
    Json field(String name, double value) {
        return raw(name, Double.isFinite(value) ? String.format(Locale.ROOT, "%.1f", value) : "null");
    }

    Json field(String name, Json object) {
        return raw(name, object == null ? "null" : object.toString());
    }

    Json field(String name, List<String> values) {
        StringBuilder array = new StringBuilder("[");
        for (int i = 0; i < values.size(); i++) {
            array.append(i == 0 ? "" : ",").append(quote(values.get(i)));
        }
        return raw(name, array.append(']').toString());
    }

    /** A count or byte figure that may be unknown: negative values become null. */
    Json optional(String name, long value) {
        return raw(name, value < 0 ? "null" : Long.toString(value));
    }

    Json numbers(String name, List<? extends Number> values) {
        StringBuilder array = new StringBuilder("[");
        for (int i = 0; i < values.size(); i++) {
            array.append(i == 0 ? "" : ",").append(values.get(i));
        }
        return raw(name, array.append(']').toString());
    }

    /** An array of objects, such as the soak time series. */
    Json objects(String name, List<Json> values) {
        StringBuilder array = new StringBuilder("[");
        for (int i = 0; i < values.size(); i++) {
            array.append(i == 0 ? "" : ",").append(values.get(i));
        }
        return raw(name, array.append(']').toString());
    }

    private Json raw(String name, String json) {
        out.append(empty ? "" : ",").append(quote(name)).append(':').append(json);
        empty = false;
        return this;
    }

    static String quote(String text) {
        StringBuilder q = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> q.append("\\\"");
                case '\\' -> q.append("\\\\");
                case '\n' -> q.append("\\n");
                case '\r' -> q.append("\\r");
                case '\t' -> q.append("\\t");
                default -> {
                    if (c < 0x20) {
                        q.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        q.append(c);
                    }
                }
            }
        }
        return q.append('"').toString();
    }

    @Override
    public String toString() {
        return out + "}";
    }
}
