package io.fleetmq.app.http;

import static io.fleetmq.app.http.ApiTestNode.body;
import static io.fleetmq.app.http.ApiTestNode.json;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.FreePorts;
import io.fleetmq.testkit.RawMqtt;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.math.BigInteger;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The PROXY protocol on a node whose TCP, TLS and WebSocket listeners expect it: the address a header
 * names is the client's for blocked-IP rules, the refused-connections log and the admin API;
 * connections without a valid header first are closed; and a real HAProxy in front
 * ({@code send-proxy-v2}) gets its clients through while one that sends no header does not.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ProxyProtocolTest {

    /** The 12-byte signature that starts every version 2 header. */
    private static final byte[] V2_SIGNATURE = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};

    @TempDir
    static Path dataDir;
    @TempDir
    static Path haproxyDir;
    @TempDir
    static Path tlsDir;
    private ApiTestNode node;
    private String token;
    private X509Certificate certificate;

    @BeforeAll
    void start() throws Exception {
        Path cert = tlsDir.resolve("cert.pem");
        Path key = tlsDir.resolve("key.pem");
        certificate = selfSigned(cert, key);
        Map<String, String> env = new HashMap<>();
        env.put("ADMIN_PASSWORD", "admin-Password-7");
        env.put("MQTT_CONNECT_TIMEOUT", "3");
        env.put("MQTT_TCP_PROXY_PROTOCOL", "true");
        env.put("MQTT_WS_PROXY_PROTOCOL", "true");
        env.put("MQTT_TLS_ENABLED", "true");
        env.put("MQTT_TLS_PORT", "0");
        env.put("MQTT_TLS_CERT_FILE", cert.toString());
        env.put("MQTT_TLS_KEY_FILE", key.toString());
        env.put("MQTT_TLS_PROXY_PROTOCOL", "true");
        node = new ApiTestNode(dataDir, env);
        token = node.token("admin", "admin-Password-7");
    }

    @AfterAll
    void stop() {
        node.close();
    }

    @Test
    void aVersion1HeaderGivesTheAddressTheAdminApiShows() throws IOException {
        String clientId = "proxied-v1-" + UUID.randomUUID();
        try (RawMqtt raw = RawMqtt.connect(node.mqttPort())) {
            raw.send(concat(ascii("PROXY TCP4 198.51.100.23 127.0.0.1 40001 1883\r\n"), RawMqtt.connectV5(clientId)));
            assertEquals(0, RawMqtt.parseConnAckV5(raw.readType(2)).reasonCode());
            assertEquals("198.51.100.23", sessionAddress(clientId));
        }
        String ipv6 = "proxied-v1-6-" + UUID.randomUUID();
        try (RawMqtt raw = RawMqtt.connect(node.mqttPort())) {
            raw.send(concat(ascii("PROXY TCP6 2001:db8::7 ::1 40002 1883\r\n"), RawMqtt.connectV5(ipv6)));
            assertEquals(0, RawMqtt.parseConnAckV5(raw.readType(2)).reasonCode());
            assertEquals("2001:db8:0:0:0:0:0:7", sessionAddress(ipv6));
        }
    }

    @Test
    void aVersion2HeaderMeetsTheBlockedIpRulesAndTheRefusedLog() throws IOException {
        HttpResponse<String> created = node.send("POST", "/api/v1/blocked",
                json(Map.of("type", "ip", "value", "203.0.113.7")), token);
        assertEquals(201, created.statusCode(), created.body());
        String blocked = "proxied-blocked-" + UUID.randomUUID();
        Await.until(Duration.ofSeconds(20), "a CONNECT from the blocked address refused with 0x8A",
                () -> connAckThrough(v2Tcp4("203.0.113.7", 50_007), blocked) == 0x8A);
        String refused = "/api/v1/refused-connections?clientId=" + blocked;
        Await.until(Duration.ofSeconds(20), "the refusal logged with the header's address", () -> {
            JsonNode items = body(node.get(refused, token)).path("items");
            return items.size() == 1 && "203.0.113.7".equals(items.get(0).path("address").asText())
                    && "blocked".equals(items.get(0).path("reason").asText());
        });
        assertEquals(0, connAckThrough(v2Tcp4("203.0.113.8", 50_008), "proxied-other-" + UUID.randomUUID()));
    }

    @Test
    void localAndUnknownHeadersKeepTheSocketsAddress() throws IOException {
        // Version 2 LOCAL (a balancer's health check): version/command 0x20, family 0, no addresses.
        String local = "proxied-local-" + UUID.randomUUID();
        assertEquals(0, connAckThrough(concat(V2_SIGNATURE, new byte[] {0x20, 0x00, 0x00, 0x00}), local));
        String unknown = "proxied-unknown-" + UUID.randomUUID();
        assertEquals(0, connAckThrough(ascii("PROXY UNKNOWN\r\n"), unknown));
    }

    @Test
    void connectionsWithoutAValidHeaderFirstAreClosed() throws IOException {
        double missing = refusals("missing");
        double malformed = refusals("malformed");
        assertClosed(RawMqtt.connectV5("no-header"));
        assertClosed(concat(RawMqtt.connectV5("header-second"), ascii("PROXY TCP4 198.51.100.1 127.0.0.1 1 2\r\n")));
        assertClosed(ascii("GET /mqtt HTTP/1.1\r\nHost: x\r\n\r\n"));
        // The refusal is counted as the connection closes: the client may see the close first.
        Await.until(Duration.ofSeconds(10), "three refusals counted as missing",
                () -> refusals("missing") == missing + 3);
        assertClosed(concat(ascii("PROXY TCP4 not-an-address 127.0.0.1 40003 1883\r\n"), RawMqtt.connectV5("bad-v1")));
        assertClosed(ascii("PROXY TCP4 198.51.100.1 127.0.0.1 40004 1883 and more than a hundred and eight bytes"
                + " of a line that never ends as the specification of version one allows\r\n"));
        Await.until(Duration.ofSeconds(10), "two refusals counted as malformed",
                () -> refusals("malformed") == malformed + 2);

        // Half a header and then silence: closed after the connect timeout like any silent connection.
        try (RawMqtt raw = RawMqtt.connect(node.mqttPort())) {
            raw.send(ascii("PROXY TCP4 198.51"));
            raw.socketTimeout(15_000);
            assertTrue(raw.closedByBroker(), "closed after the connect timeout");
        }
    }

    @Test
    void theTlsListenerReadsTheHeaderInClearBeforeTheHandshake() throws Exception {
        int port = node.broker().node().mqttPort("TLS");
        String clientId = "proxied-tls-" + UUID.randomUUID();
        Socket plain = new Socket("127.0.0.1", port);
        plain.getOutputStream().write(ascii("PROXY TCP4 198.51.100.44 127.0.0.1 40006 8883\r\n"));
        SSLSocket tls = (SSLSocket) trustingTheNode().getSocketFactory().createSocket(plain, "127.0.0.1", port, true);
        tls.startHandshake();
        try (RawMqtt raw = RawMqtt.over(tls)) {
            raw.send(RawMqtt.connectV5(clientId));
            assertEquals(0, RawMqtt.parseConnAckV5(raw.readType(2)).reasonCode());
            assertEquals("198.51.100.44", sessionAddress(clientId));
        }
    }

    @Test
    void theWebSocketListenerTakesTheHeaderBeforeTheUpgrade() throws IOException {
        int port = node.broker().node().mqttPort("WebSocket");
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(concat(ascii("PROXY TCP4 198.51.100.30 127.0.0.1 40005 8084\r\n"),
                    ascii("GET /mqtt HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                            + "Sec-WebSocket-Protocol: mqtt\r\n\r\n")));
            String status = new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
            assertEquals("HTTP/1.1 101", status);
        }
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(ascii("GET /mqtt HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
            assertEquals(-1, s.getInputStream().read(), "closed without an answer");
        }
    }

    @Test
    void behindHaproxyWithSendProxyV2ClientsConnectAndWithoutItTheyAreRefused() throws Exception {
        Path binary = haproxyBinary();
        int withHeader = FreePorts.next();
        int withoutHeader = FreePorts.next();
        Path config = haproxyDir.resolve("haproxy.cfg");
        Files.writeString(config, String.join("\n",
                "global",
                "  log stderr format raw local0 warning",
                "defaults",
                "  mode tcp",
                "  timeout connect 5s",
                "  timeout client 30s",
                "  timeout server 30s",
                "frontend mqtt_proxied",
                "  bind 127.0.0.1:" + withHeader,
                "  default_backend broker_proxied",
                "frontend mqtt_plain",
                "  bind 127.0.0.1:" + withoutHeader,
                "  default_backend broker_plain",
                "backend broker_proxied",
                "  server node1 127.0.0.1:" + node.mqttPort() + " send-proxy-v2",
                "backend broker_plain",
                "  server node1 127.0.0.1:" + node.mqttPort(),
                ""));
        Process haproxy = new ProcessBuilder(binary.toString(), "-db", "-f", config.toString())
                .redirectErrorStream(true).redirectOutput(haproxyDir.resolve("haproxy.log").toFile()).start();
        try {
            Await.until(Duration.ofSeconds(20), "HAProxy listening", () -> listening(withHeader)
                    && listening(withoutHeader) || !haproxy.isAlive());
            assertTrue(haproxy.isAlive(), () -> "HAProxy exited: " + log(haproxyDir.resolve("haproxy.log")));

            String through = "through-haproxy-" + UUID.randomUUID();
            Mqtt5BlockingClient client = Mqtt5Client.builder().identifier(through).serverHost("127.0.0.1")
                    .serverPort(withHeader).buildBlocking();
            client.connect();
            try {
                assertEquals("127.0.0.1", sessionAddress(through));
            } finally {
                client.disconnect();
            }

            double missing = refusals("missing");
            Mqtt5BlockingClient plain = Mqtt5Client.builder().identifier("plain-" + UUID.randomUUID())
                    .serverHost("127.0.0.1").serverPort(withoutHeader).buildBlocking();
            assertThrows(RuntimeException.class, plain::connect);
            Await.until(Duration.ofSeconds(10), "the headerless connection counted",
                    () -> refusals("missing") > missing);
        } finally {
            haproxy.destroy(); // by its PID; SIGTERM stops HAProxy at once
            if (!haproxy.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                haproxy.destroyForcibly();
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    /** An EC P-256 certificate for 127.0.0.1, PEM, with its unencrypted PKCS#8 key. */
    private static X509Certificate selfSigned(Path certFile, Path keyFile) throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(256);
        KeyPair keys = generator.generateKeyPair();
        X500Name name = new X500Name("CN=fleetmq-proxy-test");
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name, BigInteger.valueOf(now.toEpochMilli()),
                Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(1))), name, keys.getPublic());
        builder.addExtension(Extension.subjectAlternativeName, false,
                new GeneralNames(new GeneralName(GeneralName.iPAddress, "127.0.0.1")));
        X509Certificate cert = new JcaX509CertificateConverter().getCertificate(
                builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate())));
        try (Writer w = Files.newBufferedWriter(certFile); JcaPEMWriter pem = new JcaPEMWriter(w)) {
            pem.writeObject(cert);
        }
        try (Writer w = Files.newBufferedWriter(keyFile); JcaPEMWriter pem = new JcaPEMWriter(w)) {
            pem.writeObject(new JcaPKCS8Generator(keys.getPrivate(), null));
        }
        return cert;
    }

    /** TLS that trusts exactly the test's certificate. */
    private SSLContext trustingTheNode() throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("fleetmq-proxy-test", certificate);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        return context;
    }

    /** HAProxy from the system (Debian's package); the test fails without it, as CI installs it. */
    private static Path haproxyBinary() {
        for (String dir : (System.getenv().getOrDefault("PATH", "") + ":/usr/sbin:/usr/local/sbin").split(":")) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, "haproxy");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        throw new AssertionError("haproxy is not installed: run .ci/install-test-packages (Debian: apt-get install haproxy)");
    }

    private static boolean listening(int port) {
        try (Socket s = new Socket("127.0.0.1", port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** A version 2 PROXY header of a TCP connection over IPv4 from {@code source}, built byte by byte. */
    private static byte[] v2Tcp4(String source, int sourcePort) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(V2_SIGNATURE);
        out.write(0x21); // version 2, command PROXY
        out.write(0x11); // AF_INET, STREAM
        out.write(0);
        out.write(12); // addresses: 4 + 4 + 2 + 2 bytes
        out.writeBytes(ipv4(source));
        out.writeBytes(ipv4("127.0.0.1"));
        out.write(sourcePort >> 8);
        out.write(sourcePort & 0xFF);
        out.write(1883 >> 8);
        out.write(1883 & 0xFF);
        return out.toByteArray();
    }

    private static byte[] ipv4(String literal) {
        byte[] b = new byte[4];
        String[] parts = literal.split("\\.");
        for (int i = 0; i < 4; i++) {
            b[i] = (byte) Integer.parseInt(parts[i]);
        }
        return b;
    }

    /** The CONNACK reason code for a CONNECT sent right after {@code header}. */
    private int connAckThrough(byte[] header, String clientId) {
        try (RawMqtt raw = RawMqtt.connect(node.mqttPort())) {
            raw.send(concat(header, RawMqtt.connectV5(clientId)));
            return RawMqtt.parseConnAckV5(raw.readType(2)).reasonCode();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void assertClosed(byte[] first) throws IOException {
        try (RawMqtt raw = RawMqtt.connect(node.mqttPort())) {
            raw.send(first);
            raw.socketTimeout(2_500); // below the connect timeout: closed by the header check
            assertTrue(raw.closedByBroker(), "closed at once");
        }
    }

    /** The address the admin API shows for the connected session of {@code clientId}. */
    private String sessionAddress(String clientId) {
        String[] address = new String[1];
        Await.until(Duration.ofSeconds(10), "the session of " + clientId + " listed", () -> {
            JsonNode items = body(node.get("/api/v1/sessions?clientIdPrefix=" + clientId, token)).path("items");
            if (items.size() != 1 || !items.get(0).path("connected").asBoolean()) {
                return false;
            }
            address[0] = items.get(0).path("address").asText();
            return true;
        });
        return address[0];
    }

    /** {@code fleetmq_proxy_protocol_refused_total} for {@code reason}, from the node's /metrics. */
    private double refusals(String reason) {
        String metrics = node.get("/metrics", null).body();
        for (String line : metrics.split("\n")) {
            if (line.startsWith("fleetmq_proxy_protocol_refused_total{") && line.contains("reason=\"" + reason + "\"")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        throw new AssertionError("no fleetmq_proxy_protocol_refused_total{reason=\"" + reason + "\"} in /metrics");
    }

    private static String log(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return e.toString();
        }
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] all = new byte[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
