package io.fleetmq.app.security.jwt;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSObject;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.ECDSAVerifier;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.KeyType;
import com.nimbusds.jose.jwk.RSAKey;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The keys a token's signature is checked with, chosen by its {@code alg} alone: an HMAC token only
 * against the shared secret, an RSA or EC token only against public keys of that type. So a token
 * signed with HMAC using a public key as the secret never verifies (algorithm confusion), and
 * {@code alg: none} is no algorithm here at all.
 */
final class TokenKeys implements AutoCloseable {

    /** The outcome of checking a signature. */
    enum Check { VERIFIED, FAILED, UNAVAILABLE }

    private final MACVerifier mac;
    private final List<JWK> fixed;
    private final JwksEndpoint endpoint;

    /**
     * @param hmacSecret the shared secret, or null
     * @param fixed      public keys read at start (PEM file, JWK set file)
     * @param endpoint   the JWK set fetched from a URL, or null
     */
    TokenKeys(String hmacSecret, List<JWK> fixed, JwksEndpoint endpoint) {
        try {
            this.mac = hmacSecret == null ? null : new MACVerifier(hmacSecret.getBytes(StandardCharsets.UTF_8));
        } catch (JOSEException e) {
            throw new IllegalArgumentException("HMAC secret: " + e.getMessage(), e);
        }
        this.fixed = List.copyOf(fixed);
        this.endpoint = endpoint;
    }

    Check check(JWSObject jws) {
        JWSAlgorithm alg = jws.getHeader().getAlgorithm();
        if (JWSAlgorithm.Family.HMAC_SHA.contains(alg)) {
            return mac != null && verifies(mac, jws) ? Check.VERIFIED : Check.FAILED;
        }
        KeyType type = JWSAlgorithm.Family.RSA.contains(alg) ? KeyType.RSA
                : JWSAlgorithm.Family.EC.contains(alg) ? KeyType.EC : null;
        if (type == null) {
            return Check.FAILED; // EdDSA and anything else: no key of ours can verify it
        }
        if (anyVerifies(fixed, type, jws)) {
            return Check.VERIFIED;
        }
        if (endpoint == null) {
            return Check.FAILED;
        }
        String kid = jws.getHeader().getKeyID();
        List<JWK> held = endpoint.keys();
        if (held != null) {
            if (anyVerifies(held, type, jws)) {
                return Check.VERIFIED;
            }
            if (kid == null || hasKid(held, kid)) {
                return Check.FAILED; // the set we hold is the one that counts: nothing to fetch
            }
        }
        // A key ID we do not know (a rotated key), or no set yet: fetch, at most once per interval.
        List<JWK> now = endpoint.refetch();
        if (now != null && now != held && anyVerifies(now, type, jws)) {
            return Check.VERIFIED;
        }
        boolean keyMissing = now == null || kid != null && !hasKid(now, kid);
        return keyMissing && endpoint.unreachable() ? Check.UNAVAILABLE : Check.FAILED;
    }

    private static boolean hasKid(List<JWK> keys, String kid) {
        for (JWK k : keys) {
            if (kid.equals(k.getKeyID())) {
                return true;
            }
        }
        return false;
    }

    private static boolean anyVerifies(List<JWK> keys, KeyType type, JWSObject jws) {
        String kid = jws.getHeader().getKeyID();
        JWSAlgorithm alg = jws.getHeader().getAlgorithm();
        for (JWK k : keys) {
            if (!type.equals(k.getKeyType())
                    || k.getAlgorithm() != null && !k.getAlgorithm().equals(alg)
                    || kid != null && k.getKeyID() != null && !kid.equals(k.getKeyID())) {
                continue;
            }
            JWSVerifier verifier = verifier(k);
            if (verifier != null && verifies(verifier, jws)) {
                return true;
            }
        }
        return false;
    }

    private static JWSVerifier verifier(JWK k) {
        try {
            if (k instanceof RSAKey rsa) {
                return new RSASSAVerifier(rsa);
            }
            if (k instanceof ECKey ec) {
                return new ECDSAVerifier(ec); // checks that the token's alg fits the key's curve
            }
        } catch (JOSEException e) {
            return null;
        }
        return null;
    }

    private static boolean verifies(JWSVerifier verifier, JWSObject jws) {
        try {
            return jws.verify(verifier);
        } catch (JOSEException | IllegalStateException e) {
            return false; // an algorithm the key cannot do (HS512 with a 256-bit secret, ES384 on P-256)
        }
    }

    @Override
    public void close() {
        if (endpoint != null) {
            endpoint.close();
        }
    }
}
