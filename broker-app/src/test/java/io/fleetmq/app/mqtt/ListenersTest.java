package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttClientSslConfig;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import java.io.Writer;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Map;
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
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The four MQTT listeners of a node: TCP, WebSocket, TLS and secure WebSocket, the last two with a
 * self-signed certificate made for this test and configured as an operator would
 * ({@code MQTT_TLS_CERT_FILE}, {@code MQTT_TLS_KEY_FILE}). Clients on different listeners
 * exchange messages.
 */
class ListenersTest {

    @TempDir
    static Path dir;

    private static TestBroker broker;
    private static X509Certificate certificate;

    @BeforeAll
    static void start() throws Exception {
        Path cert = dir.resolve("tls/cert.pem");
        Path key = dir.resolve("tls/key.pem");
        certificate = selfSigned(cert, key);
        broker = TestBroker.start(dir.resolve("node"), Map.of(
                "MQTT_TLS_ENABLED", "true", "MQTT_TLS_PORT", "0",
                "MQTT_WSS_ENABLED", "true", "MQTT_WSS_PORT", "0",
                "MQTT_TLS_CERT_FILE", cert.toString(), "MQTT_TLS_KEY_FILE", key.toString()));
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    /** An EC P-256 certificate for localhost and 127.0.0.1, PEM, with its unencrypted PKCS#8 key. */
    private static X509Certificate selfSigned(Path certFile, Path keyFile) throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(256);
        KeyPair keys = generator.generateKeyPair();
        X500Name name = new X500Name("CN=localhost");
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name,
                BigInteger.valueOf(now.toEpochMilli()), Date.from(now.minus(Duration.ofDays(1))),
                Date.from(now.plus(Duration.ofDays(1))), name, keys.getPublic());
        builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
                new GeneralName(GeneralName.dNSName, "localhost"),
                new GeneralName(GeneralName.iPAddress, "127.0.0.1")}));
        X509Certificate cert = new JcaX509CertificateConverter().getCertificate(
                builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate())));
        Files.createDirectories(certFile.getParent());
        try (Writer w = Files.newBufferedWriter(certFile); JcaPEMWriter pem = new JcaPEMWriter(w)) {
            pem.writeObject(cert);
        }
        try (Writer w = Files.newBufferedWriter(keyFile); JcaPEMWriter pem = new JcaPEMWriter(w)) {
            pem.writeObject(new JcaPKCS8Generator(keys.getPrivate(), null));
        }
        return cert;
    }

    /** TLS that trusts exactly the test's certificate. */
    private static MqttClientSslConfig trustingTheNode() throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("fleetmq-test", certificate);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        return MqttClientSslConfig.builder().trustManagerFactory(tmf).build();
    }

    private static void exchange(Mqtt5BlockingClient from, Mqtt5BlockingClient to, String topic, byte payload)
            throws Exception {
        try (Mqtt5BlockingClient.Mqtt5Publishes in = to.publishes(MqttGlobalPublishFilter.ALL)) {
            to.subscribeWith().topicFilter(topic).qos(MqttQos.AT_LEAST_ONCE).send();
            from.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {payload}).send();
            assertArrayEquals(new byte[] {payload}, Received.next(in).getPayloadAsBytes());
        }
    }

    @Test
    @DisplayName("[MQTT-6.0.0-3] a WebSocket upgrade must ask for the mqtt sub-protocol; without an origin list any origin may connect")
    void webSocketUpgradeChecks() throws Exception {
        int port = broker.node().mqttPort("WebSocket");
        org.junit.jupiter.api.Assertions.assertEquals(WebSocketUpgrade.SWITCHING, WebSocketUpgrade.statusLine(port, null, "mqtt"));
        org.junit.jupiter.api.Assertions.assertEquals(WebSocketUpgrade.SWITCHING,
                WebSocketUpgrade.statusLine(port, "https://anywhere.example", "mqttv3.1, mqtt"));
        org.junit.jupiter.api.Assertions.assertEquals("HTTP/1.1 400 Bad Request", WebSocketUpgrade.statusLine(port, null, null));
        org.junit.jupiter.api.Assertions.assertEquals("HTTP/1.1 400 Bad Request", WebSocketUpgrade.statusLine(port, null, "chat"));
    }

    @Test
    @DisplayName("6.0 [MQTT-6.0.0-1] clients over WebSocket (binary frames, path /mqtt) and TCP exchange messages")
    void clientsOverWebSocketAndTcpExchangeMessages() throws Exception {
        Mqtt5BlockingClient web = Mqtt5Client.builder().identifier("ws-client").serverHost("127.0.0.1")
                .serverPort(broker.node().mqttPort("WebSocket"))
                .webSocketConfig().serverPath("mqtt").applyWebSocketConfig()
                .buildBlocking();
        web.connect();
        Mqtt5BlockingClient tcp = broker.connectedV5("ws-peer");
        exchange(tcp, web, "ws/t", (byte) 42);
        web.disconnect();
        tcp.disconnect();
    }

    @Test
    @DisplayName("4.2 [MQTT-6.0.0-1] a client over TLS, one over secure WebSocket and one over TCP exchange messages")
    void tlsAndSecureWebSocketClientsExchangeMessagesWithTcpClients() throws Exception {
        Mqtt5BlockingClient tls = Mqtt5Client.builder().identifier("tls-client").serverHost("127.0.0.1")
                .serverPort(broker.node().mqttPort("TLS")).sslConfig(trustingTheNode()).buildBlocking();
        Mqtt5BlockingClient wss = Mqtt5Client.builder().identifier("wss-client").serverHost("127.0.0.1")
                .serverPort(broker.node().mqttPort("secure WebSocket")).sslConfig(trustingTheNode())
                .webSocketConfig().serverPath("mqtt").applyWebSocketConfig()
                .buildBlocking();
        tls.connect();
        wss.connect();
        Mqtt5BlockingClient tcp = broker.connectedV5("tls-peer");
        exchange(tcp, tls, "tls/in", (byte) 1);
        exchange(tls, tcp, "tls/out", (byte) 2);
        exchange(wss, tls, "wss/to-tls", (byte) 3);
        exchange(tls, wss, "tls/to-wss", (byte) 4);
        tls.disconnect();
        wss.disconnect();
        tcp.disconnect();
    }

    @Test
    @DisplayName("4.2 the TLS listener speaks only TLS: a client that does not trust the certificate, or sends plain MQTT, gets no session")
    void theTlsListenerRequiresTls() throws Exception {
        Mqtt5BlockingClient untrusting = Mqtt5Client.builder().identifier("tls-untrusting").serverHost("127.0.0.1")
                .serverPort(broker.node().mqttPort("TLS")).sslWithDefaultConfig().buildBlocking();
        assertThrows(RuntimeException.class, untrusting::connect, "the self-signed certificate is not trusted by default");
        try (io.fleetmq.testkit.RawMqtt plain = io.fleetmq.testkit.RawMqtt.connect(broker.node().mqttPort("TLS"))) {
            plain.send(io.fleetmq.testkit.RawMqtt.connectV5("plain-on-tls"));
            assertTrue(plain.closedByBroker(), "no CONNACK for plain MQTT on the TLS port");
        }
    }
}
