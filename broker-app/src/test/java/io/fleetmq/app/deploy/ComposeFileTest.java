package io.fleetmq.app.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fleetmq.app.config.Settings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Keeps {@code docker/compose.yml}, {@code docker/haproxy.cfg}, {@code docker/prometheus/prometheus.yml}
 * and {@code docker/Dockerfile} in step with the broker: nothing here runs Docker, but a renamed
 * setting, a moved port or a missing mounted file fails the build instead of the first
 * {@code docker compose up}. The settings come from the shipped {@code fleetmq.yml} as the test
 * reads it, so a setting added on another branch counts once merged.
 */
class ComposeFileTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final Set<String> NODES = Set.of("node-1", "node-2", "node-3");
    private static final Set<String> SERVICES = Set.of("node-1", "node-2", "node-3", "haproxy", "kafka", "redis",
            "postgres", "prometheus", "grafana");
    /** Variables of the image, not of fleetmq.yml. */
    private static final Set<String> IMAGE_VARIABLES = Set.of("JAVA_OPTS");
    private static final Pattern HOST_PORT = Pattern.compile("([a-z0-9-]+):(\\d+)");

    private static Path docker;
    private static JsonNode services;
    private static Map<String, Settings.Declared> byEnv;

    @BeforeAll
    static void load() throws IOException {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve("docker/compose.yml"))) {
            dir = dir.getParent();
        }
        assertNotNull(dir, "docker/compose.yml not found above " + Path.of("").toAbsolutePath());
        docker = dir.resolve("docker");
        services = YAML.readTree(docker.resolve("compose.yml").toFile()).path("services");
        byEnv = Settings.shipped().values().stream()
                .collect(Collectors.toMap(Settings.Declared::env, d -> d, (a, b) -> a, LinkedHashMap::new));
    }

    @Test
    void runsThreeNodesAndWhatTheyNeed() {
        assertEquals(SERVICES, names(services));
        Set<String> ids = new HashSet<>();
        for (String node : NODES) {
            JsonNode s = services.get(node);
            assertEquals("node", s.path("command").path(0).asText(), node + " runs the node subcommand");
            assertTrue(ids.add(env(node).get("BROKER_NODE_ID")), node + " has a node id of its own");
            assertTrue(Files.isRegularFile(docker.resolve(s.path("build").path("context").asText())
                    .resolve(s.path("build").path("dockerfile").asText()).normalize()), node + " builds docker/Dockerfile");
            for (String external : List.of("KAFKA_BOOTSTRAP_SERVERS", "REDIS_URL", "DATABASE_URL")) {
                assertNotNull(env(node).get(external), node + " sets " + external + ": node mode needs it");
            }
        }
        services.fields().forEachRemaining(e -> e.getValue().path("depends_on").fieldNames()
                .forEachRemaining(d -> assertTrue(services.has(d), e.getKey() + " depends on unknown " + d)));
        services.fields().forEachRemaining(e -> {
            JsonNode deps = e.getValue().path("depends_on");
            if (deps.isArray()) {
                deps.forEach(d -> assertTrue(services.has(d.asText()), e.getKey() + " depends on unknown " + d));
            }
        });
    }

    @Test
    void everyFleetMqVariableIsADeclaredSetting() {
        for (String node : NODES) {
            for (Map.Entry<String, String> e : env(node).entrySet()) {
                assertTrue(byEnv.containsKey(e.getKey()) || IMAGE_VARIABLES.contains(e.getKey()),
                        node + " sets " + e.getKey() + ", which fleetmq.yml does not declare");
            }
        }
        // The database passwords of the nodes and of PostgreSQL come from the same variable.
        String postgresPassword = env("postgres").get("POSTGRES_PASSWORD");
        for (String node : NODES) {
            assertEquals(postgresPassword, env(node).get("DATABASE_PASSWORD"));
            assertTrue(postgresPassword.startsWith("${"), "the password is a variable, not written here");
        }
    }

    @Test
    void publishedPortsMatchTheListeners() throws IOException {
        for (String node : NODES) {
            int http = port(node, "HTTP_PORT");
            for (String mapping : strings(services.get(node).path("ports"))) {
                assertEquals(http, containerPort(mapping), node + " publishes its admin port only: " + mapping);
            }
        }
        // Clients reach the nodes through HAProxy: what it publishes is what it binds.
        String haproxy = Files.readString(docker.resolve("haproxy.cfg"));
        Set<Integer> binds = new TreeSet<>();
        Matcher bind = Pattern.compile("(?m)^\\s*bind\\s+\\S*:(\\d+)").matcher(haproxy);
        while (bind.find()) {
            binds.add(Integer.parseInt(bind.group(1)));
        }
        Set<Integer> published = strings(services.get("haproxy").path("ports")).stream()
                .map(ComposeFileTest::containerPort).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(binds, published);
        // The image exposes every listener at its default port.
        String dockerfile = Files.readString(docker.resolve("Dockerfile"));
        Matcher expose = Pattern.compile("(?m)^EXPOSE\\s+(.+)$").matcher(dockerfile);
        assertTrue(expose.find(), "the Dockerfile exposes ports");
        Set<String> exposed = Set.of(expose.group(1).trim().split("\\s+"));
        for (String env : List.of("MQTT_TCP_PORT", "MQTT_TLS_PORT", "MQTT_WS_PORT", "MQTT_WSS_PORT", "HTTP_PORT")) {
            assertTrue(exposed.contains(byEnv.get(env).defaultValue()), "EXPOSE lacks " + env);
        }
    }

    @Test
    void mountedFilesExistInTheRepository() {
        services.fields().forEachRemaining(e -> {
            for (String volume : strings(e.getValue().path("volumes"))) {
                String source = volume.split(":")[0];
                if (source.startsWith(".")) {
                    assertTrue(Files.exists(docker.resolve(source).normalize()),
                            e.getKey() + " mounts " + source + ", which is not in the repository");
                }
            }
        });
    }

    @Test
    void haproxyBalancesOverTheNodesListenersWithTheProxyProtocol() throws IOException {
        // Each backend: its servers are nodes, on one listener port; its health check is the admin port.
        Map<String, List<String>> backends = new LinkedHashMap<>();
        String current = null;
        for (String line : Files.readAllLines(docker.resolve("haproxy.cfg"))) {
            String t = line.strip();
            if (!line.startsWith(" ") && !line.startsWith("\t")) {
                current = t.startsWith("backend ") ? t.substring("backend ".length()).strip() : null;
                if (current != null) {
                    backends.put(current, new ArrayList<>());
                }
            } else if (current != null && !t.isEmpty() && !t.startsWith("#")) {
                backends.get(current).add(t);
            }
        }
        assertFalse(backends.isEmpty(), "haproxy.cfg has backends");
        Map<Integer, String> proxySettingByPort = new HashMap<>();
        for (String listener : List.of("TCP", "TLS", "WS", "WSS")) {
            proxySettingByPort.put(Integer.parseInt(byEnv.get("MQTT_" + listener + "_PORT").defaultValue()),
                    "MQTT_" + listener + "_PROXY_PROTOCOL");
        }
        for (Map.Entry<String, List<String>> b : backends.entrySet()) {
            String defaults = b.getValue().stream().filter(l -> l.startsWith("default-server")).findFirst().orElse("");
            List<String> servers = b.getValue().stream().filter(l -> l.startsWith("server ")).toList();
            assertEquals(NODES.size(), servers.size(), b.getKey() + " balances over every node");
            for (String server : servers) {
                Matcher m = HOST_PORT.matcher(server.split("\\s+")[2]);
                assertTrue(m.matches(), server);
                String node = m.group(1);
                int port = Integer.parseInt(m.group(2));
                assertTrue(NODES.contains(node), b.getKey() + " points at " + node + ", which is not a node");
                String setting = proxySettingByPort.get(port);
                if (setting == null) {
                    fail(b.getKey() + " points at port " + port + ", which is no MQTT listener of " + node);
                }
                assertEquals(port, port(node, setting.replace("_PROXY_PROTOCOL", "_PORT")));
                String options = server + " " + defaults;
                if (options.contains("send-proxy")) {
                    assertTrue(byEnv.containsKey(setting), setting + " is not a setting of fleetmq.yml yet");
                    assertEquals("true", env(node).get(setting),
                            node + " must expect the PROXY protocol HAProxy sends to port " + port);
                }
                Matcher check = Pattern.compile("check port (\\d+)").matcher(options);
                assertTrue(check.find(), b.getKey() + " checks the nodes' health");
                assertEquals(port(node, "HTTP_PORT"), Integer.parseInt(check.group(1)));
            }
        }
    }

    @Test
    void prometheusScrapesEveryNodeAndLoadsTheAlerts() throws IOException {
        JsonNode prometheus = YAML.readTree(docker.resolve("prometheus/prometheus.yml").toFile());
        Set<String> scraped = new TreeSet<>();
        for (JsonNode job : prometheus.path("scrape_configs")) {
            for (JsonNode sc : job.path("static_configs")) {
                for (String target : strings(sc.path("targets"))) {
                    Matcher m = HOST_PORT.matcher(target);
                    assertTrue(m.matches(), target);
                    assertTrue(NODES.contains(m.group(1)), target + " is not a node");
                    assertEquals(port(m.group(1), "HTTP_PORT"), Integer.parseInt(m.group(2)), target);
                    scraped.add(m.group(1));
                }
            }
        }
        assertEquals(new TreeSet<>(NODES), scraped);
        // Rule files are where compose mounts them, from files in the repository.
        Map<String, String> mounts = mounts("prometheus");
        for (String rules : strings(prometheus.path("rule_files"))) {
            String source = mounts.get(rules);
            assertNotNull(source, rules + " is not mounted into prometheus");
            assertTrue(Files.isRegularFile(docker.resolve(source).normalize()), source);
        }
        assertTrue(mounts.containsValue("./prometheus/prometheus.yml"));
    }

    @Test
    void grafanaGetsTheDashboardProvisioned() {
        Map<String, String> mounts = mounts("grafana");
        assertEquals("./grafana/provisioning", mounts.get("/etc/grafana/provisioning"));
        assertTrue(Files.isRegularFile(docker.resolve("grafana/dashboards/fleetmq.json")));
        assertTrue(mounts.containsValue("./grafana/dashboards"));
    }

    /** The node's port for a listener: its environment, else the image's, else fleetmq.yml's default. */
    private static int port(String node, String env) {
        String value = env(node).get(env);
        if (value == null && env.equals("HTTP_PORT")) {
            value = imageEnv().get("HTTP_PORT");
        }
        return Integer.parseInt(value != null ? value : byEnv.get(env).defaultValue());
    }

    private static Map<String, String> imageEnv() {
        try {
            Map<String, String> out = new HashMap<>();
            Matcher m = Pattern.compile("([A-Z_]+)=(\\S+)").matcher(
                    Files.readString(docker.resolve("Dockerfile")).replace("\\\n", " "));
            while (m.find()) {
                out.putIfAbsent(m.group(1), m.group(2));
            }
            return out;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static Map<String, String> env(String service) {
        Map<String, String> out = new LinkedHashMap<>();
        JsonNode env = services.path(service).path("environment");
        if (env.isArray()) {
            env.forEach(n -> {
                String[] kv = n.asText().split("=", 2);
                out.put(kv[0], kv.length > 1 ? kv[1] : "");
            });
        } else {
            env.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        }
        return out;
    }

    /** Container path to host path of a service's bind mounts. */
    private static Map<String, String> mounts(String service) {
        Map<String, String> out = new HashMap<>();
        for (String v : strings(services.path(service).path("volumes"))) {
            String[] parts = v.split(":");
            out.put(parts[1], parts[0]);
        }
        return out;
    }

    private static int containerPort(String mapping) {
        String[] parts = mapping.split(":");
        return Integer.parseInt(parts[parts.length - 1].split("/")[0]);
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    private static Set<String> names(JsonNode object) {
        Set<String> out = new TreeSet<>();
        object.fieldNames().forEachRemaining(out::add);
        return new HashSet<>(out);
    }
}
