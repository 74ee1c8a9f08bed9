package io.fleetmq.app.security;

import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.core.security.TopicRules;
import io.fleetmq.session.ClientAccess;

/**
 * A client's rights as its credential's rules (or the anonymous rules) give them, with its client ID,
 * user name and certificate common name filled in for the placeholders.
 *
 * @param commonName the subject CN of the client's own TLS certificate, or null
 */
record RuleAccess(String credentialId, String username, String clientId, String commonName, TopicRules publish,
        TopicRules subscribe, boolean disconnectOnDenied, java.time.Instant expiresAt) implements ClientAccess {

    RuleAccess(String credentialId, String username, String clientId, String commonName, TopicRules publish,
            TopicRules subscribe, boolean disconnectOnDenied) {
        this(credentialId, username, clientId, commonName, publish, subscribe, disconnectOnDenied, null);
    }

    /** No rights at all: what a client keeps between losing its credential and its disconnection. */
    static RuleAccess none(String clientId, String username) {
        return new RuleAccess(null, username, clientId, null, TopicRules.of(java.util.List.of()),
                TopicRules.of(java.util.List.of()), false);
    }

    @Override
    public ReasonCode authorizePublish(String topic, int qos, boolean retain) {
        return publish.allowsPublish(topic, clientId, username, commonName) ? ReasonCode.SUCCESS : ReasonCode.NOT_AUTHORIZED;
    }

    @Override
    public ReasonCode authorizeSubscribe(String filter, int qos) {
        return subscribe.allowsSubscribe(filter, clientId, username, commonName) ? ReasonCode.SUCCESS : ReasonCode.NOT_AUTHORIZED;
    }
}
