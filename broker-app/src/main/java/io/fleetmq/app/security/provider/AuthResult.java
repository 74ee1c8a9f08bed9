package io.fleetmq.app.security.provider;

import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.core.security.RefusedConnection;

/** A provider's answer to a CONNECT. */
public sealed interface AuthResult {

    /** The CONNECT is not for this provider (no credential of its kind applies): the next one decides. */
    record NotMine() implements AuthResult {
    }

    /**
     * Refused.
     *
     * @param code   the refusing CONNACK's reason code (0x86, 0x87, 0x88, ...)
     * @param reason the reason recorded in the log of refused connections ({@link RefusedConnection} constants)
     */
    record Denied(ReasonCode code, String reason) implements AuthResult {
    }

    /** Let in, as {@code identity}. */
    record Allowed(Identity identity) implements AuthResult {
    }

    NotMine NOT_MINE = new NotMine();

    static AuthResult badCredentials() {
        return new Denied(ReasonCode.BAD_USER_NAME_OR_PASSWORD, RefusedConnection.BAD_CREDENTIALS);
    }

    static AuthResult notAuthorized() {
        return new Denied(ReasonCode.NOT_AUTHORIZED, RefusedConnection.NOT_AUTHORIZED);
    }

    /** The provider cannot decide now (its service or database is away): 0x88 Server unavailable. */
    static AuthResult unavailable() {
        return new Denied(ReasonCode.SERVER_UNAVAILABLE, RefusedConnection.AUTH_UNAVAILABLE);
    }
}
