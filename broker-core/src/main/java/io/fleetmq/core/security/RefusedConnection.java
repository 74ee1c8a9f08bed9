package io.fleetmq.core.security;

import java.time.Instant;

/**
 * A connection the broker refused, as the log of refused connections keeps it: one entry per
 * client ID with its latest details and how often it was refused. Never holds a password.
 *
 * @param clientId      the CONNECT's client ID ("" if it had none)
 * @param username      the CONNECT's user name, or null
 * @param address       the client's IP address
 * @param passwordGiven whether the CONNECT carried a password
 * @param tls           whether the connection was over TLS
 * @param reason        why: one of the {@code REASON_*} constants
 * @param firstAt       the first refusal still kept
 * @param lastAt        the latest refusal
 * @param count         refusals since {@code firstAt}
 */
public record RefusedConnection(String clientId, String username, String address, boolean passwordGiven,
        boolean tls, String reason, Instant firstAt, Instant lastAt, long count) {

    public static final String BAD_CREDENTIALS = "bad_credentials";
    public static final String NOT_AUTHORIZED = "not_authorized";
    public static final String BLOCKED = "blocked";
    public static final String ANONYMOUS_REFUSED = "anonymous_refused";
    public static final String AUTH_UNAVAILABLE = "auth_unavailable";
    public static final String AUTH_BUSY = "auth_busy";
    /** An enhanced authentication with a method the node does not offer (CONNACK 0x8C). */
    public static final String BAD_AUTH_METHOD = "bad_auth_method";
}
