package io.fleetmq.app.metrics;

import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Just enough PromQL to find the metric names an expression selects: what remains once string
 * literals, label matchers, range and subquery brackets, label lists of {@code by}/{@code on}/...,
 * Grafana variables, numbers, durations, keywords, aggregations and function calls are taken out.
 */
final class PromQl {

    private static final Set<String> KEYWORDS = Set.of("by", "without", "on", "ignoring", "group_left",
            "group_right", "and", "or", "unless", "bool", "offset", "sum", "min", "max", "avg", "count", "stddev",
            "stdvar", "topk", "bottomk", "quantile", "count_values", "group", "inf", "nan");
    private static final Pattern STRINGS = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'");
    private static final Pattern MATCHERS = Pattern.compile("\\{[^}]*\\}");
    private static final Pattern BRACKETS = Pattern.compile("\\[[^\\]]*\\]");
    private static final Pattern LABEL_LISTS = Pattern.compile(
            "\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)");
    private static final Pattern VARIABLES = Pattern.compile("\\$\\{[^}]*\\}|\\$[a-zA-Z_][a-zA-Z0-9_]*");
    private static final Pattern IDENTIFIER = Pattern.compile("(?<![a-zA-Z0-9_:.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\\s*\\()?");

    private PromQl() {
    }

    static Set<String> metricNames(String expr) {
        String s = STRINGS.matcher(expr).replaceAll(" ");
        s = VARIABLES.matcher(s).replaceAll(" ");
        s = MATCHERS.matcher(s).replaceAll(" ");
        s = BRACKETS.matcher(s).replaceAll(" ");
        s = LABEL_LISTS.matcher(s).replaceAll(" ");
        Set<String> names = new TreeSet<>();
        Matcher m = IDENTIFIER.matcher(s);
        while (m.find()) {
            String id = m.group(1);
            boolean call = m.group(2) != null;
            if (!call && !KEYWORDS.contains(id.toLowerCase(java.util.Locale.ROOT))) {
                names.add(id);
            }
        }
        return names;
    }
}
