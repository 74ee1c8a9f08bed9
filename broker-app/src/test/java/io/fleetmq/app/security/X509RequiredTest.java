package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.hivemq.client.mqtt.MqttClientSslConfig;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5PubAckException;
import com.hivemq.client.mqtt.mqtt5.message.publish.puback.Mqtt5PubAckReasonCode;
import io.fleetmq.app.support.PrivateDatabase;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.core.security.Credential;
import io.fleetmq.core.security.SecurityChange;
import io.fleetmq.persistence.security.Credentials;
import io.fleetmq.testkit.RawMqtt;
import java.io.IOException;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node whose TLS and secure WebSocket listeners require a client certificate, with only the x509
 * provider: a client without one fails the handshake, a device with one is let in on either listener
 * and its {@code ${cn}} rules apply.
 */
class X509RequiredTest {

    @TempDir
    static Path dir;
    static PrivateDatabase db;
    static TestBroker broker;
    static SecurityFixture fx;
    static TestPki.Issued serverCa;
    static TestPki.Issued fleetCa;

    @BeforeAll
    static void start() throws Exception {
        serverCa = TestPki.rootCa("Server CA");
        TestPki.Issued server = TestPki.server(serverCa);
        TestPki.Issued root = TestPki.rootCa("Device Root");
        fleetCa = TestPki.intermediateCa(root, "required-fleet");
        db = PrivateDatabase.create();
        Map<String, String> env = new HashMap<>(db.env());
        env.put("MQTT_ALLOW_ANONYMOUS", "false");
        env.put("AUTH_PROVIDERS", "x509");
        env.put("MQTT_TLS_ENABLED", "true");
        env.put("MQTT_TLS_PORT", "0");
        env.put("MQTT_WSS_ENABLED", "true");
        env.put("MQTT_WSS_PORT", "0");
        env.put("MQTT_TLS_CERT_FILE", TestPki.pem(dir.resolve("tls/server.pem"), server.certificate()).toString());
        env.put("MQTT_TLS_KEY_FILE", TestPki.pem(dir.resolve("tls/server.key"), server.key()).toString());
        env.put("MQTT_TLS_CLIENT_AUTH", "required");
        env.put("MQTT_TLS_CA_FILE", TestPki.pem(dir.resolve("tls/ca.pem"), root.certificate()).toString());
        broker = TestBroker.start(dir, env);
        fx = new SecurityFixture(db, broker);
        Credential c = fx.credentials.create(new Credentials.Input(Credential.X509, null, null, null, null,
                List.of("devices/${cn}/#"), List.of(), "required-fleet", false));
        fx.announce(new SecurityChange(SecurityChange.Kind.CREDENTIAL, c.id(), false, false));
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

    /** Connects over TLS and sends CONNECT: the CONNACK's code, or what failed instead. */
    private static Object connect(TestPki.Issued client) throws Exception {
        SSLSocket socket;
        try {
            socket = TestPki.connect(broker.node().mqttPort("TLS"), serverCa.certificate(), client);
        } catch (IOException e) {
            return e;
        }
        try (RawMqtt raw = RawMqtt.over(socket)) {
            raw.send(RawMqtt.connectV5(unique("c")));
            byte[] connack = raw.readType(2);
            return connack[3] & 0xFF;
        } catch (IOException e) {
            return e;
        }
    }

    @Test
    @DisplayName("client-auth required: a client without certificate fails the TLS handshake, one with a valid certificate connects")
    void aClientWithoutCertificateFailsTheHandshake() throws Exception {
        // The server's alert, or (TLS 1.3 judges the client after it finished) a reset or broken pipe
        // when the CONNECT meets the connection the server closed before the alert was read.
        Object refused = connect(null);
        assertTrue(refused instanceof SSLException || refused instanceof java.net.SocketException,
                () -> "expected the TLS handshake to fail, got " + refused);
        assertEquals(0x00, connect(TestPki.device(fleetCa, unique("dev"))));
    }

    @Test
    @DisplayName("over secure WebSocket the verified chain reaches authentication too: the device is let in and ${cn} applies")
    void secureWebSocketCarriesTheCertificate() throws Exception {
        String cn = unique("wss-dev");
        TestPki.Issued device = TestPki.device(fleetCa, cn);
        Mqtt5BlockingClient client = Mqtt5Client.builder().identifier(unique("wss")).serverHost("127.0.0.1")
                .serverPort(broker.node().mqttPort("secure WebSocket")).sslConfig(ssl(device))
                .webSocketConfig().serverPath("mqtt").applyWebSocketConfig()
                .buildBlocking();
        client.connect();
        try {
            client.publishWith().topic("devices/" + cn + "/up").qos(MqttQos.AT_LEAST_ONCE).send();
            Mqtt5PubAckException denied = assertThrows(Mqtt5PubAckException.class,
                    () -> client.publishWith().topic("devices/someone-else/up").qos(MqttQos.AT_LEAST_ONCE).send());
            assertEquals(Mqtt5PubAckReasonCode.NOT_AUTHORIZED, denied.getMqttMessage().getReasonCode());
        } finally {
            client.disconnect();
        }
    }

    private static MqttClientSslConfig ssl(TestPki.Issued device) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("server-ca", serverCa.certificate());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("device", device.key(), "pw".toCharArray(), device.chain().toArray(X509Certificate[]::new));
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, "pw".toCharArray());
        return MqttClientSslConfig.builder().trustManagerFactory(tmf).keyManagerFactory(kmf).build();
    }
}
