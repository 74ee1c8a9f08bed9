package io.fleetmq.app.security;

import java.io.IOException;
import java.io.Writer;
import java.math.BigInteger;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.CRLReason;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v2CRLBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CRLConverter;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A small PKI made for a test: CAs, intermediates, device and server certificates (EC P-256),
 * CRLs, written as PEM the way an operator would hand them to the broker, and TLS sockets of
 * clients presenting a certificate chain.
 */
final class TestPki {

    /** A certificate with its key, and the chain above it as a client would send it (without the root). */
    record Issued(X509Certificate certificate, PrivateKey key, List<X509Certificate> chainAbove) {
        List<X509Certificate> chain() {
            List<X509Certificate> all = new java.util.ArrayList<>();
            all.add(certificate);
            all.addAll(chainAbove);
            return all;
        }
    }

    private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

    private TestPki() {
    }

    static KeyPair keyPair() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"), new SecureRandom());
        return g.generateKeyPair();
    }

    /** A self-signed CA certificate. */
    static Issued rootCa(String cn) throws Exception {
        KeyPair keys = keyPair();
        X509Certificate cert = build(new X500Name("CN=" + cn), keys, new X500Name("CN=" + cn), keys.getPrivate(),
                null, true, Instant.now().minus(Duration.ofDays(1)), Instant.now().plus(Duration.ofDays(365)), null);
        return new Issued(cert, keys.getPrivate(), List.of());
    }

    /** An intermediate CA under {@code issuer}. */
    static Issued intermediateCa(Issued issuer, String cn) throws Exception {
        return issue(issuer, cn, true, Instant.now().minus(Duration.ofDays(1)), Instant.now().plus(Duration.ofDays(365)),
                null);
    }

    /** A client certificate under {@code issuer}, valid from yesterday for a year. */
    static Issued device(Issued issuer, String cn) throws Exception {
        return issue(issuer, cn, false, Instant.now().minus(Duration.ofDays(1)), Instant.now().plus(Duration.ofDays(365)),
                null);
    }

    /** A client certificate that expired yesterday. */
    static Issued expiredDevice(Issued issuer, String cn) throws Exception {
        return issue(issuer, cn, false, Instant.now().minus(Duration.ofDays(30)), Instant.now().minus(Duration.ofDays(1)),
                null);
    }

    /** A server certificate for 127.0.0.1 and localhost. */
    static Issued server(Issued issuer) throws Exception {
        return issue(issuer, "localhost", false, Instant.now().minus(Duration.ofDays(1)),
                Instant.now().plus(Duration.ofDays(365)), new GeneralNames(new GeneralName[] {
                        new GeneralName(GeneralName.dNSName, "localhost"),
                        new GeneralName(GeneralName.iPAddress, "127.0.0.1")}));
    }

    static Issued issue(Issued issuer, String cn, boolean ca, Instant from, Instant until, GeneralNames san)
            throws Exception {
        KeyPair keys = keyPair();
        X509Certificate cert = build(new X500Name("O=FleetMQ test,CN=" + cn), keys,
                X500Name.getInstance(issuer.certificate().getSubjectX500Principal().getEncoded()), issuer.key(),
                issuer.certificate(), ca, from, until, san);
        List<X509Certificate> above = new java.util.ArrayList<>();
        if (!issuer.chainAbove().isEmpty() || !isSelfSigned(issuer.certificate())) {
            above.add(issuer.certificate());
            above.addAll(issuer.chainAbove());
        }
        return new Issued(cert, keys.getPrivate(), List.copyOf(above));
    }

    private static boolean isSelfSigned(X509Certificate c) {
        return c.getSubjectX500Principal().equals(c.getIssuerX500Principal());
    }

    private static X509Certificate build(X500Name subject, KeyPair keys, X500Name issuerName, PrivateKey issuerKey,
            X509Certificate issuerCert, boolean ca, Instant from, Instant until, GeneralNames san) throws Exception {
        JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
        JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(issuerName,
                BigInteger.valueOf(SERIAL.incrementAndGet()), Date.from(from), Date.from(until), subject,
                keys.getPublic());
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
        b.addExtension(Extension.keyUsage, true, ca ? new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign)
                : new KeyUsage(KeyUsage.digitalSignature));
        b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(keys.getPublic()));
        if (issuerCert != null) {
            b.addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(issuerCert));
        }
        if (san != null) {
            b.addExtension(Extension.subjectAlternativeName, false, san);
        }
        ContentSigner signer = new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey);
        return new JcaX509CertificateConverter().getCertificate(b.build(signer));
    }

    /** A CRL of {@code issuer} revoking {@code revoked}, current for a day. */
    static X509CRL crl(Issued issuer, X509Certificate... revoked) throws Exception {
        Instant now = Instant.now();
        X509v2CRLBuilder b = new X509v2CRLBuilder(
                X500Name.getInstance(issuer.certificate().getSubjectX500Principal().getEncoded()),
                Date.from(now.minus(Duration.ofMinutes(5))));
        b.setNextUpdate(Date.from(now.plus(Duration.ofDays(1))));
        for (X509Certificate r : revoked) {
            b.addCRLEntry(r.getSerialNumber(), Date.from(now.minus(Duration.ofMinutes(1))), CRLReason.keyCompromise);
        }
        b.addExtension(Extension.authorityKeyIdentifier, false,
                new JcaX509ExtensionUtils().createAuthorityKeyIdentifier(issuer.certificate()));
        ContentSigner signer = new JcaContentSignerBuilder("SHA256withECDSA").build(issuer.key());
        return new JcaX509CRLConverter().getCRL(b.build(signer));
    }

    /** Writes PEM objects (certificates, CRLs, keys as PKCS#8) to {@code file}. */
    static Path pem(Path file, Object... objects) throws IOException {
        Files.createDirectories(file.getParent());
        try (Writer w = Files.newBufferedWriter(file); JcaPEMWriter pem = new JcaPEMWriter(w)) {
            for (Object o : objects) {
                pem.writeObject(o instanceof PrivateKey k ? new JcaPKCS8Generator(k, null) : o);
            }
        }
        return file;
    }

    /**
     * A TLS socket to 127.0.0.1:{@code port} that trusts {@code serverCa} and presents {@code client}'s
     * chain (none when null), handshake done.
     */
    static SSLSocket connect(int port, X509Certificate serverCa, Issued client) throws Exception {
        return connect(port, serverCa, client, client == null ? null : client.chain());
    }

    /** As {@link #connect(int, X509Certificate, Issued)}, presenting {@code chain} with {@code client}'s key. */
    static SSLSocket connect(int port, X509Certificate serverCa, Issued client, List<X509Certificate> chain)
            throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("server-ca", serverCa);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        KeyManager[] keyManagers = client == null ? new KeyManager[0]
                : new KeyManager[] {new Presenting(client.key(), chain.toArray(X509Certificate[]::new))};
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(keyManagers, tmf.getTrustManagers(), new SecureRandom());
        SSLSocket socket = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port);
        socket.setSoTimeout(10_000);
        socket.startHandshake();
        return socket;
    }

    /**
     * Presents its chain whatever the server asks for: a client of a wrong CA, or with an expired or
     * revoked certificate, sends it all the same, as a misconfigured or hostile device would.
     */
    private static final class Presenting extends X509ExtendedKeyManager {
        private final PrivateKey key;
        private final X509Certificate[] chain;

        Presenting(PrivateKey key, X509Certificate[] chain) {
            this.key = key;
            this.chain = chain;
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return new String[] {"client"};
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return "client";
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
            return "client";
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return null;
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return chain.clone();
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return key;
        }
    }

    /** The subject CN of {@code issued}'s certificate. */
    static String commonName(Issued issued) {
        return io.fleetmq.app.security.provider.CommonNames.of(issued.certificate());
    }

    static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing after a failure
        }
    }
}
