package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fleetmq.app.support.PrivateDatabase;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.core.security.Credential;
import io.fleetmq.core.security.SecurityChange;
import io.fleetmq.persistence.security.Credentials;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node whose TLS listener asks for client certificates ({@code optional}) and verifies them against
 * a CA bundle with a CRL, with the providers x509 then basic and anonymous clients refused: devices
 * are let in by the common name of their own certificate, of the intermediate CA that signed it, or
 * by a pattern, with {@code ${cn}} in their rules; certificates that do not verify fail the TLS
 * handshake; clients without certificate fall through to basic credentials.
 */
class X509AuthTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;
    static PrivateDatabase db;
    static TestBroker broker;
    static SecurityFixture fx;
    static TestPki.Issued serverCa;
    static TestPki.Issued root;
    static TestPki.Issued fleetCa;
    static TestPki.Issued revoked;
    static String token;

    @BeforeAll
    static void start() throws Exception {
        serverCa = TestPki.rootCa("Server CA");
        TestPki.Issued server = TestPki.server(serverCa);
        root = TestPki.rootCa("Device Root");
        TestPki.Issued otherTrusted = TestPki.rootCa("Another Trusted Root");
        fleetCa = TestPki.intermediateCa(root, "fleet-ca");
        revoked = TestPki.device(fleetCa, "revoked-device");
        Map<String, String> env = new HashMap<>(db().env());
        env.put("MQTT_ALLOW_ANONYMOUS", "false");
        env.put("AUTH_PROVIDERS", "x509,basic");
        env.put("ADMIN_PASSWORD", "operator-pw");
        env.put("MQTT_TLS_ENABLED", "true");
        env.put("MQTT_TLS_PORT", "0");
        env.put("MQTT_TLS_CERT_FILE", TestPki.pem(dir.resolve("tls/server.pem"), server.certificate()).toString());
        env.put("MQTT_TLS_KEY_FILE", TestPki.pem(dir.resolve("tls/server.key"), server.key()).toString());
        env.put("MQTT_TLS_CLIENT_AUTH", "optional");
        env.put("MQTT_TLS_CA_FILE", TestPki.pem(dir.resolve("tls/ca.pem"), otherTrusted.certificate(),
                root.certificate()).toString());
        env.put("MQTT_TLS_CRL_FILE", TestPki.pem(dir.resolve("tls/crl.pem"),
                TestPki.crl(fleetCa, revoked.certificate())).toString());
        broker = TestBroker.start(dir, env);
        fx = new SecurityFixture(db, broker);
        HttpResponse<String> login = call("POST", "/api/v1/auth/login",
                "{\"username\":\"admin\",\"password\":\"operator-pw\"}");
        assertEquals(200, login.statusCode(), login.body());
        token = JSON.readTree(login.body()).get("token").asText();
    }

    private static PrivateDatabase db() {
        db = PrivateDatabase.create();
        return db;
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
        if (db != null) {
            db.close();
        }
    }

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static int tlsPort() {
        return broker.node().mqttPort("TLS");
    }

    /** What came of a CONNECT over TLS: the CONNACK's code, or the TLS failure that came instead. */
    record Outcome(RawMqtt raw, int code, IOException tlsFailure) implements AutoCloseable {
        Outcome expect(int expected) {
            assertNull(tlsFailure, () -> "TLS failed: " + tlsFailure);
            assertEquals(expected, code, String.format("CONNACK code 0x%02X", code));
            return this;
        }

        /**
         * No CONNACK, the server ended the connection in the handshake: its alert (SSLException), or,
         * with TLS 1.3, where the server judges the client's certificate after the client finished,
         * a reset or broken pipe when the client's CONNECT meets the connection the server closed
         * before the alert was read.
         */
        void expectHandshakeFailure() {
            assertEquals(-1, code, () -> "expected the TLS handshake to fail, got CONNACK " + code);
            assertTrue(tlsFailure instanceof SSLException || tlsFailure instanceof java.net.SocketException,
                    () -> "expected the TLS handshake to fail, got " + tlsFailure);
        }

        @Override
        public void close() throws IOException {
            if (raw != null) {
                raw.close();
            }
        }
    }

    /** Connects over TLS presenting {@code client}'s chain (none when null) and sends an MQTT 5 CONNECT. */
    static Outcome connect(TestPki.Issued client, List<java.security.cert.X509Certificate> chain, String clientId,
            String username, String password) throws Exception {
        SSLSocket socket;
        try {
            socket = client == null ? TestPki.connect(tlsPort(), serverCa.certificate(), null)
                    : TestPki.connect(tlsPort(), serverCa.certificate(), client, chain);
        } catch (IOException e) {
            return new Outcome(null, -1, e);
        }
        RawMqtt raw = RawMqtt.over(socket);
        try {
            // With TLS 1.3 the server judges the client's certificate after the client has finished
            // its handshake: a refusal then arrives as an alert instead of the CONNACK.
            raw.send(RawMqtt.connectWithCredentials(5, clientId, username,
                    password == null ? null : password.getBytes(StandardCharsets.UTF_8)));
            byte[] connack = raw.readType(2);
            return new Outcome(raw, connack[3] & 0xFF, null);
        } catch (IOException e) {
            raw.close();
            return new Outcome(null, -1, e);
        }
    }

    static Outcome connect(TestPki.Issued client, String clientId) throws Exception {
        return connect(client, client == null ? null : client.chain(), clientId, null, null);
    }

    private static Credential x509(String commonName, boolean regex, List<String> publish, List<String> subscribe) {
        Credential c = fx.credentials.create(new Credentials.Input(Credential.X509, null, null, null, null, publish,
                subscribe, commonName, regex));
        fx.announce(new SecurityChange(SecurityChange.Kind.CREDENTIAL, c.id(), false, false));
        return c;
    }

    @Test
    @DisplayName("a device whose certificate CN has a credential connects, and ${cn} in its rules is its CN (PUBACK 0x87 outside)")
    void aDeviceWithACredentialForItsCommonName() throws Exception {
        String cn = unique("device");
        TestPki.Issued device = TestPki.device(fleetCa, cn);
        x509(cn, false, List.of("devices/${cn}/#"), List.of("commands/${cn}/+"));
        try (Outcome c = connect(device, unique("c")).expect(0x00)) {
            assertEquals(0x00, SecurityFixture.publishQos1V5(c.raw(), 1, "devices/" + cn + "/temp", "21"));
            assertEquals(0x87, SecurityFixture.publishQos1V5(c.raw(), 2, "devices/other-device/temp", "21"));
            assertEquals(0x87, SecurityFixture.publishQos1V5(c.raw(), 3, "devices/${cn}/temp", "21"));
            assertEquals(0x01, SecurityFixture.subscribeV5(c.raw(), 4, "commands/" + cn + "/+", 1));
            assertEquals(0x87, SecurityFixture.subscribeV5(c.raw(), 5, "commands/+/+", 1));
        }
    }

    @Test
    @DisplayName("a credential naming an intermediate CA admits every device under it, each with its own ${cn}; a device's own credential is more specific")
    void aCredentialForTheIntermediateAdmitsTheFleet() throws Exception {
        TestPki.Issued ca = TestPki.intermediateCa(root, unique("line-ca"));
        String ownName = unique("own");
        x509(TestPki.commonName(ca), false, List.of("fleet/${cn}/#"), List.of());
        x509(ownName, false, List.of("own/${cn}"), List.of());
        TestPki.Issued a = TestPki.device(ca, unique("member"));
        TestPki.Issued b = TestPki.device(ca, unique("member"));
        TestPki.Issued own = TestPki.device(ca, ownName);
        String aName = TestPki.commonName(a);
        String bName = TestPki.commonName(b);
        try (Outcome ca1 = connect(a, unique("c")).expect(0x00); Outcome cb = connect(b, unique("c")).expect(0x00)) {
            assertEquals(0x00, SecurityFixture.publishQos1V5(ca1.raw(), 1, "fleet/" + aName + "/x", "1"));
            assertEquals(0x87, SecurityFixture.publishQos1V5(ca1.raw(), 2, "fleet/" + bName + "/x", "1"));
            assertEquals(0x00, SecurityFixture.publishQos1V5(cb.raw(), 1, "fleet/" + bName + "/x", "1"));
        }
        try (Outcome co = connect(own, unique("c")).expect(0x00)) {
            assertEquals(0x00, SecurityFixture.publishQos1V5(co.raw(), 1, "own/" + ownName, "1"));
            assertEquals(0x87, SecurityFixture.publishQos1V5(co.raw(), 2, "fleet/" + ownName + "/x", "1"),
                    "its own credential wins over the intermediate's");
        }
    }

    @Test
    @DisplayName("a pattern credential admits the devices whose CN it fully matches")
    void aPatternCredential() throws Exception {
        String prefix = "sensor" + UUID.randomUUID().toString().substring(0, 6);
        x509(prefix + "-[0-9]+", true, List.of("sensors/${cn}"), List.of());
        TestPki.Issued sensor = TestPki.device(root, prefix + "-42");
        try (Outcome c = connect(sensor, unique("c")).expect(0x00)) {
            assertEquals(0x00, SecurityFixture.publishQos1V5(c.raw(), 1, "sensors/" + prefix + "-42", "1"));
        }
        // Not a full match: neither the pattern nor any other credential, so anonymous, which is refused.
        try (Outcome c = connect(TestPki.device(root, prefix + "-42x"), unique("c"))) {
            c.expect(0x87);
        }
    }

    @Test
    @DisplayName("a certificate the client adds to its chain, named like an admitted CA, does not count")
    void aCertificateOffThePathDoesNotCount() throws Exception {
        String caName = unique("trusted-line");
        x509(caName, false, List.of("#"), List.of("#"));
        TestPki.Issued intruder = TestPki.device(root, unique("intruder"));
        TestPki.Issued fake = TestPki.rootCa(caName);
        List<java.security.cert.X509Certificate> chain = List.of(intruder.certificate(), fake.certificate());
        try (Outcome c = connect(intruder, chain, unique("c"), null, null)) {
            c.expect(0x87);
        }
    }

    @Test
    @DisplayName("expired, wrong-CA and revoked certificates fail the TLS handshake")
    void certificatesThatDoNotVerifyFailTheHandshake() throws Exception {
        // Each has a credential for its name, so only the handshake can keep it out.
        TestPki.Issued expired = TestPki.expiredDevice(fleetCa, unique("expired"));
        TestPki.Issued stranger = TestPki.intermediateCa(TestPki.rootCa("Unknown Root"), unique("stranger-ca"));
        TestPki.Issued wrongCa = TestPki.device(stranger, unique("wrong-ca"));
        TestPki.Issued valid = TestPki.device(fleetCa, unique("valid"));
        for (TestPki.Issued d : List.of(expired, wrongCa, revoked, valid)) {
            x509(TestPki.commonName(d), false, List.of("#"), List.of("#"));
        }
        try (Outcome c = connect(expired, unique("c"))) {
            c.expectHandshakeFailure();
        }
        try (Outcome c = connect(wrongCa, unique("c"))) {
            c.expectHandshakeFailure();
        }
        try (Outcome c = connect(revoked, unique("c"))) {
            c.expectHandshakeFailure();
        }
        try (Outcome c = connect(valid, unique("c"))) {
            c.expect(0x00); // the same CA's other certificates still pass
        }
    }

    @Test
    @DisplayName("with client-auth optional, a client without certificate connects and falls through to basic")
    void withoutCertificateBasicDecides() throws Exception {
        String user = unique("plain");
        fx.credential(user, null, "pw", List.of("plain/#"), List.of());
        try (Outcome c = connect(null, null, unique("c"), user, "pw").expect(0x00)) {
            assertEquals(0x00, SecurityFixture.publishQos1V5(c.raw(), 1, "plain/x", "1"));
        }
        try (Outcome c = connect(null, null, unique("c"), user, "wrong")) {
            c.expect(0x86);
        }
        try (Outcome c = connect(null, unique("c"))) {
            c.expect(0x87);
        }
    }

    @Test
    @DisplayName("an x509 credential created through the admin API lets its device in; bad requests name the field")
    void anX509CredentialThroughTheApi() throws Exception {
        String cn = unique("api-device");
        TestPki.Issued device = TestPki.device(fleetCa, cn);
        HttpResponse<String> bad = call("POST", "/api/v1/credentials",
                "{\"type\":\"x509\",\"certCommonName\":\"(\",\"certCommonNameRegex\":true}");
        assertEquals(400, bad.statusCode(), bad.body());
        assertTrue(bad.body().contains("certCommonName"), bad.body());
        HttpResponse<String> withPassword = call("POST", "/api/v1/credentials",
                "{\"type\":\"x509\",\"certCommonName\":\"x\",\"password\":\"secret\"}");
        assertEquals(400, withPassword.statusCode(), withPassword.body());
        assertTrue(withPassword.body().contains("password"), withPassword.body());

        HttpResponse<String> created = call("POST", "/api/v1/credentials", "{\"type\":\"x509\",\"certCommonName\":\""
                + cn + "\",\"publish\":[\"api/${cn}\"],\"subscribe\":[]}");
        assertEquals(201, created.statusCode(), created.body());
        String id = JSON.readTree(created.body()).get("id").asText();
        var view = JSON.readTree(call("GET", "/api/v1/credentials/" + id, null).body());
        assertEquals("x509", view.get("type").asText());
        assertEquals(cn, view.get("certCommonName").asText());
        assertFalse(view.get("certCommonNameRegex").asBoolean());
        assertFalse(view.get("hasPassword").asBoolean());
        assertEquals(409, call("POST", "/api/v1/credentials", "{\"type\":\"x509\",\"certCommonName\":\""
                + cn + "\"}").statusCode());
        Await.until(Duration.ofSeconds(10), "the new credential admits the device", () -> code(device) == 0x00);
        try (Outcome c = connect(device, unique("c")).expect(0x00)) {
            assertEquals(0x00, SecurityFixture.publishQos1V5(c.raw(), 1, "api/" + cn, "1"));
        }
        String openApi = call("GET", "/api/v1/openapi.json", null).body();
        assertTrue(openApi.contains("certCommonNameRegex"), "the OpenAPI document shows the x509 fields");
    }

    @Test
    @DisplayName("mosquitto_pub with --cafile, --cert (device and intermediate) and --key publishes as the documented example does")
    void mosquittoPubWithAClientCertificate() throws Exception {
        Path binary = findOnPath("mosquitto_pub");
        org.junit.jupiter.api.Assumptions.assumeTrue(binary != null, "mosquitto_pub not installed; skipping");
        String cn = unique("mosq");
        TestPki.Issued device = TestPki.device(fleetCa, cn);
        x509(cn, false, List.of("devices/${cn}/telemetry"), List.of());
        String user = unique("watcher");
        fx.credential(user, null, "pw", List.of(), List.of("devices/#"));
        try (Outcome w = connect(null, null, unique("w"), user, "pw").expect(0x00)) {
            assertEquals(0x01, SecurityFixture.subscribeV5(w.raw(), 1, "devices/" + cn + "/telemetry", 1));
            Path certFile = TestPki.pem(dir.resolve("mosq/" + cn + ".pem"), device.chain().toArray());
            Path keyFile = TestPki.pem(dir.resolve("mosq/" + cn + ".key"), device.key());
            Path caFile = TestPki.pem(dir.resolve("mosq/server-ca.pem"), serverCa.certificate());
            Process p = new ProcessBuilder(binary.toString(), "-h", "127.0.0.1", "-p", String.valueOf(tlsPort()),
                    "--cafile", caFile.toString(), "--cert", certFile.toString(), "--key", keyFile.toString(),
                    "-V", "mqttv5", "-i", cn, "-q", "1", "-t", "devices/" + cn + "/telemetry", "-m", "21.5")
                    .redirectErrorStream(true).start();
            assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS), "mosquitto_pub finished");
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.exitValue(), out);
            byte[] publish = w.raw().readType(3);
            assertEquals("devices/" + cn + "/telemetry", RawMqtt.publishTopic(publish));
        }
    }

    private static Path findOnPath(String name) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(d, name);
            if (java.nio.file.Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    private static int code(TestPki.Issued device) {
        try (Outcome c = connect(device, unique("c"))) {
            return c.code();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static HttpResponse<String> call(String method, String path, String body) {
        return io.fleetmq.app.support.AdminHttp.send(broker.node().httpPort(), token, method, path, body);
    }
}
