package io.fleetmq.bench.client;

import java.nio.charset.StandardCharsets;

/**
 * The user name and password every client of a run puts into its CONNECT; {@link #NONE} connects
 * anonymously. Either part may be absent on its own: MQTT 5 allows a password without a user name,
 * 3.1.1 does not [MQTT-3.1.2-22], which the option parser checks.
 *
 * @param username   null for none
 * @param password   null for none; sent as its UTF-8 bytes
 * @param authMethod null for a plain CONNECT; otherwise both are the SCRAM user name and password, used
 *                   through MQTT 5 enhanced authentication and never sent themselves (connect scenario only)
 */
public record Credentials(String username, String password, Scram.Algorithm authMethod) {

    public static final Credentials NONE = new Credentials(null, null);

    public Credentials(String username, String password) {
        this(username, password, null);
    }

    public Credentials {
        if (authMethod != null && (username == null || password == null)) {
            throw new IllegalArgumentException(authMethod.method() + " needs a user name and a password");
        }
    }

    public boolean anonymous() {
        return username == null && password == null;
    }

    byte[] passwordBytes() {
        return password == null ? null : password.getBytes(StandardCharsets.UTF_8);
    }

    /** For reports: who connected, never the password. */
    public String describe() {
        if (anonymous()) {
            return "anonymous";
        }
        return (username == null ? "no user name" : "user '" + username + "'")
                + (password == null ? ", no password" : " with password")
                + (authMethod == null ? "" : " via " + authMethod.method());
    }

    /** Kept out of logs and reports: a record would print the password. */
    @Override
    public String toString() {
        return describe();
    }
}
