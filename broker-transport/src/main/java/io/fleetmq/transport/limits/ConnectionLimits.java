package io.fleetmq.transport.limits;

import java.time.Duration;

/**
 * What one client may take of a node through its connection, enforced by the transport before
 * anything reaches a session.
 *
 * @param maxClientIdLength     bytes of a client identifier (UTF-8)
 * @param maxTopicLength        bytes of a topic name or filter (UTF-8)
 * @param maxTopicLevels        levels of a topic name or filter
 * @param maxUserProperties     user properties in one packet (a CONNECT's and its will's together)
 * @param maxUserPropertyBytes  bytes of the user properties of one packet, names and values
 * @param packetTimeout         time a client has to finish a packet it has started
 * @param maxPartialPacketBytes bytes of started, unfinished packets held for all connections of the node
 * @param maxConnections        open MQTT connections of the node
 * @param maxConnectionRate     new connections per second per listener
 * @param tcpKeepAliveSeconds   idle seconds before TCP keep-alive probes a silent peer
 * @param maxPublishRate        PUBLISH packets per second per client (0 = no limit)
 * @param maxPublishBytesRate   PUBLISH payload bytes per second per client (0 = no limit)
 * @param publishRateDisconnect beyond the rate, DISCONNECT 0x96 instead of reading more slowly
 */
public record ConnectionLimits(int maxClientIdLength, int maxTopicLength, int maxTopicLevels, int maxUserProperties,
                               int maxUserPropertyBytes, Duration packetTimeout, long maxPartialPacketBytes,
                               int maxConnections, int maxConnectionRate, int tcpKeepAliveSeconds,
                               int maxPublishRate, long maxPublishBytesRate, boolean publishRateDisconnect) {

    /** The shipped defaults, those of {@code fleetmq.yml}. */
    public static ConnectionLimits defaults() {
        return new ConnectionLimits(128, 1024, 32, 64, 8192, Duration.ofSeconds(30), 128L * 1024 * 1024,
                100_000, 1_000, 60, 1_000, 1_048_576, false);
    }

    /** These limits with another publish rate. */
    public ConnectionLimits withPublishRate(int messages, long bytes, boolean disconnect) {
        return new ConnectionLimits(maxClientIdLength, maxTopicLength, maxTopicLevels, maxUserProperties,
                maxUserPropertyBytes, packetTimeout, maxPartialPacketBytes, maxConnections, maxConnectionRate,
                tcpKeepAliveSeconds, messages, bytes, disconnect);
    }
}
