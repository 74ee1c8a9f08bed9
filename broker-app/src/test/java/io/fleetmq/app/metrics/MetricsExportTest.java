package io.fleetmq.app.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What one node exports at {@code /metrics} after some real MQTT traffic, held against what the
 * shipped Grafana dashboard and Prometheus alert rules query: a renamed meter must break this test,
 * not an operator's dashboard at night. Also keeps labels bounded: no label may carry a client ID
 * or a topic.
 */
class MetricsExportTest {

    private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
    private static final Path DASHBOARD = REPO.resolve("docker/grafana/dashboards/fleetmq.json");
    private static final Path ALERTS = REPO.resolve("docker/prometheus/alerts.yml");

    /** Every label key the node's own and the JVM's meters may carry; a new one must be bounded and added here on purpose. */
    private static final Set<String> ALLOWED_LABELS = Set.of(
            // fleetmq_*
            "node", "reason", "qos", "listener", "protocol", "dependency", "required", "op", "limit", "outcome",
            "loop", "role", "partition", "type", "state", "provider", "result", "error", "topic_kind", "when",
            // JVM, process and connection pool binders
            "area", "id", "level", "action", "cause", "gc", "pool");
    /**
     * Kafka's client metrics also carry the client id (the node's fixed purposes) and the Kafka
     * broker's node id; never a Kafka topic, since APPLICATION backlog topics are named after client
     * IDs. The node's own {@code fleetmq_kafka_*} meters name the role of the Kafka topic
     * ({@code publish}, {@code retained}, ...) as {@code topic}.
     */
    private static final Set<String> KAFKA_LABELS = Set.of("client_id", "kafka_version", "node_id");
    private static final Set<String> FLEETMQ_KAFKA_LABELS = Set.of("topic");
    /** Lettuce's command timers carry the command and the Redis server's and the node's addresses. */
    private static final Set<String> LETTUCE_LABELS = Set.of("command", "local", "remote");
    /** Series Prometheus makes itself rather than scraping them. */
    private static final Set<String> SYNTHETIC = Set.of("up");

    @TempDir
    static Path dataDir;
    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of());
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void exportsEveryMetricTheDashboardAndAlertsQueryAndNoUnboundedLabels() throws Exception {
        Mqtt5BlockingClient subscriber = broker.connectedV5("metrics-sub-7f3a");
        subscriber.subscribeWith().topicFilter("metrics/test/#").qos(MqttQos.AT_LEAST_ONCE).send();
        var received = subscriber.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL);
        Mqtt5BlockingClient publisher = broker.connectedV5("metrics-pub-9c1e");
        for (int qos = 0; qos < 3; qos++) {
            publisher.publishWith().topic("metrics/test/device-4711").qos(MqttQos.fromCode(qos))
                    .payload("hello".getBytes(StandardCharsets.UTF_8)).send();
        }
        for (int i = 0; i < 3; i++) {
            assertTrue(received.receive(10, java.util.concurrent.TimeUnit.SECONDS).isPresent(), "message " + i);
        }
        publisher.disconnect();
        Await.until(Duration.ofSeconds(10), "the disconnect is counted",
                () -> sum(broker.scrapeMetrics(), "fleetmq_disconnects_total", "reason=\"client_normal\"") >= 1);

        // The JVM's pause timer exists once a collection happened since the node's registry was bound:
        // the dashboard queries it, so the test makes sure there was one rather than hope for it.
        Await.until(Duration.ofSeconds(10), "a GC pause recorded", () -> {
            System.gc();
            return broker.scrapeMetrics().contains("jvm_gc_pause_seconds_sum");
        });
        String scrape = broker.scrapeMetrics();
        Map<String, Set<String>> exported = exported(scrape);

        assertEquals(1, sum(scrape, "fleetmq_connections", "listener=\"tcp\",") , "one open connection on tcp");
        assertTrue(sum(scrape, "fleetmq_connects_total", "protocol=\"5\"") >= 2, "accepted CONNECTs");
        for (String qos : List.of("0", "1", "2")) {
            assertEquals(1, sum(scrape, "fleetmq_messages_received_total", "qos=\"" + qos + "\""), "received qos " + qos);
            assertTrue(sum(scrape, "fleetmq_bytes_sent_total", "qos=\"" + "1" + "\"") >= 5, "bytes sent");
        }
        assertEquals(1, sum(scrape, "fleetmq_ready", null), "ready");
        assertTrue(sum(scrape, "fleetmq_auth_results_total", "provider=\"anonymous\",result=\"allowed\"") >= 2,
                "anonymous CONNECTs allowed");
        String[] last = {""};
        try {
            Await.until(Duration.ofSeconds(10), "the session count is refreshed", () -> sum(last[0] = broker.scrapeMetrics(),
                    "fleetmq_node_sessions", "state=\"connected\",type=\"DEVICE\"") == 1);
        } catch (AssertionError e) {
            throw new AssertionError(last[0].lines().filter(l -> l.startsWith("fleetmq_node_sessions")).toList().toString(), e);
        }

        // A gauge whose object was collected reads NaN: the node's own must all hold theirs.
        List<String> nan = scrape.lines().filter(l -> l.startsWith("fleetmq_") && l.endsWith(" NaN")).toList();
        assertTrue(nan.isEmpty(), "gauges without a value: " + nan);

        Set<String> queried = new TreeSet<>();
        queried.addAll(dashboardNames());
        queried.addAll(alertNames());
        assertFalse(queried.isEmpty());
        List<String> missing = new ArrayList<>();
        for (String name : queried) {
            if (!SYNTHETIC.contains(name) && !exportedName(exported.keySet(), name)) {
                missing.add(name);
            }
        }
        assertTrue(missing.isEmpty(), "queried but not exported: " + missing + "\nexported: " + exported.keySet());

        Map<String, Set<String>> unexpected = new TreeMap<>();
        exported.forEach((name, labels) -> labels.stream().filter(l -> !ALLOWED_LABELS.contains(l)
                        && !(name.startsWith("kafka_") && KAFKA_LABELS.contains(l))
                        && !(name.startsWith("fleetmq_kafka_") && FLEETMQ_KAFKA_LABELS.contains(l))
                        && !(name.startsWith("lettuce_") && LETTUCE_LABELS.contains(l)))
                .forEach(l -> unexpected.computeIfAbsent(name, n -> new TreeSet<>()).add(l)));
        assertTrue(unexpected.isEmpty(), "labels outside the allowed set: " + unexpected);
        for (String value : List.of("metrics-sub-7f3a", "metrics-pub-9c1e", "metrics/test", "device-4711")) {
            assertFalse(scrape.contains(value), "a label value carries a client ID or topic: " + value);
        }
        subscriber.disconnect();
    }

    /**
     * Whether Prometheus would find {@code name} among the series names as exposed: a query of a
     * timer's or histogram's {@code _count}, {@code _sum}, {@code _max} or {@code _bucket} only
     * finds something if that very series is exposed (a histogram's buckets only when the meter
     * publishes them), so the names are compared as written, never by stripping suffixes of the
     * query.
     */
    static boolean exportedName(Set<String> exported, String name) {
        return exported.contains(name);
    }

    /** Series names of the scrape (as written, with their suffixes) and the label keys each carries. */
    static Map<String, Set<String>> exported(String scrape) {
        Map<String, Set<String>> names = new TreeMap<>();
        Pattern series = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)\\})? ", Pattern.MULTILINE);
        Pattern label = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_.]*)=\"");
        Matcher m = series.matcher(scrape);
        while (m.find()) {
            Set<String> keys = names.computeIfAbsent(m.group(1), n -> new TreeSet<>());
            if (m.group(3) != null) {
                Matcher l = label.matcher(m.group(3));
                while (l.find()) {
                    keys.add(l.group(1));
                }
            }
        }
        return names;
    }

    private static double sum(String scrape, String name, String labelPart) {
        Pattern line = Pattern.compile("^" + Pattern.quote(name) + "\\{([^}]*)\\} (\\S+)$", Pattern.MULTILINE);
        Matcher m = line.matcher(scrape);
        double total = 0;
        while (m.find()) {
            if (labelPart == null || (m.group(1) + ",").contains(labelPart)) {
                total += Double.parseDouble(m.group(2));
            }
        }
        return total;
    }

    /** Metric names in every {@code expr} of every panel of the dashboard. */
    private static Set<String> dashboardNames() throws Exception {
        JsonNode root = new ObjectMapper().readTree(DASHBOARD.toFile());
        List<String> exprs = new ArrayList<>();
        collect(root, "expr", exprs);
        assertTrue(exprs.size() >= 20, "the dashboard's queries: " + exprs.size());
        Set<String> names = new TreeSet<>();
        exprs.forEach(e -> names.addAll(PromQl.metricNames(e)));
        // Template variables query label values of a metric too.
        List<String> variableQueries = new ArrayList<>();
        collect(root.path("templating"), "query", variableQueries);
        for (String q : variableQueries) {
            // label_values(metric, label): the second argument is a label, not a metric.
            Matcher lv = Pattern.compile("label_values\\(\\s*([^,]+),").matcher(q);
            names.addAll(PromQl.metricNames(lv.find() ? lv.group(1) : q));
        }
        return names;
    }

    /** Metric names in every {@code expr} of every rule of the alert rules. */
    private static Set<String> alertNames() throws Exception {
        JsonNode root = new ObjectMapper(new YAMLFactory()).readTree(Files.readString(ALERTS));
        List<String> exprs = new ArrayList<>();
        for (JsonNode group : root.path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                assertTrue(rule.hasNonNull("alert") && rule.hasNonNull("for") && rule.path("annotations").has("summary"),
                        "alert with a name, a for: and a summary: " + rule);
                exprs.add(rule.path("expr").asText());
            }
        }
        assertTrue(exprs.size() >= 6, "alert rules: " + exprs.size());
        Set<String> names = new TreeSet<>();
        exprs.forEach(e -> names.addAll(PromQl.metricNames(e)));
        return names;
    }

    private static void collect(JsonNode node, String field, List<String> into) {
        if (node.isObject()) {
            node.fields().forEachRemaining(e -> {
                if (e.getKey().equals(field) && e.getValue().isTextual()) {
                    into.add(e.getValue().asText());
                } else {
                    collect(e.getValue(), field, into);
                }
            });
        } else if (node.isArray()) {
            node.forEach(n -> collect(n, field, into));
        }
    }
}
