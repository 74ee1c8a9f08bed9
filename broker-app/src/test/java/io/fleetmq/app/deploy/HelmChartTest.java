package io.fleetmq.app.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import io.fleetmq.app.config.Settings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Helm chart {@code helm/fleetmq}, linted and rendered by Helm's own library (helm-java) with
 * its defaults and the value combinations operators use. The rendered objects are parsed and
 * checked for what a running cluster depends on: ports, probes, the environment the broker reads,
 * Secret references instead of passwords, replicas, the disruption budget and a grace period that
 * covers the broker's shutdown.
 */
class HelmChartTest {

    private static final String RELEASE = "prod";
    private static final String FULLNAME = "prod-fleetmq";
    /** A current Kubernetes; Helm's own default (1.20) is older than the chart supports. */
    private static final String KUBE_VERSION = "1.31.0";
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @TempDir
    Path dir;

    @Test
    void lintIsClean() {
        LintResult result = new Helm(chart()).lint().strict().call();
        assertFalse(result.isFailed(), "helm lint --strict failed: " + result.getMessages());
        for (String message : result.getMessages()) {
            assertFalse(message.contains("[WARNING]") || message.contains("[ERROR]"), message);
        }
    }

    @Test
    void defaultsRenderThreeNodesOnTheExternalServices() throws IOException {
        Rendered r = render("");
        assertEquals(Set.of("ServiceAccount", "Service", "StatefulSet", "PodDisruptionBudget"), r.kinds());

        JsonNode sts = r.one("StatefulSet", FULLNAME);
        assertEquals(3, sts.at("/spec/replicas").asInt());
        assertEquals(FULLNAME + "-headless", sts.at("/spec/serviceName").asText());
        JsonNode pod = sts.at("/spec/template/spec");
        JsonNode broker = container(sts);
        assertEquals(List.of("node"), texts(broker.get("args")));

        assertEquals(Map.of("mqtt", 1883, "ws", 8084, "http", 8083), ports(broker.get("ports"), "containerPort"));
        Map<String, JsonNode> env = env(broker);
        assertEquals("metadata.name", env.get("BROKER_NODE_ID").at("/valueFrom/fieldRef/fieldPath").asText());
        assertEquals("0.0.0.0", value(env, "BIND_ADDRESS"));
        assertEquals("true", value(env, "MQTT_TCP_ENABLED"));
        assertEquals("false", value(env, "MQTT_TLS_ENABLED"));
        assertEquals("8083", value(env, "HTTP_PORT"));
        assertEquals("kafka:9092", value(env, "KAFKA_BOOTSTRAP_SERVERS"));
        assertEquals("redis://redis-master:6379", value(env, "REDIS_URL"));
        assertEquals("jdbc:postgresql://postgresql:5432/fleetmq", value(env, "DATABASE_URL"));
        assertFalse(env.containsKey("MQTT_TLS_CERT_FILE"));

        // Every variable the chart sets is one the broker reads (or the JVM's, or a helper for $(...)).
        Set<String> known = Settings.shipped().values().stream().map(s -> s.env()).collect(Collectors.toSet());
        known.addAll(Set.of("JAVA_TOOL_OPTIONS", "FLEETMQ_REDIS_PASSWORD"));
        for (String name : env.keySet()) {
            assertTrue(known.contains(name), name + " is not a setting of fleetmq.yml");
        }

        JsonNode liveness = broker.get("livenessProbe");
        assertEquals("/health/live", liveness.at("/httpGet/path").asText());
        assertEquals("http", liveness.at("/httpGet/port").asText());
        JsonNode readiness = broker.get("readinessProbe");
        assertEquals("/health/ready", readiness.at("/httpGet/path").asText());
        assertEquals("http", readiness.at("/httpGet/port").asText());

        // Grace period = preStop pause + the broker's shutdown timeout + margin.
        assertEquals("30s", value(env, "BROKER_SHUTDOWN_TIMEOUT"));
        assertEquals(List.of("sleep", "5"), texts(broker.at("/lifecycle/preStop/exec/command")));
        assertEquals(5 + 30 + 10, pod.get("terminationGracePeriodSeconds").asInt());

        assertEquals("1Gi", broker.at("/resources/limits/memory").asText());
        assertEquals("500m", broker.at("/resources/requests/cpu").asText());
        assertTrue(broker.at("/securityContext/readOnlyRootFilesystem").asBoolean());

        JsonNode soft = pod.at("/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/0/podAffinityTerm");
        assertEquals("kubernetes.io/hostname", soft.get("topologyKey").asText());
        assertEquals(sts.at("/spec/selector/matchLabels"), soft.at("/labelSelector/matchLabels"));
        assertTrue(pod.at("/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution").isMissingNode());

        JsonNode mqtt = r.one("Service", FULLNAME);
        assertEquals("ClusterIP", mqtt.at("/spec/type").asText());
        assertEquals(Map.of("mqtt", 1883, "ws", 8084), ports(mqtt.at("/spec/ports"), "port"));
        assertEquals(sts.at("/spec/selector/matchLabels"), mqtt.at("/spec/selector"));
        JsonNode admin = r.one("Service", FULLNAME + "-admin");
        assertEquals(Map.of("http", 8083), ports(admin.at("/spec/ports"), "port"));
        JsonNode headless = r.one("Service", FULLNAME + "-headless");
        assertEquals("None", headless.at("/spec/clusterIP").asText());
        assertTrue(headless.at("/spec/publishNotReadyAddresses").asBoolean());
        assertEquals(Map.of("mqtt", 1883, "ws", 8084, "http", 8083), ports(headless.at("/spec/ports"), "port"));

        JsonNode pdb = r.one("PodDisruptionBudget", FULLNAME);
        assertEquals(1, pdb.at("/spec/maxUnavailable").asInt());
        assertEquals(sts.at("/spec/selector/matchLabels"), pdb.at("/spec/selector/matchLabels"));
        assertEquals(sts.at("/spec/selector/matchLabels").size(), 2);
    }

    @Test
    void tlsListenersUseTheCertificateSecretMountedAsFiles() throws IOException {
        Rendered r = render("""
                listeners:
                  tls: {enabled: true}
                  wss: {enabled: true}
                tls:
                  existingSecret: mqtt-cert
                  clientAuth: required
                  keyPassword: {existingSecret: mqtt-key-pass, key: pass}
                """);
        JsonNode sts = r.one("StatefulSet", FULLNAME);
        JsonNode broker = container(sts);
        assertEquals(Map.of("mqtt", 1883, "mqtts", 8883, "ws", 8084, "wss", 8085, "http", 8083),
                ports(broker.get("ports"), "containerPort"));
        assertEquals(Map.of("mqtt", 1883, "mqtts", 8883, "ws", 8084, "wss", 8085),
                ports(r.one("Service", FULLNAME).at("/spec/ports"), "port"));
        Map<String, JsonNode> env = env(broker);
        assertEquals("true", value(env, "MQTT_TLS_ENABLED"));
        assertEquals("true", value(env, "MQTT_WSS_ENABLED"));
        assertEquals("/etc/fleetmq/tls/tls.crt", value(env, "MQTT_TLS_CERT_FILE"));
        assertEquals("/etc/fleetmq/tls/tls.key", value(env, "MQTT_TLS_KEY_FILE"));
        assertEquals("/etc/fleetmq/tls/ca.crt", value(env, "MQTT_TLS_CA_FILE"));
        assertEquals("required", value(env, "MQTT_TLS_CLIENT_AUTH"));
        assertSecretRef(env, "MQTT_TLS_KEY_PASSWORD", "mqtt-key-pass", "pass");
        assertEquals("/etc/fleetmq/tls", mount(broker, "tls").get("mountPath").asText());
        assertNull(mount(broker, "tls").get("subPath"), "a subPath mount never sees a renewed certificate");
        assertEquals("mqtt-cert", volume(sts, "tls").at("/secret/secretName").asText());
        assertNoPlainPasswords(r);

        IllegalStateException noSecret = assertThrows(IllegalStateException.class,
                () -> render("listeners: {tls: {enabled: true}}"));
        assertTrue(noSecret.getMessage().contains("tls.existingSecret"), noSecret.getMessage());
    }

    @Test
    void loadBalancerServiceExposesTheListenersWithItsOptions() throws IOException {
        Rendered r = render("""
                service:
                  type: LoadBalancer
                  loadBalancerSourceRanges: [10.0.0.0/8]
                  externalTrafficPolicy: Local
                  annotations: {service.beta.kubernetes.io/aws-load-balancer-type: nlb}
                listeners:
                  ws: {enabled: false}
                """);
        JsonNode svc = r.one("Service", FULLNAME);
        assertEquals("LoadBalancer", svc.at("/spec/type").asText());
        assertEquals("Local", svc.at("/spec/externalTrafficPolicy").asText());
        assertEquals("10.0.0.0/8", svc.at("/spec/loadBalancerSourceRanges/0").asText());
        assertEquals("nlb", svc.at("/metadata/annotations").get("service.beta.kubernetes.io/aws-load-balancer-type").asText());
        assertEquals(Map.of("mqtt", 1883), ports(svc.at("/spec/ports"), "port"));
        assertEquals("false", value(env(container(r.one("StatefulSet", FULLNAME))), "MQTT_WS_ENABLED"));
        // The admin port never leaves the cluster with the MQTT Service.
        assertEquals("ClusterIP", r.one("Service", FULLNAME + "-admin").at("/spec/type").asText());
    }

    @Test
    void nodePortServiceTakesTheGivenNodePorts() throws IOException {
        Rendered r = render("""
                service: {type: NodePort}
                listeners:
                  tcp: {nodePort: 31883}
                """);
        JsonNode svc = r.one("Service", FULLNAME);
        assertEquals("NodePort", svc.at("/spec/type").asText());
        assertEquals(Map.of("mqtt", 31883), ports(svc.at("/spec/ports"), "nodePort"));
        assertEquals(Map.of("mqtt", 1883, "ws", 8084), ports(svc.at("/spec/ports"), "port"));

        IllegalStateException bad = assertThrows(IllegalStateException.class, () -> render("service: {type: Ingress}"));
        assertTrue(bad.getMessage().contains("service.type"), bad.getMessage());
    }

    @Test
    void serviceMonitorScrapesMetricsThroughTheAdminService() throws IOException {
        Rendered r = render("""
                serviceMonitor:
                  enabled: true
                  labels: {release: kube-prometheus-stack}
                """);
        JsonNode monitor = r.one("ServiceMonitor", FULLNAME);
        assertEquals("monitoring.coreos.com/v1", monitor.get("apiVersion").asText());
        assertEquals("kube-prometheus-stack", monitor.at("/metadata/labels/release").asText());
        assertEquals("http", monitor.at("/spec/endpoints/0/port").asText());
        assertEquals("/metrics", monitor.at("/spec/endpoints/0/path").asText());
        JsonNode selector = monitor.at("/spec/selector/matchLabels");
        assertTrue(selects(selector, r.one("Service", FULLNAME + "-admin")), "must select the admin Service");
        assertFalse(selects(selector, r.one("Service", FULLNAME)), "must not scrape the MQTT Service");
        assertFalse(selects(selector, r.one("Service", FULLNAME + "-headless")), "must scrape each node once");
    }

    @Test
    void autoscalingOwnsTheReplicaCount() throws IOException {
        Rendered r = render("""
                autoscaling: {enabled: true, minReplicas: 3, maxReplicas: 12, targetMemoryUtilizationPercentage: 80}
                """);
        JsonNode sts = r.one("StatefulSet", FULLNAME);
        assertTrue(sts.at("/spec/replicas").isMissingNode(), "replicas would fight the autoscaler");
        JsonNode hpa = r.one("HorizontalPodAutoscaler", FULLNAME);
        assertEquals("StatefulSet", hpa.at("/spec/scaleTargetRef/kind").asText());
        assertEquals(FULLNAME, hpa.at("/spec/scaleTargetRef/name").asText());
        assertEquals(3, hpa.at("/spec/minReplicas").asInt());
        assertEquals(12, hpa.at("/spec/maxReplicas").asInt());
        assertEquals(List.of("cpu", "memory"),
                hpa.at("/spec/metrics").findValues("name").stream().map(JsonNode::asText).toList());
    }

    @Test
    void passwordsComeFromExistingSecretsOnly() throws IOException {
        Rendered r = render("""
                kafka:
                  bootstrapServers: my-kafka-kafka-bootstrap:9093
                  securityProtocol: SASL_SSL
                  tls: {caSecret: my-kafka-cluster-ca-cert}
                  sasl: {mechanism: SCRAM-SHA-512, username: fleetmq, existingSecret: fleetmq-kafka-user}
                redis:
                  url: redis-sentinel://redis:26379#mymaster
                  auth: {existingSecret: redis, passwordKey: redis-password}
                database:
                  url: jdbc:postgresql://pg-rw:5432/app
                  existingSecret: pg-app
                  userKey: username
                admin:
                  existingSecret: fleetmq-admin
                """);
        JsonNode sts = r.one("StatefulSet", FULLNAME);
        Map<String, JsonNode> env = env(container(sts));
        assertEquals("SASL_SSL", value(env, "KAFKA_SECURITY_PROTOCOL"));
        assertEquals("SCRAM-SHA-512", value(env, "KAFKA_SASL_MECHANISM"));
        assertEquals("/etc/fleetmq/kafka-ca/ca.crt", value(env, "KAFKA_SSL_CA_FILE"));
        assertEquals("my-kafka-cluster-ca-cert", volume(sts, "kafka-ca").at("/secret/secretName").asText());
        assertSecretRef(env, "KAFKA_SASL_PASSWORD", "fleetmq-kafka-user", "password");
        assertSecretRef(env, "DATABASE_PASSWORD", "pg-app", "password");
        assertSecretRef(env, "DATABASE_USER", "pg-app", "username");
        assertSecretRef(env, "ADMIN_PASSWORD", "fleetmq-admin", "password");
        assertSecretRef(env, "FLEETMQ_REDIS_PASSWORD", "redis", "redis-password");
        // Kubernetes expands $(VAR) only from variables defined earlier in the list.
        assertEquals("redis-sentinel://:$(FLEETMQ_REDIS_PASSWORD)@redis:26379#mymaster", value(env, "REDIS_URL"));
        List<String> order = new ArrayList<>(env.keySet());
        assertTrue(order.indexOf("FLEETMQ_REDIS_PASSWORD") < order.indexOf("REDIS_URL"));
        assertNoPlainPasswords(r);

        Rendered whole = render("redis: {urlSecret: {name: redis-url, key: url}}");
        assertSecretRef(env(container(whole.one("StatefulSet", FULLNAME))), "REDIS_URL", "redis-url", "url");
        assertNoPlainPasswords(whole);

        IllegalStateException inline = assertThrows(IllegalStateException.class,
                () -> render("redis: {url: 'redis://:hunter2@redis:6379'}"));
        assertTrue(inline.getMessage().contains("redis.auth.existingSecret"), inline.getMessage());
    }

    @Test
    void shutdownTimeoutAndGracePeriodMoveTogether() throws IOException {
        Rendered r = render("shutdown: {timeoutSeconds: 120, preStopSeconds: 15, marginSeconds: 5, nativeSleep: true}");
        JsonNode sts = r.one("StatefulSet", FULLNAME);
        JsonNode broker = container(sts);
        assertEquals("120s", value(env(broker), "BROKER_SHUTDOWN_TIMEOUT"));
        assertEquals(15, broker.at("/lifecycle/preStop/sleep/seconds").asInt());
        assertEquals(15 + 120 + 5, sts.at("/spec/template/spec/terminationGracePeriodSeconds").asInt());
        assertTrue(sts.at("/spec/template/spec/terminationGracePeriodSeconds").asInt()
                > sts.at("/spec/template/spec/containers/0/lifecycle/preStop/sleep/seconds").asInt() + 120);
    }

    @Test
    void configOverridesReachTheNodeAsItsConfigFile() throws IOException {
        Rendered r = render("""
                config:
                  mqtt:
                    max-connections: "200000"
                  sessions:
                    application-client-id-pattern: "app-.*"
                podAntiAffinity: hard
                extraEnv:
                  - {name: CLUSTER_SHUTDOWN_SERVER_REFERENCE, value: "mqtt.example.com:1883"}
                """);
        JsonNode sts = r.one("StatefulSet", FULLNAME);
        JsonNode broker = container(sts);
        assertEquals(List.of("node", "--config", "/etc/fleetmq/config/fleetmq.yml"), texts(broker.get("args")));
        assertEquals("/etc/fleetmq/config", mount(broker, "config").get("mountPath").asText());
        JsonNode configMap = r.one("ConfigMap", FULLNAME + "-config");
        assertEquals(configMap.at("/metadata/name").asText(), volume(sts, "config").at("/configMap/name").asText());
        JsonNode file = YAML.readTree(configMap.at("/data/fleetmq.yml").asText());
        assertEquals("200000", file.at("/mqtt/max-connections").asText());
        // Keys the broker does not know would stop it at start-up.
        file.at("/mqtt").fieldNames().forEachRemaining(k ->
                assertTrue(Settings.shipped().containsKey("mqtt." + k), "unknown setting mqtt." + k));
        assertNotNull(sts.at("/spec/template/metadata/annotations").get("checksum/config"));
        assertEquals("mqtt.example.com:1883", value(env(broker), "CLUSTER_SHUTDOWN_SERVER_REFERENCE"));

        JsonNode hard = sts.at("/spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/0");
        assertEquals("kubernetes.io/hostname", hard.get("topologyKey").asText());
        assertTrue(sts.at("/spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution")
                .isMissingNode());
    }

    // --- rendering and reading the objects ---

    /** The objects of one rendering, in order. */
    private record Rendered(List<JsonNode> objects, String text) {

        Set<String> kinds() {
            return objects.stream().map(o -> o.get("kind").asText()).collect(Collectors.toSet());
        }

        JsonNode one(String kind, String name) {
            List<JsonNode> found = objects.stream()
                    .filter(o -> kind.equals(o.path("kind").asText()) && name.equals(o.at("/metadata/name").asText()))
                    .toList();
            assertEquals(1, found.size(), "objects " + kind + "/" + name + " in " + summary());
            return found.get(0);
        }

        private String summary() {
            return objects.stream().map(o -> o.path("kind").asText() + "/" + o.at("/metadata/name").asText()).toList()
                    .toString();
        }
    }

    private Rendered render(String values) throws IOException {
        Path file = Files.createTempFile(dir, "values", ".yaml");
        Files.writeString(file, values);
        String text = new Helm(chart()).template().withName(RELEASE).withNamespace("mqtt").withKubeVersion(KUBE_VERSION).withValuesFile(file).call();
        List<JsonNode> objects = new ArrayList<>();
        try (var docs = YAML.readerFor(JsonNode.class).<JsonNode>readValues(text)) {
            while (docs.hasNext()) {
                JsonNode doc = docs.next();
                if (doc != null && !doc.isMissingNode() && !doc.isNull()) {
                    objects.add(doc);
                }
            }
        }
        return new Rendered(objects, text);
    }

    /** helm/fleetmq, found from the module directory the tests run in. */
    private static Path chart() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("helm/fleetmq/Chart.yaml"))) {
                return d.resolve("helm/fleetmq");
            }
        }
        return fail("helm/fleetmq not found above " + Path.of("").toAbsolutePath());
    }

    private static JsonNode container(JsonNode statefulSet) {
        JsonNode containers = statefulSet.at("/spec/template/spec/containers");
        assertEquals(1, containers.size());
        assertEquals("broker", containers.get(0).get("name").asText());
        return containers.get(0);
    }

    /** Environment variables by name, in the order of the manifest. */
    private static Map<String, JsonNode> env(JsonNode container) {
        Map<String, JsonNode> env = new LinkedHashMap<>();
        for (JsonNode e : container.get("env")) {
            // A later entry with the same name (extraEnv) is the one Kubernetes uses.
            env.remove(e.get("name").asText());
            env.put(e.get("name").asText(), e);
        }
        return env;
    }

    private static String value(Map<String, JsonNode> env, String name) {
        JsonNode e = env.get(name);
        assertNotNull(e, name + " is not set");
        assertTrue(e.has("value"), name + " has no literal value: " + e);
        return e.get("value").asText();
    }

    private static void assertSecretRef(Map<String, JsonNode> env, String name, String secret, String key) {
        JsonNode e = env.get(name);
        assertNotNull(e, name + " is not set");
        assertFalse(e.has("value"), name + " must not carry a literal value");
        assertEquals(secret, e.at("/valueFrom/secretKeyRef/name").asText(), name);
        assertEquals(key, e.at("/valueFrom/secretKeyRef/key").asText(), name);
    }

    /**
     * No Secret is rendered, every variable that holds a password takes it from a Secret, and no
     * URL carries credentials other than a $(...) reference.
     */
    private static void assertNoPlainPasswords(Rendered r) {
        assertFalse(r.kinds().contains("Secret"), "the chart must not write Secrets of its own");
        for (JsonNode o : r.objects()) {
            for (JsonNode envList : o.findValues("env")) {
                for (JsonNode e : envList) {
                    String name = e.get("name").asText();
                    if (name.contains("PASSWORD")) {
                        assertTrue(e.has("valueFrom") && !e.has("value"), name + " holds a literal value");
                    }
                    String v = e.path("value").asText("");
                    if (v.matches("^[a-z-]+://[^/]*@.*")) {
                        assertTrue(v.matches("^[a-z-]+://[^:/@]*:\\$\\([A-Z_]+\\)@.*"), name + " carries credentials: " + v);
                    }
                }
            }
        }
    }

    private static JsonNode mount(JsonNode container, String name) {
        for (JsonNode m : container.get("volumeMounts")) {
            if (name.equals(m.get("name").asText())) {
                return m;
            }
        }
        return fail("no volume mount " + name);
    }

    private static JsonNode volume(JsonNode statefulSet, String name) {
        for (JsonNode v : statefulSet.at("/spec/template/spec/volumes")) {
            if (name.equals(v.get("name").asText())) {
                return v;
            }
        }
        return fail("no volume " + name);
    }

    /** Ports by name: the given field (containerPort, port, nodePort) of each entry. */
    private static Map<String, Integer> ports(JsonNode ports, String field) {
        Map<String, Integer> byName = new LinkedHashMap<>();
        for (JsonNode p : ports) {
            if (p.has(field)) {
                byName.put(p.get("name").asText(), p.get(field).asInt());
            }
        }
        return byName;
    }

    private static List<String> texts(JsonNode array) {
        List<String> texts = new ArrayList<>();
        array.forEach(t -> texts.add(t.asText()));
        return texts;
    }

    private static boolean selects(JsonNode matchLabels, JsonNode object) {
        JsonNode labels = object.at("/metadata/labels");
        Set<String> missing = new HashSet<>();
        matchLabels.fields().forEachRemaining(f -> {
            if (!f.getValue().asText().equals(labels.path(f.getKey()).asText(null))) {
                missing.add(f.getKey());
            }
        });
        return missing.isEmpty();
    }
}
