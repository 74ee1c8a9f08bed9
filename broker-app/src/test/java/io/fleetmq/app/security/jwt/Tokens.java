package io.fleetmq.app.security.jwt;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PublicKey;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.function.Consumer;

/** Keys and signed tokens for tests, made the way an issuer makes them. */
final class Tokens {

    static final String SECRET = "0123456789abcdef0123456789abcdef-test-secret";

    private Tokens() {
    }

    static KeyPair rsa() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
            g.initialize(2048);
            return g.generateKeyPair();
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    static KeyPair ec() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"));
            return g.generateKeyPair();
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Claims valid for an hour from {@code now}, for client {@code sub}, changed by {@code more}. */
    static JWTClaimsSet claims(Instant now, String sub, Consumer<JWTClaimsSet.Builder> more) {
        JWTClaimsSet.Builder b = new JWTClaimsSet.Builder().subject(sub).issueTime(java.util.Date.from(now))
                .expirationTime(java.util.Date.from(now.plusSeconds(3600)));
        more.accept(b);
        return b.build();
    }

    static String hmac(String secret, JWTClaimsSet claims) {
        return sign(JWSAlgorithm.HS256, null, signer(() -> new MACSigner(secret.getBytes(StandardCharsets.UTF_8))),
                claims);
    }

    static String rs256(KeyPair keys, String kid, JWTClaimsSet claims) {
        return sign(JWSAlgorithm.RS256, kid, signer(() -> new RSASSASigner((RSAPrivateKey) keys.getPrivate())), claims);
    }

    static String es256(KeyPair keys, String kid, JWTClaimsSet claims) {
        return sign(JWSAlgorithm.ES256, kid, signer(() -> new ECDSASigner((ECPrivateKey) keys.getPrivate())), claims);
    }

    /** An unsecured token: header {@code {"alg":"none"}}, the claims, an empty signature. */
    static String unsecured(JWTClaimsSet claims) {
        return Base64URL.encode("{\"alg\":\"none\"}") + "." + Base64URL.encode(claims.toString()) + ".";
    }

    static String sign(JWSAlgorithm alg, String kid, JWSSigner signer, JWTClaimsSet claims) {
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(alg).keyID(kid).build(), claims);
        try {
            jwt.sign(signer);
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
        return jwt.serialize();
    }

    interface SignerMaker {
        JWSSigner make() throws JOSEException;
    }

    static JWSSigner signer(SignerMaker m) {
        try {
            return m.make();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code key} as a PEM {@code PUBLIC KEY} block. */
    static String pem(PublicKey key) {
        return "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(key.getEncoded())
                + "\n-----END PUBLIC KEY-----\n";
    }

    static Path write(Path dir, String name, String text) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, text);
        return p;
    }

    /** A JWK set of the public parts of RSA key pairs, keyed by ID. */
    static String jwks(java.util.Map<String, KeyPair> rsaKeys) {
        List<com.nimbusds.jose.jwk.JWK> keys = new java.util.ArrayList<>();
        rsaKeys.forEach((kid, kp) -> keys.add(new RSAKey.Builder((RSAPublicKey) kp.getPublic()).keyID(kid).build()));
        return new JWKSet(keys).toString();
    }

    static String jwksEc(String kid, KeyPair kp) {
        return new JWKSet(new ECKey.Builder(Curve.P_256, (ECPublicKey) kp.getPublic()).keyID(kid).build()).toString();
    }
}
