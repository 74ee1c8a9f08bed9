package io.fleetmq.app.security.provider;

import java.security.cert.X509Certificate;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

/** The subject common name (CN) of certificates. */
public final class CommonNames {

    private CommonNames() {
    }

    /** The CN of {@code certificate}'s subject (the most specific one if several), or null. */
    public static String of(X509Certificate certificate) {
        try {
            LdapName name = new LdapName(certificate.getSubjectX500Principal().getName());
            String cn = null;
            for (Rdn rdn : name.getRdns()) { // from the least to the most specific
                if ("CN".equalsIgnoreCase(rdn.getType())) {
                    cn = rdn.getValue().toString();
                }
            }
            return cn;
        } catch (InvalidNameException e) {
            return null;
        }
    }
}
