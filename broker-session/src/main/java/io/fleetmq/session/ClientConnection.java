package io.fleetmq.session;

import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolVersion;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * One network connection of a client, as the session layer sees it; implemented by the transport.
 * Every method may be called from the session's actor thread and must not block.
 */
public interface ClientConnection {

    /**
     * Queues a packet for the client without sending it yet: the session writes what one mailbox
     * turn produces and then calls {@link #flush()} once, so that many packets share one system call.
     */
    void write(Packet packet);

    /** Sends everything written so far. */
    void flush();

    /** Sends what was written, then {@code last} (may be null), then closes the connection. */
    void sendAndClose(Packet last);

    /** Whether the socket's outbound buffer has room; the session holds back QoS 0 traffic when not. */
    boolean isWritable();

    /**
     * A PUBLISH the transport handed over has been settled (Kafka confirmed or refused it, or it
     * was rejected). The transport counts PUBLISH packets from reading to settling and stops
     * reading from the socket while too many are unsettled, so a fast publisher is slowed down by
     * TCP instead of filling the broker's heap; QoS 0 has no receive window to do that.
     */
    void publishSettled();

    /** Arms keep-alive: the connection ends when nothing arrives within 1.5 times this (0 = off) [MQTT-3.1.2-22]. */
    void keepAlive(int seconds);

    /** The protocol version negotiated by CONNECT. */
    ProtocolVersion version();

    /** Client's address, for logs. */
    String remoteAddress();

    /** The client's IP address (for blocking by address and the log of refused connections), or null. */
    default java.net.InetAddress address() {
        return null;
    }

    /** Whether the connection is encrypted (TLS or secure WebSocket). */
    default boolean secure() {
        return false;
    }

    /**
     * The certificate chain the client presented in the TLS handshake, leaf first, as the handshake
     * verified it against the listener's certificate authorities; empty without TLS or without a
     * client certificate. A chain that does not verify never gets here: its handshake fails.
     */
    default List<X509Certificate> peerCertificates() {
        return List.of();
    }
}
