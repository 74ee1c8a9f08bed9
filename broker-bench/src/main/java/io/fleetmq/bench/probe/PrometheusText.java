package io.fleetmq.bench.probe;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Just enough of the Prometheus text exposition format to read a broker's memory: sample lines
 * {@code name{label="value",...} value [timestamp]}; comments, types and help are skipped.
 *
 * <p>Exporters name the same thing differently (Micrometer {@code jvm_memory_used_bytes{area="heap"}}
 * and {@code jvm_buffer_memory_used_bytes{id="direct"}}, the old simpleclient
 * {@code jvm_memory_bytes_used{area="heap"}} and {@code jvm_buffer_pool_used_bytes{pool="direct"}}),
 * so the series are chosen by name prefix and label value rather than by exact name.
 */
public final class PrometheusText {

    /** One sample line. */
    public record Series(String name, Map<String, String> labels, double value) {
    }

    /** The sum of the chosen series, and which metric name they came from (for the report). */
    public record Reading(String metric, double value) {
    }

    private PrometheusText() {
    }

    /** Every sample line; a line that does not parse is skipped rather than failing the whole scrape. */
    public static List<Series> parse(String text) {
        List<Series> series = new ArrayList<>();
        for (String raw : text.split("\n")) {
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            Series s = line(line);
            if (s != null) {
                series.add(s);
            }
        }
        return series;
    }

    /**
     * JVM heap in use: series named {@code jvm_memory...} with {@code used} in the name (not committed
     * or max) and the label {@code area="heap"}, summed over the memory pools.
     */
    public static Reading heap(List<Series> series) {
        return sumOfFirstMetric(series, s -> s.name().startsWith("jvm_memory") && s.name().contains("used")
                && "heap".equals(s.labels().get("area")));
    }

    /**
     * Direct buffers in use: series named {@code jvm_buffer...} with {@code used} in the name, in bytes
     * (not a buffer count), and some label whose value is {@code direct}.
     */
    public static Reading direct(List<Series> series) {
        return sumOfFirstMetric(series, s -> s.name().startsWith("jvm_buffer") && s.name().contains("used")
                && s.name().contains("bytes") && !s.name().endsWith("_buffers")
                && s.labels().containsValue("direct"));
    }

    /**
     * Sums the matching series of the first metric name that has any, so that an endpoint exporting
     * the same figure under two names is not counted twice; null when nothing matches.
     */
    static Reading sumOfFirstMetric(List<Series> series, Predicate<Series> wanted) {
        String metric = null;
        double sum = 0;
        for (Series s : series) {
            if (!wanted.test(s) || (metric != null && !metric.equals(s.name()))) {
                continue;
            }
            metric = s.name();
            sum += s.value();
        }
        return metric == null ? null : new Reading(metric, sum);
    }

    private static Series line(String line) {
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && !Character.isWhitespace(line.charAt(i))) {
            i++;
        }
        String name = line.substring(0, i);
        if (name.isEmpty()) {
            return null;
        }
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i = labels(line, i + 1, labels);
            if (i < 0) {
                return null;
            }
        }
        String[] rest = line.substring(i).strip().split("\\s+");
        Double value = number(rest[0]);
        return value == null ? null : new Series(name, Map.copyOf(labels), value);
    }

    /** Reads {@code key="value",...}} from {@code i}; returns the index after the closing brace, or -1. */
    private static int labels(String line, int i, Map<String, String> labels) {
        while (i < line.length()) {
            char c = line.charAt(i);
            if (c == '}') {
                return i + 1;
            }
            if (c == ',' || c == ' ') {
                i++;
                continue;
            }
            int eq = line.indexOf('=', i);
            if (eq < 0 || eq + 1 >= line.length() || line.charAt(eq + 1) != '"') {
                return -1;
            }
            String key = line.substring(i, eq).strip();
            StringBuilder value = new StringBuilder();
            int j = eq + 2;
            for (; j < line.length() && line.charAt(j) != '"'; j++) {
                char v = line.charAt(j);
                if (v == '\\' && j + 1 < line.length()) {
                    char next = line.charAt(++j);
                    value.append(next == 'n' ? '\n' : next);
                } else {
                    value.append(v);
                }
            }
            if (j >= line.length()) {
                return -1;
            }
            labels.put(key, value.toString());
            i = j + 1;
        }
        return -1;
    }

    private static Double number(String text) {
        switch (text.toLowerCase(Locale.ROOT)) {
            case "nan" -> {
                return Double.NaN;
            }
            case "+inf", "inf" -> {
                return Double.POSITIVE_INFINITY;
            }
            case "-inf" -> {
                return Double.NEGATIVE_INFINITY;
            }
            default -> {
                try {
                    return Double.parseDouble(text);
                } catch (NumberFormatException e) {
                    return null;
                }
            }
        }
    }
}
