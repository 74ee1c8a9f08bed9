package io.fleetmq.app.security.jwt;

import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyType;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.RSAKey;
import io.fleetmq.app.config.ConfigException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Verification keys read from files at start: PEM public keys and certificates, JWK sets. */
final class KeyFiles {

    private static final Pattern PEM = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*?)-----END \\1-----");

    private KeyFiles() {
    }

    /**
     * The RSA and EC public keys of a PEM file: {@code PUBLIC KEY} blocks (X.509 SubjectPublicKeyInfo)
     * and {@code CERTIFICATE} blocks, as many as it holds.
     *
     * @throws ConfigException naming {@code setting} when the file cannot be read or holds no usable key
     */
    static List<JWK> pem(Path file, String setting) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new ConfigException("setting " + setting + ": cannot read " + file + ": " + e.getMessage(), e);
        }
        List<JWK> keys = new ArrayList<>();
        Matcher m = PEM.matcher(text);
        while (m.find()) {
            String type = m.group(1);
            byte[] der;
            try {
                der = Base64.getMimeDecoder().decode(m.group(2));
            } catch (IllegalArgumentException e) {
                throw unreadable(file, setting, "a " + type + " block is not valid Base64");
            }
            PublicKey key = switch (type) {
                case "PUBLIC KEY" -> publicKey(der, file, setting);
                case "CERTIFICATE" -> certificateKey(der, file, setting);
                case "RSA PUBLIC KEY" -> throw unreadable(file, setting, "holds a PKCS#1 'RSA PUBLIC KEY';"
                        + " convert it with: openssl rsa -RSAPublicKey_in -in <file> -pubout");
                default -> throw unreadable(file, setting, "holds a '" + type + "' block; expected PUBLIC KEY or"
                        + " CERTIFICATE (never a private key)");
            };
            keys.add(jwk(key, file, setting));
        }
        if (keys.isEmpty()) {
            throw unreadable(file, setting, "holds no PEM 'PUBLIC KEY' or 'CERTIFICATE' block");
        }
        return List.copyOf(keys);
    }

    /**
     * The RSA and EC public keys of a JWK set file; other keys (symmetric ones, encryption keys) are
     * left out.
     *
     * @throws ConfigException naming {@code setting} when the file cannot be read or holds no usable key
     */
    static List<JWK> jwks(Path file, String setting) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ConfigException("setting " + setting + ": cannot read " + file + ": " + e.getMessage(), e);
        }
        List<JWK> keys;
        try {
            keys = usable(JWKSet.parse(text));
        } catch (ParseException e) {
            throw unreadable(file, setting, "is not a JWK set: " + e.getMessage());
        }
        if (keys.isEmpty()) {
            throw unreadable(file, setting, "holds no RSA or EC signature key");
        }
        return keys;
    }

    /**
     * The keys of {@code set} that can verify signatures, public parts only: RSA and EC keys not
     * meant for encryption. Symmetric keys are never taken from a JWK set (a shared secret does not
     * belong in a published document; {@code auth.jwt.hmac-secret} is the place for one).
     */
    static List<JWK> usable(JWKSet set) {
        List<JWK> keys = new ArrayList<>();
        for (JWK k : set.getKeys()) {
            boolean signing = k.getKeyUse() == null || KeyUse.SIGNATURE.equals(k.getKeyUse());
            if (signing && (KeyType.RSA.equals(k.getKeyType()) || KeyType.EC.equals(k.getKeyType()))) {
                keys.add(k.toPublicJWK());
            }
        }
        return List.copyOf(keys);
    }

    private static PublicKey publicKey(byte[] der, Path file, String setting) {
        for (String algorithm : List.of("RSA", "EC")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePublic(new X509EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                // not this algorithm: try the next
            }
        }
        throw unreadable(file, setting, "holds a PUBLIC KEY that is neither RSA nor EC");
    }

    private static PublicKey certificateKey(byte[] der, Path file, String setting) {
        try {
            X509Certificate c = (X509Certificate) CertificateFactory.getInstance("X.509")
                    .generateCertificate(new ByteArrayInputStream(der));
            return c.getPublicKey();
        } catch (GeneralSecurityException e) {
            throw unreadable(file, setting, "holds a CERTIFICATE that cannot be read: " + e.getMessage());
        }
    }

    private static JWK jwk(PublicKey key, Path file, String setting) {
        if (key instanceof RSAPublicKey rsa) {
            return new RSAKey.Builder(rsa).keyUse(KeyUse.SIGNATURE).build();
        }
        if (key instanceof ECPublicKey ec) {
            try {
                return new ECKey.Builder(com.nimbusds.jose.jwk.Curve.forECParameterSpec(ec.getParams()), ec)
                        .keyUse(KeyUse.SIGNATURE).build();
            } catch (RuntimeException e) {
                throw unreadable(file, setting, "holds an EC key on a curve JWS does not use (P-256, P-384, P-521)");
            }
        }
        throw unreadable(file, setting, "holds a " + key.getAlgorithm() + " key; only RSA and EC keys verify tokens");
    }

    private static ConfigException unreadable(Path file, String setting, String why) {
        return new ConfigException("setting " + setting + ": " + file + " " + why);
    }
}
