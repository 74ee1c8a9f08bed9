package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.io.IOException;
import java.io.Writer;
import java.math.BigInteger;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.openssl.jcajce.JceOpenSSLPKCS8EncryptorBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS an operator can trust: only the configured versions, an encrypted private key, a bounded
 * handshake, and a renewed certificate taken up without a restart while open connections stay.
 */
class TlsHardeningTest {

    private static final String KEY_PASSWORD = "key-secret";

    @TempDir
    static Path dir;
    static TestPki.Issued ca;
    static TestPki.Issued first;
    static Path certFile;
    static Path keyFile;
    static TestBroker broker;

    @BeforeAll
    static void start() throws Exception {
        ca = TestPki.rootCa("FleetMQ test server CA");
        first = TestPki.server(ca);
        certFile = dir.resolve("tls/cert.pem");
        keyFile = dir.resolve("tls/key.pem");
        writeServerFiles(first);
        broker = TestBroker.start(dir.resolve("node"), Map.of(
                "MQTT_TLS_ENABLED", "true", "MQTT_TLS_PORT", "0",
                "MQTT_TLS_CERT_FILE", certFile.toString(), "MQTT_TLS_KEY_FILE", keyFile.toString(),
                "MQTT_TLS_KEY_PASSWORD", KEY_PASSWORD,
                "MQTT_TLS_PROTOCOLS", "TLSv1.2",
                "MQTT_TLS_HANDSHAKE_TIMEOUT", "1s",
                "MQTT_TLS_RELOAD_INTERVAL", "200ms"));
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    /** Writes the server's certificate chain and its key, encrypted (PBES2, AES-256-CBC), each replaced atomically. */
    private static void writeServerFiles(TestPki.Issued server) throws Exception {
        Files.createDirectories(certFile.getParent());
        Path certTmp = certFile.resolveSibling("cert.pem.tmp");
        try (Writer w = Files.newBufferedWriter(certTmp); JcaPEMWriter pem = new JcaPEMWriter(w)) {
            pem.writeObject(server.certificate());
        }
        Path keyTmp = keyFile.resolveSibling("key.pem.tmp");
        try (Writer w = Files.newBufferedWriter(keyTmp); JcaPEMWriter pem = new JcaPEMWriter(w)) {
            pem.writeObject(new JcaPKCS8Generator(server.key(),
                    new JceOpenSSLPKCS8EncryptorBuilder(JcaPKCS8Generator.AES_256_CBC)
                            .setProvider(new org.bouncycastle.jce.provider.BouncyCastleProvider())
                            .setPassword(KEY_PASSWORD.toCharArray()).build()));
        }
        Files.move(keyTmp, keyFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Files.move(certTmp, certFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static SSLSocket tls(String... protocols) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("ca", ca.certificate());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), new SecureRandom());
        SSLSocket socket = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", broker.node().mqttPort("TLS"));
        socket.setSoTimeout(10_000);
        socket.setEnabledProtocols(protocols);
        socket.startHandshake();
        return socket;
    }

    private static BigInteger serverSerial(SSLSocket socket) throws Exception {
        return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
    }

    @Test
    @DisplayName("Only the configured TLS versions are spoken, with an encrypted private key")
    void versions() throws Exception {
        try (SSLSocket ok = tls("TLSv1.2")) {
            assertEquals("TLSv1.2", ok.getSession().getProtocol());
            RawMqtt mqtt = RawMqtt.over(ok);
            mqtt.send(RawMqtt.connectV5("tls-v12"));
            assertEquals(0, mqtt.readType(2)[3], "CONNACK over TLS 1.2");
        }
        assertThrows(SSLHandshakeException.class, () -> tls("TLSv1.3").close(), "TLS 1.3 is not offered here");
    }

    @Test
    @DisplayName("A client that never finishes its handshake is closed after the handshake timeout")
    void handshakeTimeout() throws Exception {
        try (Socket silent = new Socket("127.0.0.1", broker.node().mqttPort("TLS"))) {
            silent.setSoTimeout(500);
            Await.until(Duration.ofSeconds(15), "the silent connection closed", () -> {
                try {
                    return silent.getInputStream().read() < 0;
                } catch (java.net.SocketTimeoutException e) {
                    return false;
                } catch (IOException e) {
                    return true; // reset by the broker
                }
            });
        }
    }

    @Test
    @DisplayName("A renewed certificate and key are used for new connections without a restart; an open connection keeps working")
    void reload() throws Exception {
        try (SSLSocket before = tls("TLSv1.2")) {
            BigInteger old = serverSerial(before);
            TestPki.Issued renewed = TestPki.server(ca);
            writeServerFiles(renewed);
            Await.until(Duration.ofSeconds(15), "new connections get the renewed certificate", () -> {
                try (SSLSocket s = tls("TLSv1.2")) {
                    return serverSerial(s).equals(renewed.certificate().getSerialNumber());
                } catch (Exception e) {
                    return false;
                }
            });
            assertEquals(old, serverSerial(before));
            RawMqtt mqtt = RawMqtt.over(before);
            mqtt.send(RawMqtt.connectV5("tls-before-reload"));
            assertEquals(0, mqtt.readType(2)[3], "the connection opened before the renewal still works");
        }
    }
}
