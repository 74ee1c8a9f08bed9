package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fleetmq.app.support.PrivateDatabase;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.core.security.BlockEntry;
import io.fleetmq.core.security.Credential;
import io.fleetmq.core.security.SecurityChange;
import io.fleetmq.persistence.auth.PasswordHashes;
import io.fleetmq.persistence.security.BlockedClients;
import io.fleetmq.persistence.security.Credentials;
import io.fleetmq.persistence.security.RefusedConnections;
import io.fleetmq.testkit.RawMqtt;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;

/**
 * Credentials and blocked clients written as the admin API writes them (PostgreSQL, then an
 * announcement on the security topic), for end-to-end tests of a node's MQTT security.
 */
final class SecurityFixture implements AutoCloseable {

    static final PasswordHashes HASHES = new PasswordHashes(4, 14, 100_000);

    final PrivateDatabase db;
    final Credentials credentials;
    final BlockedClients blocked;
    final RefusedConnections refused;
    private final TestBroker broker;

    SecurityFixture(PrivateDatabase db, TestBroker broker) {
        this.db = db;
        this.broker = broker;
        this.credentials = new Credentials(db.database().dataSource());
        this.blocked = new BlockedClients(db.database().dataSource());
        this.refused = new RefusedConnections(db.database().dataSource());
    }

    /**
     * A node on a database of its own that refuses anonymous clients, with {@code env} on top, and a
     * fixture for it; {@link #close} stops both.
     */
    static SecurityFixture startNode(java.nio.file.Path dataDir, java.util.Map<String, String> env) {
        PrivateDatabase db = PrivateDatabase.create();
        try {
            java.util.Map<String, String> all = new java.util.HashMap<>(db.env());
            all.put("MQTT_ALLOW_ANONYMOUS", "false");
            all.putAll(env);
            return new SecurityFixture(db, TestBroker.start(dataDir, all));
        } catch (RuntimeException | Error e) {
            db.close();
            throw e;
        }
    }

    TestBroker broker() {
        return broker;
    }

    /** Stops the node, then its database. */
    @Override
    public void close() {
        try {
            broker.close();
        } finally {
            db.close();
        }
    }

    Credential credential(String username, String clientId, String password, List<String> publish,
            List<String> subscribe) {
        Credential c = credentials.create(new Credentials.Input(Credential.BASIC, username, clientId,
                password == null ? null : HASHES.hash(password.toCharArray()), null, publish, subscribe));
        announce(new SecurityChange(SecurityChange.Kind.CREDENTIAL, c.id(), false, false));
        return c;
    }

    Credential update(Credential c, List<String> publish, List<String> subscribe) {
        Credential updated = credentials.update(c.id(), new Credentials.Input(c.type(), c.username(), c.clientId(),
                null, c.clientType(), publish, subscribe)).orElseThrow();
        announce(new SecurityChange(SecurityChange.Kind.CREDENTIAL, c.id(), false, false));
        return updated;
    }

    /** Gives {@code c} the user name {@code username}, keeping its password and rules. */
    Credential rename(Credential c, String username) {
        Credential updated = credentials.update(c.id(), new Credentials.Input(c.type(), username, c.clientId(),
                null, c.clientType(), c.publish(), c.subscribe())).orElseThrow();
        announce(new SecurityChange(SecurityChange.Kind.CREDENTIAL, c.id(), false, true));
        return updated;
    }

    void delete(Credential c) {
        credentials.delete(c.id());
        announce(new SecurityChange(SecurityChange.Kind.CREDENTIAL, c.id(), true, true));
    }

    BlockEntry block(String type, String value, String target, Instant expiresAt) {
        BlockEntry e = blocked.create(type, value, target, expiresAt);
        announce(new SecurityChange(SecurityChange.Kind.BLOCKED, e.id(), false, false));
        return e;
    }

    void unblock(BlockEntry e) {
        blocked.delete(e.id());
        announce(new SecurityChange(SecurityChange.Kind.BLOCKED, e.id(), true, false));
    }

    /** Announces {@code change} and waits until the node applied it. */
    void announce(SecurityChange change) {
        double before = applied();
        broker.node().securityChanges().announce(change);
        io.fleetmq.testkit.Await.until(java.time.Duration.ofSeconds(10), "the node applied " + change,
                () -> applied() > before);
    }

    private double applied() {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                "^fleetmq_security_changes_applied_total(?:\\{[^}]*\\})? (\\S+)$", java.util.regex.Pattern.MULTILINE)
                .matcher(broker.scrapeMetrics());
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    /** A raw MQTT connection that sent CONNECT with these credentials; returns it and the CONNACK's code. */
    static Connected connect(int port, int level, String clientId, String username, String password) throws IOException {
        RawMqtt raw = RawMqtt.connect(port);
        raw.send(RawMqtt.connectWithCredentials(level, clientId, username,
                password == null ? null : password.getBytes(StandardCharsets.UTF_8)));
        byte[] connack = raw.readType(2);
        return new Connected(raw, connack[3] & 0xFF);
    }

    /** A raw connection and the reason code (MQTT 5) or return code (3.1.1) of its CONNACK. */
    record Connected(RawMqtt raw, int code) implements AutoCloseable {
        Connected expect(int expected) {
            assertEquals(expected, code, String.format("CONNACK code 0x%02X", code));
            return this;
        }

        @Override
        public void close() throws IOException {
            raw.close();
        }
    }

    /** The SUBACK code of a one-filter SUBSCRIBE on an MQTT 5 connection. */
    static int subscribeV5(RawMqtt raw, int packetId, String filter, int qos) throws IOException {
        raw.send(RawMqtt.subscribeV5(packetId, filter, qos));
        byte[] suback = raw.readType(9);
        return suback[suback.length - 1] & 0xFF;
    }

    /** The PUBACK code of a QoS 1 PUBLISH on an MQTT 5 connection (0 when the PUBACK carries none). */
    static int publishQos1V5(RawMqtt raw, int packetId, String topic, String payload) throws IOException {
        raw.send(RawMqtt.publishV5(topic, 1, packetId, payload.getBytes(StandardCharsets.UTF_8)));
        byte[] puback = raw.readType(4);
        return puback[1] >= 3 ? puback[4] & 0xFF : 0;
    }
}
