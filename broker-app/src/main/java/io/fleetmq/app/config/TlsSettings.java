package io.fleetmq.app.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How the TLS and secure WebSocket listeners speak TLS ({@code listeners.tls.*} beyond the files).
 *
 * @param protocols        TLS versions offered; TLS 1.2 and 1.3 by default
 * @param ciphers          cipher suites offered, in order of preference; empty: the JDK's defaults for those versions
 * @param keyPassword      the password of an encrypted private key file; null when it is not encrypted
 * @param handshakeTimeout how long a TLS handshake may take before the connection is closed
 * @param reloadInterval   how often the certificate, key, CA and CRL files are checked for changes; zero: never
 */
public record TlsSettings(List<String> protocols, List<String> ciphers, String keyPassword, Duration handshakeTimeout,
        Duration reloadInterval) {

    static final List<String> KNOWN_PROTOCOLS = List.of("TLSv1.3", "TLSv1.2", "TLSv1.1", "TLSv1");

    public TlsSettings {
        protocols = List.copyOf(protocols);
        ciphers = List.copyOf(ciphers);
    }

    @Override
    public String toString() {
        return "TlsSettings[protocols=" + protocols + ", ciphers=" + ciphers + ", keyPassword="
                + (keyPassword == null ? "none" : "***") + ", handshakeTimeout=" + handshakeTimeout
                + ", reloadInterval=" + reloadInterval + "]";
    }

    static TlsSettings from(Settings s) {
        List<String> protocols = new ArrayList<>();
        String raw = s.string("listeners.tls.protocols");
        for (String part : raw.split(",")) {
            String p = part.strip();
            if (p.isEmpty()) {
                continue;
            }
            String known = KNOWN_PROTOCOLS.stream().filter(k -> k.toLowerCase(Locale.ROOT).equals(p.toLowerCase(Locale.ROOT)))
                    .findFirst().orElseThrow(() -> s.invalid("listeners.tls.protocols", raw,
                            "'" + p + "' is not a TLS version (TLSv1.3, TLSv1.2)"));
            protocols.add(known);
        }
        if (protocols.isEmpty()) {
            throw s.invalid("listeners.tls.protocols", raw, "names no TLS version");
        }
        List<String> ciphers = new ArrayList<>();
        for (String part : s.string("listeners.tls.ciphers").split(",")) {
            if (!part.isBlank()) {
                ciphers.add(part.strip());
            }
        }
        String password = s.string("listeners.tls.key-password");
        Duration handshake = s.duration("listeners.tls.handshake-timeout");
        if (handshake.isZero()) {
            throw s.invalid("listeners.tls.handshake-timeout", s.string("listeners.tls.handshake-timeout"),
                    "must be greater than zero");
        }
        return new TlsSettings(protocols, ciphers, password.isEmpty() ? null : password, handshake,
                s.duration("listeners.tls.reload-interval"));
    }
}
