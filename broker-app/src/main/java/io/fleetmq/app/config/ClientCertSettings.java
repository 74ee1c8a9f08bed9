package io.fleetmq.app.config;

import io.netty.handler.ssl.ClientAuth;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Client certificates on the TLS and secure WebSocket listeners (mutual TLS).
 *
 * @param clientAuth {@code none}, {@code optional} (asked for; a client without one still connects) or
 *                   {@code required} (a client without one fails the handshake)
 * @param caFile     PEM file with the certificate authorities client chains must lead to; null with {@code none}
 * @param crlFile    PEM file with CRLs of those authorities, or null for no revocation check
 */
public record ClientCertSettings(ClientAuth clientAuth, Path caFile, Path crlFile) {

    public static ClientCertSettings none() {
        return new ClientCertSettings(ClientAuth.NONE, null, null);
    }

    public static ClientCertSettings from(Settings s) {
        String raw = s.string("listeners.tls.client-auth");
        ClientAuth mode = switch (raw) {
            case "none" -> ClientAuth.NONE;
            case "optional" -> ClientAuth.OPTIONAL;
            case "required" -> ClientAuth.REQUIRE;
            default -> throw s.invalid("listeners.tls.client-auth", raw, "must be none, optional or required");
        };
        Path ca = file(s, "listeners.tls.ca-file");
        Path crl = file(s, "listeners.tls.crl-file");
        if (mode != ClientAuth.NONE && ca == null) {
            throw new ConfigException("setting " + s.describe("listeners.tls.ca-file") + " is required when "
                    + s.describe("listeners.tls.client-auth") + " is " + raw);
        }
        return new ClientCertSettings(mode, ca, crl);
    }

    private static Path file(Settings s, String key) {
        String raw = s.string(key);
        if (raw.isEmpty()) {
            return null;
        }
        Path path = Path.of(raw);
        if (!Files.isReadable(path)) {
            throw s.invalid(key, raw, "is not a readable file");
        }
        return path;
    }
}
