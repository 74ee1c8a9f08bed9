package io.fleetmq.app.security.provider;

import io.fleetmq.core.mqtt.ProtocolVersion;
import java.net.InetAddress;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * What providers know of a CONNECT.
 *
 * @param clientId     the client ID (assigned by the broker if the client sent none)
 * @param username     the CONNECT's user name, or null
 * @param password     the CONNECT's password, or null
 * @param address      the client's IP address, or null
 * @param tls          whether the connection is encrypted
 * @param certificates the client's certificate chain as the TLS handshake verified it (leaf first);
 *                     empty when the client presented none
 */
public record AuthRequest(String clientId, String username, byte[] password, InetAddress address, boolean tls,
        List<X509Certificate> certificates, ProtocolVersion version) {

    public AuthRequest {
        certificates = certificates == null ? List.of() : List.copyOf(certificates);
    }

    /** The subject CN of the client's own certificate, or null. */
    public String commonName() {
        return certificates.isEmpty() ? null : CommonNames.of(certificates.get(0));
    }
}
