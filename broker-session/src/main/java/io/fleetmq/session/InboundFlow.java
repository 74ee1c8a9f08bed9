package io.fleetmq.session;

import io.fleetmq.core.log.ClientText;
import io.fleetmq.core.log.LogLimit;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.Packet.Ack;
import io.fleetmq.core.mqtt.Packet.AckType;
import io.fleetmq.core.mqtt.ProtocolViolation;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.core.topic.InvalidTopicException;
import io.fleetmq.core.topic.TopicNames;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the client publishes: checked, stored in Kafka, and only then acknowledged (promise 1);
 * our Receive Maximum [MQTT-3.3.4-9], the client's topic aliases and its QoS 2 flows
 * ({@link InboundQos2}). Every PUBLISH is settled towards the transport exactly once.
 */
final class InboundFlow {

    private static final Logger log = LoggerFactory.getLogger(InboundFlow.class);

    /** Shared by every client: a storm of failures costs a few lines, see {@link LogLimit}. */
    private static final LogLimit LOG_LIMIT = new LogLimit(20, java.time.Duration.ofSeconds(10));

    private final String clientId;
    private final Traffic received;
    private final SessionServices services;
    private final Connection connection;
    private final InboundQos2 qos2;
    private final Supplier<ClientAccess> access;
    private final Consumer<Runnable> tell;
    private final LongSupplier sessionExpiry;
    private final BiConsumer<ReasonCode, String> disconnect;
    /** The client's topic aliases on this connection; null until its first (many clients use none). */
    private Map<Integer, String> aliases;
    /** QoS 1/2 PUBLISH received and not yet acknowledged by us (Receive Maximum, [MQTT-3.3.4-9]). */
    private int unacknowledged;

    /**
     * @param tell          runs a task in a later turn of the session's mailbox
     * @param sessionExpiry the session's expiry interval now
     * @param disconnect    ends the connection with a reason code (a DISCONNECT for MQTT 5), publishing its will
     */
    InboundFlow(String clientId, SessionServices services, Connection connection, InboundQos2 qos2, Supplier<ClientAccess> access,
            Consumer<Runnable> tell, LongSupplier sessionExpiry, BiConsumer<ReasonCode, String> disconnect) {
        this.clientId = clientId;
        this.received = Traffic.received(services.meters());
        this.services = services;
        this.connection = connection;
        this.qos2 = qos2;
        this.access = access;
        this.tell = tell;
        this.sessionExpiry = sessionExpiry;
        this.disconnect = disconnect;
    }

    /** A new connection: topic aliases and the receive window start afresh [MQTT-3.3.2-7]. */
    void connected() {
        aliases = null;
        unacknowledged = 0;
    }

    /** A PUBLISH from the current connection; settled now, or once Kafka answered. */
    void publish(Packet.Publish p) {
        ClientConnection from = connection.current();
        boolean handedToKafka = false;
        try {
            handedToKafka = check(p);
        } finally {
            if (!handedToKafka) {
                from.publishSettled();
            }
        }
    }

    /** Returns whether the message went to Kafka (and will be settled by {@link #onStored}). */
    private boolean check(Packet.Publish p) {
        String topic = resolveTopic(p);
        try {
            TopicNames.validateTopicName(topic);
        } catch (InvalidTopicException e) {
            throw new ProtocolViolation(ReasonCode.TOPIC_NAME_INVALID, e.getMessage());
        }
        if (p.responseTopic() != null) {
            try {
                TopicNames.validateTopicName(p.responseTopic()); // [MQTT-3.3.2-14] no wildcards
            } catch (InvalidTopicException e) {
                throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "Response Topic: " + e.getMessage());
            }
        }
        if (p.qos() > 0) {
            if (p.qos() == 2 && qos2.isResend(p.packetId(), p.dup())) {
                // A resend of a QoS 2 message we already have: acknowledge again, never store twice [MQTT-4.3.3-10].
                if (qos2.isStored(p.packetId())) {
                    connection.write(new Ack(AckType.PUBREC, p.packetId(), ReasonCode.SUCCESS, null));
                }
                return false;
            }
            if (unacknowledged >= services.limits().receiveMaximum()) {
                throw new ProtocolViolation(ReasonCode.RECEIVE_MAXIMUM_EXCEEDED,
                        "more than " + services.limits().receiveMaximum() + " unacknowledged QoS 1/2 messages");
            }
        }
        if (p.payloadFormat() == 1 && !isUtf8(p.payload())) {
            if (p.qos() == 0) {
                throw new ProtocolViolation(ReasonCode.PAYLOAD_FORMAT_INVALID, "payload is not valid UTF-8");
            }
            refuse(p, ReasonCode.PAYLOAD_FORMAT_INVALID, "payload is not valid UTF-8");
            return false;
        }
        ClientAccess rights = access.get();
        ReasonCode allowed = rights.authorizePublish(topic, p.qos(), p.retain());
        if (allowed.isError()) {
            services.drops().count(MessageDrops.Reason.NOT_AUTHORIZED, clientId, topic);
            if (rights.disconnectOnDenied()) {
                disconnect.accept(allowed, "not authorized to publish to " + topic);
            } else if (p.qos() > 0) {
                // MQTT 5: PUBACK/PUBREC 0x87. 3.1.1 has no code for it: the PUBLISH is acknowledged and dropped.
                refuse(p, connection.version().isV5() ? allowed : ReasonCode.SUCCESS, "not authorized");
            }
            return false;
        }
        BrokerMessage message = new BrokerMessage(topic, p.payload(), p.qos(), p.retain(), clientId,
                services.clock().getAsLong(), p.messageExpirySeconds(), p.payloadFormat(), p.contentType(),
                p.responseTopic(), p.correlationData(), p.userProperties());
        // The cluster's bounds on retained messages: 0x97 where the publisher can be told, else not retained.
        RetainedAdmission.Decision admitted = RetainedAdmission.admit(services, message,
                connection.version().isV5() && p.qos() > 0);
        if (admitted.refused()) {
            refuse(p, ReasonCode.QUOTA_EXCEEDED, admitted.refusal());
            return false;
        }
        message = admitted.message();
        if (p.qos() == 2) {
            qos2.storing(p.packetId());
        }
        if (p.qos() > 0) {
            unacknowledged++;
        }
        ClientConnection from = connection.current();
        String stored = message.topic(); // the PUBLISH may have named it by alias
        received.count(p.qos(), message.payload().length);
        services.publishLog().append(message).whenComplete((ok, error) -> {
            // Settled as soon as Kafka answered, here rather than in the session's turn: exactly once
            // per PUBLISH, also when the session ended meanwhile and its mailbox takes nothing more.
            from.publishSettled();
            tell.accept(() -> onStored(from, p, stored, error));
        });
        return true;
    }

    /** Answers a QoS 1/2 PUBLISH that is not stored with an error reason code. */
    private void refuse(Packet.Publish p, ReasonCode code, String reason) {
        connection.write(new Ack(p.qos() == 1 ? AckType.PUBACK : AckType.PUBREC, p.packetId(), code,
                connection.reasonString(reason)));
    }

    /** Kafka answered for an incoming PUBLISH: only now is it acknowledged (promise 1). */
    private void onStored(ClientConnection from, Packet.Publish p, String topic, Throwable error) {
        if (error != null) {
            services.drops().count(MessageDrops.Reason.PUBLISH_NOT_STORED, clientId, topic);
            if (LOG_LIMIT.allow()) {
                log.warn("{}: PUBLISH to {} not stored in Kafka: {}{}",
                        ClientText.of(clientId), ClientText.of(topic), error.toString(), LOG_LIMIT.suppressedNote());
            }
        }
        CompletableFuture<Void> recorded = p.qos() < 2 ? InboundQos2.DONE
                : qos2.settled(p.packetId(), error == null, sessionExpiry.getAsLong());
        if (!connection.is(from)) {
            return; // the client left; a QoS 1/2 publisher resends on reconnect
        }
        // The receive window frees a QoS 1 slot with PUBACK, a QoS 2 slot with PUBCOMP, or when the
        // flow ends on an error PUBREC (section 4.9, Flow Control).
        if (p.qos() == 1 || p.qos() == 2 && error != null) {
            unacknowledged--;
        }
        if (error != null && !from.version().isV5()) {
            // 3.1.1 has no way to say "not stored" in an acknowledgement: end the connection so
            // the client resends, rather than acknowledging what was not stored.
            disconnect.accept(ReasonCode.UNSPECIFIED_ERROR, null);
            return;
        }
        if (p.qos() == 0) {
            return;
        }
        ReasonCode code = error == null ? ReasonCode.SUCCESS : ReasonCode.UNSPECIFIED_ERROR;
        String reason = error == null ? null : connection.reasonString("message not stored: " + error.getMessage());
        Ack ack = new Ack(p.qos() == 1 ? AckType.PUBACK : AckType.PUBREC, p.packetId(), code, reason);
        if (recorded.isDone()) {
            connection.write(from, ack);
        } else { // PUBREC waits until the receipt is in Redis (see InboundQos2#settled)
            recorded.thenRun(() -> tell.accept(() -> {
                if (connection.is(from)) {
                    connection.write(from, ack);
                }
            }));
        }
    }

    /** PUBREL from the client: the QoS 2 flow ends with our PUBCOMP. */
    void released(int packetId) {
        if (qos2.heldWindow(packetId)) {
            unacknowledged = Math.max(0, unacknowledged - 1);
        }
        boolean known = qos2.released(packetId, sessionExpiry.getAsLong());
        // [MQTT-4.3.3-11] after PUBREL the ID may be reused; PUBCOMP either way.
        connection.write(new Ack(AckType.PUBCOMP, packetId,
                known ? ReasonCode.SUCCESS : ReasonCode.PACKET_IDENTIFIER_NOT_FOUND, null));
    }

    private String resolveTopic(Packet.Publish p) {
        int alias = p.topicAlias();
        if (alias <= 0) {
            if (p.topic().isEmpty()) {
                throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "empty topic without a topic alias");
            }
            return p.topic();
        }
        if (alias > services.limits().topicAliasMaximum()) {
            throw new ProtocolViolation(ReasonCode.TOPIC_ALIAS_INVALID,
                    "topic alias " + alias + " above the maximum " + services.limits().topicAliasMaximum()); // [MQTT-3.3.2-9]
        }
        if (!p.topic().isEmpty()) {
            if (aliases == null) {
                aliases = new HashMap<>();
            }
            aliases.put(alias, p.topic());
            return p.topic();
        }
        String known = aliases == null ? null : aliases.get(alias);
        if (known == null) {
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "unknown topic alias " + alias);
        }
        return known;
    }

    private static boolean isUtf8(byte[] bytes) {
        try {
            StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }
}
