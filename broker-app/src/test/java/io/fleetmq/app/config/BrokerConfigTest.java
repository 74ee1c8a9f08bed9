package io.fleetmq.app.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.embedded.RedisBinary;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BrokerConfigTest {

    private final Map<String, String> env = new HashMap<>();

    private BrokerConfig config() {
        return BrokerConfig.from(Settings.load(null, env::get), "host-1");
    }

    @Test
    void nodeIdDefaultsToTheHostName() {
        assertEquals("host-1", config().nodeId());
        env.put("BROKER_NODE_ID", "edge-7");
        assertEquals("edge-7", config().nodeId());
    }

    @Test
    void kafkaClientSecurityFromSettings(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        assertEquals(Map.of("security.protocol", "PLAINTEXT"), config().kafka().clientSecurity());

        java.nio.file.Path ca = java.nio.file.Files.writeString(dir.resolve("ca.pem"), "-----BEGIN CERTIFICATE-----");
        java.nio.file.Path extra = java.nio.file.Files.writeString(dir.resolve("kafka.properties"),
                "ssl.endpoint.identification.algorithm=\nclient.dns.lookup=use_all_dns_ips\n");
        env.put("KAFKA_SECURITY_PROTOCOL", "sasl_ssl");
        env.put("KAFKA_SASL_MECHANISM", "SCRAM-SHA-512");
        env.put("KAFKA_SASL_USERNAME", "node");
        env.put("KAFKA_SASL_PASSWORD", "p\"w");
        env.put("KAFKA_SSL_CA_FILE", ca.toString());
        env.put("KAFKA_CLIENT_PROPERTIES_FILE", extra.toString());
        Map<String, String> props = config().kafka().clientSecurity();
        assertEquals("SASL_SSL", props.get("security.protocol"));
        assertEquals("SCRAM-SHA-512", props.get("sasl.mechanism"));
        assertEquals("org.apache.kafka.common.security.scram.ScramLoginModule required username=\"node\" "
                + "password=\"p\\\"w\";", props.get("sasl.jaas.config"));
        assertEquals("PEM", props.get("ssl.truststore.type"));
        assertEquals(ca.toAbsolutePath().toString(), props.get("ssl.truststore.location"));
        assertEquals("", props.get("ssl.endpoint.identification.algorithm"));
        assertEquals("use_all_dns_ips", props.get("client.dns.lookup"));

        java.nio.file.Path unsafe = java.nio.file.Files.writeString(dir.resolve("unsafe.properties"),
                "linger.ms=5\nacks=1\n");
        env.put("KAFKA_CLIENT_PROPERTIES_FILE", unsafe.toString());
        ConfigException refused = assertThrows(ConfigException.class, this::config);
        assertTrue(refused.getMessage().startsWith("setting kafka.client-properties-file (KAFKA_CLIENT_PROPERTIES_FILE)")
                && refused.getMessage().contains("sets acks, which the node decides"), refused.getMessage());
        java.nio.file.Files.writeString(unsafe, "linger.ms=5\n");
        assertEquals("5", config().kafka().clientSecurity().get("linger.ms"), "tuning is the operator's to set");
        env.put("KAFKA_CLIENT_PROPERTIES_FILE", extra.toString());

        env.put("KAFKA_SASL_PASSWORD", "");
        ConfigException e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().contains("KAFKA_SASL_PASSWORD"), e.getMessage());
        env.put("KAFKA_SECURITY_PROTOCOL", "TLS");
        e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().startsWith("setting kafka.security-protocol (KAFKA_SECURITY_PROTOCOL): 'TLS'"),
                e.getMessage());
        env.put("KAFKA_SECURITY_PROTOCOL", "SSL");
        e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().contains("KAFKA_SASL_MECHANISM"), "a mechanism without SASL: " + e.getMessage());
    }

    @Test
    void tlsVersionsAndTimes() {
        assertEquals(java.util.List.of("TLSv1.3", "TLSv1.2"), config().tlsSettings().protocols());
        assertEquals(java.time.Duration.ofSeconds(10), config().tlsSettings().handshakeTimeout());
        env.put("MQTT_TLS_PROTOCOLS", "tlsv1.2");
        assertEquals(java.util.List.of("TLSv1.2"), config().tlsSettings().protocols());
        env.put("MQTT_TLS_PROTOCOLS", "SSLv3");
        ConfigException e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().startsWith("setting listeners.tls.protocols (MQTT_TLS_PROTOCOLS): 'SSLv3'"),
                e.getMessage());
        env.remove("MQTT_TLS_PROTOCOLS");
        env.put("MQTT_TLS_HANDSHAKE_TIMEOUT", "0");
        e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().contains("MQTT_TLS_HANDSHAKE_TIMEOUT"), e.getMessage());
        env.put("MQTT_TLS_HANDSHAKE_TIMEOUT", "5s");
        env.put("MQTT_TLS_KEY_PASSWORD", "pw");
        assertTrue(!config().tlsSettings().toString().contains("pw,"), "the key password is not shown");
    }

    @Test
    void nodeIdMustBeUsableInTopicNames() {
        env.put("BROKER_NODE_ID", "node one");
        ConfigException e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().startsWith("setting broker.node-id (BROKER_NODE_ID): 'node one'"), e.getMessage());
    }

    @Test
    void standaloneDefaultsUseEmbeddedDependencies() {
        BrokerConfig c = config();
        assertFalse(c.kafkaExternal());
        assertFalse(c.redisExternal());
        assertFalse(c.databaseExternal());
        env.put("KAFKA_BOOTSTRAP_SERVERS", "kafka:9092");
        env.put("REDIS_URL", "redis://redis:6379");
        env.put("DATABASE_URL", "jdbc:postgresql://db:5432/fleetmq");
        c = config();
        assertTrue(c.kafkaExternal() && c.redisExternal() && c.databaseExternal());
        assertEquals("kafka:9092", c.kafka().bootstrapServers());
    }

    @Test
    void embeddedRedisBinaryIsAutoUnlessSetAndMustBeAChoiceOrAnExecutable() {
        assertEquals(RedisBinary.AUTO, config().embedded().redisBinary());
        env.put("EMBEDDED_REDIS_BINARY", "bundled");
        assertEquals(RedisBinary.BUNDLED, config().embedded().redisBinary());
        env.put("EMBEDDED_REDIS_BINARY", "System");
        assertEquals(RedisBinary.SYSTEM, config().embedded().redisBinary());
        env.put("EMBEDDED_REDIS_BINARY", "/nonexistent/redis-server");
        ConfigException e = assertThrows(ConfigException.class, this::config);
        assertEquals("setting embedded.redis-binary (EMBEDDED_REDIS_BINARY): '/nonexistent/redis-server' is neither"
                + " auto, bundled, system nor an executable file", e.getMessage());
    }

    @Test
    void tlsWithoutCertificateNamesTheMissingSetting() {
        env.put("MQTT_TLS_ENABLED", "true");
        ConfigException e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().contains("listeners.tls.cert-file (MQTT_TLS_CERT_FILE)"), e.getMessage());
    }

    @Test
    void clientCertificatesAreOffUnlessAskedForAndThenNeedACaFile() throws Exception {
        assertEquals(io.netty.handler.ssl.ClientAuth.NONE, config().clientCerts().clientAuth());
        env.put("MQTT_TLS_CLIENT_AUTH", "optional");
        ConfigException e = assertThrows(ConfigException.class, this::config);
        assertEquals("setting listeners.tls.ca-file (MQTT_TLS_CA_FILE) is required when listeners.tls.client-auth"
                + " (MQTT_TLS_CLIENT_AUTH) is optional", e.getMessage());
        java.nio.file.Path ca = java.nio.file.Files.createTempFile("ca", ".pem");
        try {
            env.put("MQTT_TLS_CA_FILE", ca.toString());
            env.put("MQTT_TLS_CLIENT_AUTH", "required");
            ClientCertSettings c = config().clientCerts();
            assertEquals(io.netty.handler.ssl.ClientAuth.REQUIRE, c.clientAuth());
            assertEquals(ca, c.caFile());
            assertEquals(null, c.crlFile());
            env.put("MQTT_TLS_CRL_FILE", "/nonexistent/crl.pem");
            e = assertThrows(ConfigException.class, this::config);
            assertTrue(e.getMessage().startsWith("setting listeners.tls.crl-file (MQTT_TLS_CRL_FILE)"), e.getMessage());
        } finally {
            java.nio.file.Files.delete(ca);
        }
        env.put("MQTT_TLS_CLIENT_AUTH", "yes");
        e = assertThrows(ConfigException.class, this::config);
        assertEquals("setting listeners.tls.client-auth (MQTT_TLS_CLIENT_AUTH): 'yes' must be none, optional or"
                + " required", e.getMessage());
    }

    @Test
    void unreadableCertificateFileIsNamed() {
        env.put("MQTT_TLS_CERT_FILE", "/nonexistent/cert.pem");
        ConfigException e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().contains("MQTT_TLS_CERT_FILE"), e.getMessage());
    }

    @Test
    void writeBufferOfAClientConnectionIsOneMebibyteUnlessSetAndAtLeastOneKibibyte() {
        assertEquals(1_048_576, config().maxWriteBufferBytes());
        env.put("MQTT_MAX_WRITE_BUFFER", "65536");
        assertEquals(65_536, config().maxWriteBufferBytes());
        env.put("MQTT_MAX_WRITE_BUFFER", "100");
        ConfigException e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().contains("mqtt.max-write-buffer (MQTT_MAX_WRITE_BUFFER)"), e.getMessage());
    }

    @Test
    void publishBackpressureWaitsForDeliveriesLateBy100msAtMostOneSecondAndZeroTurnsItOff() {
        assertEquals(java.time.Duration.ofMillis(100), config().publishBackpressureDelay());
        assertEquals(java.time.Duration.ofSeconds(1), config().publishBackpressureMaxWait());
        env.put("MQTT_PUBLISH_BACKPRESSURE_DELAY", "0");
        assertEquals(java.time.Duration.ZERO, config().publishBackpressureDelay());
        env.put("MQTT_PUBLISH_BACKPRESSURE_DELAY", "soon");
        ConfigException e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().contains("mqtt.publish-backpressure-delay (MQTT_PUBLISH_BACKPRESSURE_DELAY)"),
                e.getMessage());
        env.put("MQTT_PUBLISH_BACKPRESSURE_DELAY", "50ms");
        env.put("MQTT_PUBLISH_BACKPRESSURE_MAX_WAIT", "0");
        e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().contains("mqtt.publish-backpressure-max-wait (MQTT_PUBLISH_BACKPRESSURE_MAX_WAIT)"),
                e.getMessage());
    }

    @Test
    void liveDeliveryToPersistentDevicesIsOnWithA50msWaitOfAtMost10s() {
        assertTrue(config().deviceLiveDelivery());
        assertEquals(java.time.Duration.ofMillis(50), config().deviceLiveAckWait());
        env.put("DEVICE_LIVE_DELIVERY", "false");
        assertFalse(config().deviceLiveDelivery());
        env.put("DEVICE_LIVE_ACK_WAIT", "11s");
        ConfigException e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().contains("sessions.device-live-ack-wait (DEVICE_LIVE_ACK_WAIT)")
                && e.getMessage().contains("at most 10s"), e.getMessage());
        env.put("DEVICE_LIVE_ACK_WAIT", "0");
        e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().contains("sessions.device-live-ack-wait (DEVICE_LIVE_ACK_WAIT)"), e.getMessage());
    }

    @Test
    void listenersCarryTheSettingThatNamesTheirPort() {
        assertEquals("listeners.tcp.port (MQTT_TCP_PORT)", config().tcp().portSetting());
        assertEquals("listeners.wss.port (MQTT_WSS_PORT)", config().wss().portSetting());
    }

    @Test
    void minInSyncReplicasIsOneUnlessSetAndNeverAboveTheReplicationFactor() {
        assertEquals(1, config().kafka().minInsyncReplicas());
        env.put("KAFKA_REPLICATION_FACTOR", "3");
        env.put("KAFKA_MIN_INSYNC_REPLICAS", "2");
        assertEquals(2, config().kafka().minInsyncReplicas());
        env.put("KAFKA_MIN_INSYNC_REPLICAS", "4");
        ConfigException e = assertThrows(ConfigException.class, this::config);
        assertEquals(1, e.getMessage().lines().count());
        assertTrue(e.getMessage().contains("kafka.min-insync-replicas (KAFKA_MIN_INSYNC_REPLICAS)"), e.getMessage());
        assertTrue(e.getMessage().contains("kafka.replication-factor"), e.getMessage());
        env.put("KAFKA_MIN_INSYNC_REPLICAS", "two");
        e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().contains("kafka.min-insync-replicas (KAFKA_MIN_INSYNC_REPLICAS)"), e.getMessage());
    }

    @Test
    void compressionIsLz4UnlessOneOfTheSafeCodecsIsChosen() {
        assertEquals("lz4", config().kafka().compressionType());
        env.put("KAFKA_COMPRESSION_TYPE", "ZSTD");
        assertEquals("zstd", config().kafka().compressionType());
        env.put("KAFKA_COMPRESSION_TYPE", "none");
        assertEquals("none", config().kafka().compressionType());
        env.put("KAFKA_COMPRESSION_TYPE", "snappy");
        ConfigException e = assertThrows(ConfigException.class, this::config);
        assertEquals(1, e.getMessage().lines().count());
        assertTrue(e.getMessage().startsWith("setting kafka.compression-type (KAFKA_COMPRESSION_TYPE): 'snappy'"),
                e.getMessage());
    }

    @Test
    void kafkaRecordsAreSizedFromTheMaximumPacketSize() {
        assertEquals(1_048_576, config().kafka().maxPacketSize());
        env.put("MQTT_MAX_PACKET_SIZE", "2097152");
        assertEquals(2_097_152, config().kafka().recordLimits().maxPacketSize());
        assertTrue(config().kafka().recordLimits().maxRecordBytes() > 2_097_152);
    }

    @Test
    void resourceLimitsHaveFiniteDefaultsAndNamedErrors() {
        BrokerConfig c = config();
        assertEquals(604_800L, c.mqttLimits().maxSessionExpirySeconds(), "7 days");
        assertEquals(100_000, c.maxRetainedMessages());
        assertEquals(256L * 1024 * 1024, c.maxRetainedBytes());
        assertEquals(1_000, c.maxApplicationSessions());
        assertEquals(java.time.Duration.ofHours(1), c.applicationSharedGrace());
        env.put("MQTT_MAX_RETAINED_MESSAGES", "-1");
        ConfigException e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().startsWith("setting mqtt.max-retained-messages (MQTT_MAX_RETAINED_MESSAGES)"),
                e.getMessage());
        env.remove("MQTT_MAX_RETAINED_MESSAGES");
        env.put("APPLICATION_SHARED_GRACE", "soon");
        e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().contains("sessions.application-shared-grace (APPLICATION_SHARED_GRACE)"),
                e.getMessage());
    }

    @Test
    void bridgeSessionsAreOffUnlessAPatternIsSetAndTheirExpiryIsADuration() {
        assertEquals(io.fleetmq.session.BridgeSessions.NONE, config().mqttLimits().bridgeSessions());
        env.put("MQTT_BRIDGE_CLIENT_ID_PATTERN", "bridge-.*");
        io.fleetmq.session.BridgeSessions bridges = config().mqttLimits().bridgeSessions();
        assertEquals("bridge-.*", bridges.clientIds().pattern());
        assertEquals(86_400, bridges.expirySeconds(), "1d");
        env.put("MQTT_BRIDGE_SESSION_EXPIRY", "2h");
        assertEquals(7_200, config().mqttLimits().bridgeSessions().expirySeconds());
        env.put("MQTT_BRIDGE_CLIENT_ID_PATTERN", "bridge-(");
        ConfigException e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().contains("sessions.bridge-client-id-pattern (MQTT_BRIDGE_CLIENT_ID_PATTERN)"),
                e.getMessage());
        env.put("MQTT_BRIDGE_CLIENT_ID_PATTERN", "bridge-.*");
        env.put("MQTT_BRIDGE_SESSION_EXPIRY", "0");
        e = assertThrows(ConfigException.class, this::config);
        assertTrue(e.getMessage().contains("sessions.bridge-session-expiry (MQTT_BRIDGE_SESSION_EXPIRY)"),
                e.getMessage());
    }
}
