package io.fleetmq.bench.client;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * TLS for the connect scenario, from PEM files as brokers and OpenSSL write them.
 *
 * @param caFile   CA certificates the broker's certificate must lead to; null: the JDK's trust store
 * @param certFile the client's certificate chain, for mutual TLS; null: no client certificate
 * @param keyFile  its private key (PKCS#8, unencrypted); null exactly when {@code certFile} is
 */
public record TlsFiles(Path caFile, Path certFile, Path keyFile) {

    public TlsFiles {
        if ((certFile == null) != (keyFile == null)) {
            throw new IllegalArgumentException("a client certificate needs its key and a key its certificate");
        }
    }

    /**
     * One context for all connections of a run. The broker's host name is checked against its
     * certificate (Netty's client default), as a device would.
     */
    public SslContext clientContext() {
        try {
            SslContextBuilder builder = SslContextBuilder.forClient();
            if (caFile != null) {
                builder.trustManager(caFile.toFile());
            }
            if (certFile != null) {
                builder.keyManager(certFile.toFile(), keyFile.toFile());
            }
            return builder.build();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the TLS files: " + e.getMessage(), e);
        }
    }

    /** For reports: which files, never their content. */
    public String describe() {
        return "TLS" + (certFile == null ? "" : " with client certificate " + certFile.getFileName());
    }
}
