package io.fleetmq.transport.tls;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.AttributeKey;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CRL;
import java.security.cert.CertStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.CertPathBuilder;
import java.security.cert.CollectionCertStoreParameters;
import java.security.cert.PKIXBuilderParameters;
import java.security.cert.PKIXCertPathBuilderResult;
import java.security.cert.PKIXRevocationChecker;
import java.security.cert.TrustAnchor;
import java.security.cert.X509CRL;
import java.security.cert.X509CertSelector;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.net.ssl.CertPathTrustManagerParameters;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Client certificates on the TLS listeners (mutual TLS): the handshake asks for a certificate
 * ({@code optional}) or insists on one ({@code required}) and verifies the chain the client presents
 * with PKIX against the operator's certificate authorities: signatures up to one of them, validity
 * dates, key usage for client authentication and, when a CRL file is given, revocation. A chain
 * that does not verify fails the handshake, with {@code optional} too; a client that presents none
 * passes under {@code optional} and is then authenticated by other means.
 *
 * <p>Revocation is checked against the CRLs of the file only (nothing is fetched from the network).
 * A certificate whose issuer has no CRL in the file, or only one past its next update, counts as not
 * revoked: one CRL file may serve a part of the hierarchy, and an outdated CRL is warned about at
 * start rather than locking every device out.
 */
public final class ClientCertificates {

    private static final Logger log = LoggerFactory.getLogger(ClientCertificates.class);

    /** Set on a connection of a listener that asks for client certificates: rebuilds their paths. */
    public static final AttributeKey<ClientCertificates> KEY = AttributeKey.valueOf("fleetmq.clientCertificates");

    private final ClientAuth mode;
    private final List<X509Certificate> authorities;
    private final List<X509CRL> crls;

    private ClientCertificates(ClientAuth mode, List<X509Certificate> authorities, List<X509CRL> crls) {
        this.mode = mode;
        this.authorities = authorities;
        this.crls = crls;
    }

    /** No client certificates asked for. */
    public static ClientCertificates none() {
        return new ClientCertificates(ClientAuth.NONE, List.of(), List.of());
    }

    /**
     * Reads the certificate authorities and the optional CRLs.
     *
     * @param mode    {@link ClientAuth#OPTIONAL} or {@link ClientAuth#REQUIRE} ({@link ClientAuth#NONE}: see {@link #none()})
     * @param caFile  PEM file with one or more CA certificates that client chains must lead to
     * @param crlFile PEM file with one or more CRLs, or null for no revocation check
     * @throws IllegalArgumentException naming the file at fault and why
     */
    public static ClientCertificates load(ClientAuth mode, Path caFile, Path crlFile) {
        if (mode == ClientAuth.NONE) {
            return none();
        }
        List<X509Certificate> cas = certificates(caFile);
        List<X509CRL> crls = crlFile == null ? List.of() : crls(crlFile);
        Instant now = Instant.now();
        for (X509CRL crl : crls) {
            if (crl.getNextUpdate() != null && crl.getNextUpdate().toInstant().isBefore(now)) {
                log.warn("The CRL of {} in {} is past its next update ({}): certificates it revokes are accepted"
                        + " until a current CRL is installed", crl.getIssuerX500Principal().getName(), crlFile,
                        crl.getNextUpdate().toInstant());
            }
        }
        return new ClientCertificates(mode, cas, crls);
    }

    /**
     * The certification path of a client's certificate as PKIX builds it from what the client sent,
     * up to and including the trusted CA: leaf first. Certificates the client sent that are not on
     * that path are left out, so that a certificate it added (named like a CA whose name a credential
     * admits) can never count; the CA from the bundle counts even when the client sent only its leaf.
     * The handshake verified the chain already (revocation too), so this rebuilds the path without
     * checking revocation again. Should it fail all the same, only the leaf is returned.
     *
     * @param presented what the client sent, leaf first (not empty)
     */
    public List<X509Certificate> verifiedChain(List<X509Certificate> presented) {
        X509Certificate leaf = presented.get(0);
        try {
            X509CertSelector target = new X509CertSelector();
            target.setCertificate(leaf);
            PKIXBuilderParameters params = new PKIXBuilderParameters(anchors(), target);
            params.setRevocationEnabled(false);
            params.addCertStore(CertStore.getInstance("Collection", new CollectionCertStoreParameters(presented)));
            PKIXCertPathBuilderResult built = (PKIXCertPathBuilderResult) CertPathBuilder.getInstance("PKIX")
                    .build(params);
            List<X509Certificate> chain = new ArrayList<>();
            for (Certificate c : built.getCertPath().getCertificates()) {
                chain.add((X509Certificate) c);
            }
            X509Certificate anchor = built.getTrustAnchor().getTrustedCert();
            if (anchor != null && !chain.contains(anchor)) {
                chain.add(anchor);
            }
            return List.copyOf(chain);
        } catch (GeneralSecurityException e) {
            log.debug("No certification path for {}: {}", leaf.getSubjectX500Principal().getName(), e.toString());
            return List.of(leaf);
        }
    }

    private Set<TrustAnchor> anchors() {
        Set<TrustAnchor> anchors = new HashSet<>();
        for (X509Certificate ca : authorities) {
            anchors.add(new TrustAnchor(ca, null));
        }
        return anchors;
    }

    /** Whether the handshake asks for client certificates at all. */
    public boolean enabled() {
        return mode != ClientAuth.NONE;
    }

    /** Configures {@code builder}'s client authentication; nothing when it is off. */
    public SslContextBuilder applyTo(SslContextBuilder builder) {
        if (!enabled()) {
            return builder;
        }
        return builder.clientAuth(mode).trustManager(trustManagers());
    }

    private TrustManagerFactory trustManagers() {
        try {
            PKIXBuilderParameters params = new PKIXBuilderParameters(anchors(), null);
            if (crls.isEmpty()) {
                params.setRevocationEnabled(false);
            } else {
                params.addCertStore(CertStore.getInstance("Collection", new CollectionCertStoreParameters(crls)));
                PKIXRevocationChecker revocation = (PKIXRevocationChecker) CertPathBuilder.getInstance("PKIX")
                        .getRevocationChecker();
                // CRLs of the file only, never OCSP or a download; no CRL for an issuer is no verdict.
                revocation.setOptions(EnumSet.of(PKIXRevocationChecker.Option.PREFER_CRLS,
                        PKIXRevocationChecker.Option.NO_FALLBACK, PKIXRevocationChecker.Option.SOFT_FAIL));
                params.setRevocationEnabled(true);
                params.addCertPathChecker(revocation);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
            tmf.init(new CertPathTrustManagerParameters(params));
            return tmf;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot set up the verification of client certificates: " + e.getMessage(), e);
        }
    }

    private static List<X509Certificate> certificates(Path file) {
        Collection<? extends Certificate> read = read(file, "certificates", in -> factory().generateCertificates(in));
        List<X509Certificate> found = new ArrayList<>();
        for (Certificate c : read) {
            found.add((X509Certificate) c);
        }
        if (found.isEmpty()) {
            throw new IllegalArgumentException(file + " holds no certificate");
        }
        return List.copyOf(found);
    }

    private static List<X509CRL> crls(Path file) {
        Collection<? extends CRL> read = read(file, "CRLs", in -> factory().generateCRLs(in));
        List<X509CRL> found = new ArrayList<>();
        for (CRL c : read) {
            found.add((X509CRL) c);
        }
        if (found.isEmpty()) {
            throw new IllegalArgumentException(file + " holds no CRL");
        }
        return List.copyOf(found);
    }

    private interface Parser<T> {
        T parse(InputStream in) throws GeneralSecurityException;
    }

    private static <T> T read(Path file, String what, Parser<T> parser) {
        try (InputStream in = Files.newInputStream(file)) {
            return parser.parse(in);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + file + ": " + e.getMessage(), e);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException(file + " does not hold PEM " + what + ": " + e.getMessage(), e);
        }
    }

    private static CertificateFactory factory() throws GeneralSecurityException {
        return CertificateFactory.getInstance("X.509");
    }
}
