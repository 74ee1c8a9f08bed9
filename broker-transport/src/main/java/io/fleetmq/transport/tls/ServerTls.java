package io.fleetmq.transport.tls;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TLS side of the secure listeners: the server certificate and key, and what is asked of client
 * certificates, built from files that may change while the node runs (a renewed certificate, a new
 * CRL). {@link #reloadIfChanged()} rebuilds them when a file's content changed; new connections get
 * the new material, connections already open keep theirs. A file that cannot be read or does not
 * make a valid context is reported and the old material stays in use.
 */
public final class ServerTls {

    private static final Logger log = LoggerFactory.getLogger(ServerTls.class);

    /** The server context and the client-certificate policy applied to it; used together. */
    public record Material(SslContext context, ClientCertificates clientCertificates) {
        public Material {
            Objects.requireNonNull(context, "context");
            Objects.requireNonNull(clientCertificates, "clientCertificates");
        }
    }

    private final Supplier<Material> build;
    private final List<Path> files;
    private final long handshakeTimeoutMillis;
    private volatile Material current;
    private volatile byte[] fingerprint;

    /**
     * @param build            builds the material from the files; throws with a one-line reason if it cannot
     * @param files            the files it reads (certificate, key, CA bundle, CRL), watched for changes
     * @param handshakeTimeout how long a TLS handshake may take before the connection is closed
     */
    public ServerTls(Supplier<Material> build, List<Path> files, Duration handshakeTimeout) {
        this.build = build;
        this.files = List.copyOf(files);
        this.handshakeTimeoutMillis = handshakeTimeout.toMillis();
        this.fingerprint = fingerprint();
        this.current = build.get();
    }

    /** Fixed material (tests, listeners without files). */
    public static ServerTls of(SslContext context, ClientCertificates clientCertificates) {
        Material m = new Material(context, clientCertificates);
        return new ServerTls(() -> m, List.of(), Duration.ofSeconds(10));
    }

    /** The material for a new connection: its context makes the connection's handler. */
    public Material material() {
        return current;
    }

    /** A TLS handler for a new connection made from {@code material}, with the handshake bounded. */
    public SslHandler newHandler(Material material, ByteBufAllocator alloc) {
        SslHandler handler = material.context().newHandler(alloc);
        handler.setHandshakeTimeoutMillis(handshakeTimeoutMillis);
        return handler;
    }

    /**
     * Rebuilds the material if the content of a watched file changed since the last build.
     *
     * @return true if new material is in use now
     */
    public boolean reloadIfChanged() {
        byte[] now = fingerprint();
        if (Arrays.equals(now, fingerprint)) {
            return false;
        }
        try {
            Material rebuilt = build.get();
            current = rebuilt;
            fingerprint = now;
            log.info("TLS certificate, key or CA files changed: new connections use them");
            return true;
        } catch (RuntimeException e) {
            // Half-written files are common mid-rotation: try again at the next check.
            log.warn("TLS files changed but cannot be used (the previous ones stay in use): {}", e.getMessage());
            return false;
        }
    }

    /** A digest of the watched files' contents (a missing file counts as empty). */
    private byte[] fingerprint() {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            for (Path f : files) {
                digest.update(f.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
                try {
                    digest.update(Files.readAllBytes(f));
                } catch (IOException e) {
                    digest.update((byte) 0);
                }
            }
            return digest.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The watched files that exist, for logs. */
    public List<Path> files() {
        return new ArrayList<>(files);
    }
}
