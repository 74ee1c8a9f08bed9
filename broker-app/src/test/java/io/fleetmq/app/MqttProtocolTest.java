package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5DisconnectException;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5PubAckException;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAck;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5PayloadFormatIndicator;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5PublishResult;
import com.hivemq.client.mqtt.mqtt5.message.publish.puback.Mqtt5PubAckReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.subscribe.Mqtt5RetainHandling;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.RawMqtt;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * MQTT behaviour of one node over real TCP, with a real client library (HiveMQ's) and raw bytes
 * where a library would not send the violation. Every PUBLISH goes through the node's Kafka topic.
 */
class MqttProtocolTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;
    private static int port;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of());
        port = broker.mqttPort();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static Mqtt5BlockingClient v5(String id) {
        return Mqtt5Client.builder().identifier(id).serverHost("127.0.0.1").serverPort(port).buildBlocking();
    }

    private static Mqtt3BlockingClient v3(String id) {
        return Mqtt3Client.builder().identifier(id).serverHost("127.0.0.1").serverPort(port).buildBlocking();
    }

    private static Mqtt5Publish receive(Mqtt5BlockingClient.Mqtt5Publishes publishes) throws InterruptedException {
        Optional<Mqtt5Publish> p = publishes.receive(20, TimeUnit.SECONDS);
        assertTrue(p.isPresent(), "a message within 20 s");
        return p.get();
    }

    @Test
    void publishAtEveryQosReachesTheSubscriberWithAllProperties() throws Exception {
        Mqtt5BlockingClient sub = v5("props-sub");
        Mqtt5BlockingClient pub = v5("props-pub");
        sub.connect();
        pub.connect();
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter("props/#").qos(MqttQos.EXACTLY_ONCE).send();
            for (MqttQos qos : MqttQos.values()) {
                Mqtt5PublishResult result = pub.publishWith().topic("props/" + qos.getCode()).qos(qos)
                        .payload(("q" + qos.getCode()).getBytes(StandardCharsets.UTF_8))
                        .contentType("text/plain")
                        .responseTopic("replies/1")
                        .correlationData("corr".getBytes(StandardCharsets.UTF_8))
                        .payloadFormatIndicator(Mqtt5PayloadFormatIndicator.UTF_8)
                        .messageExpiryInterval(3600)
                        .userProperties().add("b", "2").add("a", "1").add("b", "3").applyUserProperties()
                        .send();
                assertFalse(result.getError().isPresent(), "acknowledged");
                Mqtt5Publish m = receive(publishes);
                assertEquals("props/" + qos.getCode(), m.getTopic().toString());
                assertEquals(qos, m.getQos());
                assertEquals("q" + qos.getCode(), new String(m.getPayloadAsBytes(), StandardCharsets.UTF_8));
                assertEquals("text/plain", m.getContentType().orElseThrow().toString());
                assertEquals("replies/1", m.getResponseTopic().orElseThrow().toString());
                assertEquals(ByteBuffer.wrap("corr".getBytes(StandardCharsets.UTF_8)), m.getCorrelationData().orElseThrow());
                assertEquals(Mqtt5PayloadFormatIndicator.UTF_8, m.getPayloadFormatIndicator().orElseThrow());
                long expiry = m.getMessageExpiryInterval().orElseThrow();
                assertTrue(expiry <= 3600 && expiry > 3000, "expiry counted down, not reset: " + expiry);
                // [MQTT-3.3.2-18] user properties in the order they were sent, duplicates kept.
                assertEquals(List.of("b=2", "a=1", "b=3"), m.getUserProperties().asList().stream()
                        .map(u -> u.getName() + "=" + u.getValue()).toList());
                assertFalse(m.isRetain());
            }
        }
        sub.disconnect();
        pub.disconnect();
    }

    @Test
    void clientsOverWebSocketAndTcpExchangeMessages() throws Exception {
        Mqtt5BlockingClient web = Mqtt5Client.builder().identifier("ws-client").serverHost("127.0.0.1")
                .serverPort(broker.node().mqttPort("WebSocket"))
                .webSocketConfig().serverPath("mqtt").applyWebSocketConfig()
                .buildBlocking();
        web.connect();
        Mqtt5BlockingClient tcp = v5("ws-peer");
        tcp.connect();
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = web.publishes(MqttGlobalPublishFilter.ALL)) {
            web.subscribeWith().topicFilter("ws/t").qos(MqttQos.AT_LEAST_ONCE).send();
            tcp.publishWith().topic("ws/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {42}).send();
            assertArrayEquals(new byte[] {42}, receive(publishes).getPayloadAsBytes());
        }
        web.disconnect();
        tcp.disconnect();
    }

    @Test
    void mqtt311AndMqtt5ClientsExchangeMessages() throws Exception {
        Mqtt3BlockingClient old = v3("interop-v3");
        Mqtt5BlockingClient modern = v5("interop-v5");
        old.connect();
        modern.connect();
        try (Mqtt3BlockingClient.Mqtt3Publishes oldIn = old.publishes(MqttGlobalPublishFilter.ALL);
             Mqtt5BlockingClient.Mqtt5Publishes modernIn = modern.publishes(MqttGlobalPublishFilter.ALL)) {
            old.subscribeWith().topicFilter("interop/to-v3").qos(MqttQos.AT_LEAST_ONCE).send();
            modern.subscribeWith().topicFilter("interop/to-v5").qos(MqttQos.AT_LEAST_ONCE).send();
            modern.publishWith().topic("interop/to-v3").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {5}).send();
            old.publishWith().topic("interop/to-v5").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {3}).send();
            assertArrayEquals(new byte[] {5}, oldIn.receive(20, TimeUnit.SECONDS).orElseThrow().getPayloadAsBytes());
            assertArrayEquals(new byte[] {3}, receive(modernIn).getPayloadAsBytes());
        }
        old.disconnect();
        modern.disconnect();
    }

    @Test
    void wildcardsMatchLevelsAndDollarTopicsAreNotMatchedByALeadingWildcard() throws Exception {
        Mqtt5BlockingClient sub = v5("wild-sub");
        Mqtt5BlockingClient pub = v5("wild-pub");
        sub.connect();
        pub.connect();
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            // Retain Handling 2: other tests' retained messages are not sent on subscribe.
            sub.subscribeWith().topicFilter("#").qos(MqttQos.AT_LEAST_ONCE)
                    .retainHandling(Mqtt5RetainHandling.DO_NOT_SEND).send();
            sub.subscribeWith().topicFilter("wild/+/temp").qos(MqttQos.AT_LEAST_ONCE).send();
            // [MQTT-4.7.2-1] '#' does not match a topic starting with '$'.
            pub.publishWith().topic("$internal/x").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {0}).send();
            pub.publishWith().topic("wild/dev1/temp").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            Mqtt5Publish first = receive(publishes);
            assertEquals("wild/dev1/temp", first.getTopic().toString(), "the $ topic was not delivered");
            // Two overlapping subscriptions: one copy [MQTT-3.3.4-2].
            pub.publishWith().topic("wild/after").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {2}).send();
            assertEquals("wild/after", receive(publishes).getTopic().toString());
        }
        sub.disconnect();
        pub.disconnect();
    }

    @Test
    void overlappingSubscriptionsDeliverOneCopyAtTheHighestQos() throws Exception {
        Mqtt5BlockingClient sub = v5("ids-sub");
        Mqtt5BlockingClient pub = v5("ids-pub");
        sub.connect();
        pub.connect();
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter("ids/+").qos(MqttQos.AT_MOST_ONCE).send();
            sub.subscribeWith().topicFilter("ids/#").qos(MqttQos.AT_LEAST_ONCE).send();
            pub.publishWith().topic("ids/a").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            Mqtt5Publish m = receive(publishes);
            assertEquals(MqttQos.AT_LEAST_ONCE, m.getQos(), "the highest granted QoS [MQTT-3.3.4-2]");
            assertTrue(publishes.receive(1, TimeUnit.SECONDS).isEmpty(), "exactly one copy");
        }
        sub.disconnect();
        pub.disconnect();
    }

    @Test
    void retainedMessagesAreSentOnSubscribeAndAnEmptyPayloadDeletesThem() throws Exception {
        Mqtt5BlockingClient pub = v5("ret-pub");
        pub.connect();
        pub.publishWith().topic("ret/a").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload("kept".getBytes()).send();

        Mqtt5BlockingClient sub = v5("ret-sub");
        sub.connect();
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            // The retained index follows Kafka, so a subscription made right after the publish may
            // still get the live copy (retain flag clear, [MQTT-3.3.1-12]); a fresh subscription
            // after that gets the retained one.
            Mqtt5Publish m = null;
            for (int attempt = 0; attempt < 50 && (m == null || !m.isRetain()); attempt++) {
                sub.subscribeWith().topicFilter("ret/#").qos(MqttQos.AT_LEAST_ONCE).send();
                m = publishes.receive(200, TimeUnit.MILLISECONDS).orElse(null);
                sub.unsubscribeWith().topicFilter("ret/#").send();
            }
            assertTrue(m != null && m.isRetain(), "[MQTT-3.3.1-8] retained message, retain flag set, on subscribe");
            assertEquals("kept", new String(m.getPayloadAsBytes(), StandardCharsets.UTF_8));
        }
        pub.publishWith().topic("ret/a").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload(new byte[0]).send();
        Mqtt5BlockingClient late = v5("ret-late");
        late.connect();
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = late.publishes(MqttGlobalPublishFilter.ALL)) {
            boolean gone = false;
            for (int attempt = 0; attempt < 50 && !gone; attempt++) {
                late.subscribeWith().topicFilter("ret/#").qos(MqttQos.AT_LEAST_ONCE).send();
                gone = publishes.receive(200, TimeUnit.MILLISECONDS).isEmpty();
                late.unsubscribeWith().topicFilter("ret/#").send();
            }
            assertTrue(gone, "[MQTT-3.3.1-6] an empty retained payload removes the retained message");
        }
        pub.disconnect();
        sub.disconnect();
        late.disconnect();
    }

    @Test
    void theWillIsPublishedWhenTheConnectionDropsButNotAfterANormalDisconnect() throws Exception {
        Mqtt5BlockingClient watcher = v5("will-watcher");
        watcher.connect();
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = watcher.publishes(MqttGlobalPublishFilter.ALL)) {
            watcher.subscribeWith().topicFilter("will/#").qos(MqttQos.AT_LEAST_ONCE).send();

            Mqtt5BlockingClient polite = v5("will-polite");
            polite.connectWith().willPublish().topic("will/polite").payload("gone".getBytes()).applyWillPublish().send();
            polite.disconnect(); // normal DISCONNECT: the will is discarded [MQTT-3.1.2-10]

            try (RawMqtt rude = RawMqtt.connect(port)) {
                rude.send(connectWithWill("will-rude", "will/rude", "lost"));
                String connack = rude.readHex();
                assertEquals("20", connack.substring(0, 2), connack);
                assertEquals("00", connack.substring(6, 8), "accepted: " + connack);
            } // socket closed without DISCONNECT

            Mqtt5Publish will = receive(publishes);
            assertEquals("will/rude", will.getTopic().toString());
            assertEquals("lost", new String(will.getPayloadAsBytes(), StandardCharsets.UTF_8));
            assertTrue(publishes.receive(1, TimeUnit.SECONDS).isEmpty(), "no will for the polite client");
        }
        watcher.disconnect();
    }

    @Test
    void aSecondConnectionWithTheSameClientIdTakesOverWith0x8E() throws Exception {
        CompletableFuture<Throwable> firstDropped = new CompletableFuture<>();
        Mqtt5BlockingClient first = Mqtt5Client.builder().identifier("twin").serverHost("127.0.0.1").serverPort(port)
                .addDisconnectedListener(ctx -> firstDropped.complete(ctx.getCause()))
                .buildBlocking();
        first.connect();
        Mqtt5BlockingClient second = v5("twin");
        second.connect();
        Throwable cause = firstDropped.get(20, TimeUnit.SECONDS);
        assertTrue(cause instanceof Mqtt5DisconnectException, String.valueOf(cause));
        assertEquals(Mqtt5DisconnectReasonCode.SESSION_TAKEN_OVER,
                ((Mqtt5DisconnectException) cause).getMqttMessage().getReasonCode());
        second.disconnect();
    }

    @Test
    void aPersistentSessionKeepsSubscriptionsAndQueuesQos1WhileOffline() throws Exception {
        Mqtt5BlockingClient sub = v5("persistent-sub");
        Mqtt5ConnAck ack = sub.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
        assertFalse(ack.isSessionPresent());
        sub.subscribeWith().topicFilter("persist/#").qos(MqttQos.AT_LEAST_ONCE).send();
        sub.disconnect();

        Mqtt5BlockingClient pub = v5("persistent-pub");
        pub.connect();
        for (int i = 0; i < 5; i++) {
            pub.publishWith().topic("persist/" + i).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {(byte) i}).send();
        }
        pub.disconnect();

        Mqtt5BlockingClient back = Mqtt5Client.builder().identifier("persistent-sub").serverHost("127.0.0.1")
                .serverPort(port).buildBlocking();
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = back.publishes(MqttGlobalPublishFilter.ALL)) {
            ack = back.connectWith().cleanStart(false).sessionExpiryInterval(300).send();
            assertTrue(ack.isSessionPresent(), "[MQTT-3.2.2-2] session present on resume");
            for (int i = 0; i < 5; i++) {
                assertArrayEquals(new byte[] {(byte) i}, receive(publishes).getPayloadAsBytes(), "in order");
            }
        }
        back.disconnectWith().sessionExpiryInterval(0).send();
    }

    @Test
    void noLocalSkipsTheSubscribersOwnMessages() throws Exception {
        Mqtt5BlockingClient c = v5("nolocal");
        c.connect();
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = c.publishes(MqttGlobalPublishFilter.ALL)) {
            c.subscribeWith().topicFilter("nolocal/t").qos(MqttQos.AT_LEAST_ONCE).noLocal(true).send();
            c.publishWith().topic("nolocal/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            Mqtt5BlockingClient other = v5("nolocal-other");
            other.connect();
            other.publishWith().topic("nolocal/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {2}).send();
            assertArrayEquals(new byte[] {2}, receive(publishes).getPayloadAsBytes(), "[MQTT-3.8.3-3]");
            other.disconnect();
        }
        c.disconnect();
    }

    @Test
    void invalidUtf8WithPayloadFormatIndicatorIsRefusedWith0x99() {
        Mqtt5BlockingClient c = v5("utf8");
        c.connect();
        Mqtt5PubAckException e = assertThrows(Mqtt5PubAckException.class, () -> c.publishWith().topic("utf8/t")
                .qos(MqttQos.AT_LEAST_ONCE)
                .payloadFormatIndicator(Mqtt5PayloadFormatIndicator.UTF_8)
                .payload(new byte[] {(byte) 0xC3, (byte) 0x28}).send());
        assertEquals(Mqtt5PubAckReasonCode.PAYLOAD_FORMAT_INVALID, e.getMqttMessage().getReasonCode());
        c.disconnect();
    }

    // ------------------------------------------------------------------ raw bytes

    @Test
    void theFirstPacketMustBeConnect() throws Exception {
        try (RawMqtt raw = RawMqtt.connect(port)) {
            raw.sendHex("c000"); // PINGREQ
            assertTrue(raw.closedByBroker(), "[MQTT-3.1.0-1]");
        }
    }

    @Test
    void anUnsupportedProtocolLevelGetsReturnCode1() throws Exception {
        try (RawMqtt raw = RawMqtt.connect(port)) {
            raw.send(RawMqtt.connect(6, "lvl6", "00"));
            assertEquals("20020001", raw.readHex());
            assertNull(raw.read());
        }
    }

    @Test
    void mqtt31ClientsConnectAndReceive() throws Exception {
        try (RawMqtt raw = RawMqtt.connect(port)) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            RawMqtt.writeString(body, "MQIsdp");
            body.writeBytes(new byte[] {3, 0x02, 0, 60});
            RawMqtt.writeString(body, "v31-client");
            raw.send(RawMqtt.packet(0x10, body.toByteArray()));
            assertEquals("20020000", raw.readHex(), "accepted");
            ByteArrayOutputStream sub = new ByteArrayOutputStream();
            sub.writeBytes(new byte[] {0, 1});
            RawMqtt.writeString(sub, "v31/t");
            sub.write(0);
            raw.send(RawMqtt.packet(0x82, sub.toByteArray()));
            assertEquals("9003000100", raw.readHex(), "SUBACK granting QoS 0");
            Mqtt5BlockingClient pub = v5("v31-pub");
            pub.connect();
            pub.publishWith().topic("v31/t").payload(new byte[] {0x31}).send();
            assertEquals("3008" + "0005" + "7633312f74" + "31", raw.readHex(), "PUBLISH without properties");
            pub.disconnect();
        }
    }

    @Test
    void anAuthenticationMethodIsRefusedWith0x8C() throws Exception {
        try (RawMqtt raw = RawMqtt.connect(port)) {
            // properties: authentication method (0x15) "SCRAM"
            raw.send(RawMqtt.connect(5, "auth", "08150005534352414d"));
            String connack = raw.readHex();
            assertEquals("8c", connack.substring(6, 8), connack);
            assertNull(raw.read());
        }
    }

    @Test
    void mqtt311EmptyClientIdWithoutCleanSessionIsRejected() throws Exception {
        try (RawMqtt raw = RawMqtt.connect(port)) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            RawMqtt.writeString(body, "MQTT");
            body.writeBytes(new byte[] {4, 0x00, 0, 60});
            RawMqtt.writeString(body, "");
            raw.send(RawMqtt.packet(0x10, body.toByteArray()));
            assertEquals("20020002", raw.readHex(), "[MQTT-3.1.3-8] identifier rejected");
        }
    }

    @Test
    void aTopicAliasAboveTheMaximumIsAProtocolViolation0x94() throws Exception {
        try (RawMqtt raw = RawMqtt.connect(port)) {
            raw.send(RawMqtt.connectV5("alias"));
            raw.read(); // CONNACK
            // PUBLISH QoS 0 topic "a", properties: topic alias (0x23) = 0xFFFF
            raw.sendHex("3008 0001 61 03 23ffff 78");
            String disconnect = raw.readHex();
            assertEquals("e0", disconnect.substring(0, 2), disconnect);
            assertEquals("94", disconnect.substring(4, 6), disconnect);
        }
    }

    @Test
    void aWildcardInAPublishTopicIsRefusedWith0x90() throws Exception {
        try (RawMqtt raw = RawMqtt.connect(port)) {
            raw.send(RawMqtt.connectV5("wildpub"));
            raw.read();
            raw.sendHex("3005 0001 23 00 78"); // topic "#"
            String disconnect = raw.readHex();
            assertEquals("e0", disconnect.substring(0, 2), disconnect);
            assertEquals("90", disconnect.substring(4, 6), disconnect);
        }
    }

    @Test
    void aMalformedPacketAfterConnectGetsDisconnect0x81() throws Exception {
        try (RawMqtt raw = RawMqtt.connect(port)) {
            raw.send(RawMqtt.connectV5("malformed"));
            raw.read();
            raw.sendHex("6002 0001"); // PUBREL with fixed header flags 0000 instead of 0010 [MQTT-3.6.1-1]
            String disconnect = raw.readHex();
            assertEquals("e0", disconnect.substring(0, 2), disconnect);
            assertEquals("81", disconnect.substring(4, 6), disconnect);
        }
    }

    private static byte[] connectWithWill(String clientId, String willTopic, String willPayload) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        RawMqtt.writeString(body, "MQTT");
        body.writeBytes(new byte[] {5, 0x06, 0, 60, 0}); // v5, will + clean start, keep alive 60, no properties
        RawMqtt.writeString(body, clientId);
        body.write(0); // will properties
        RawMqtt.writeString(body, willTopic);
        RawMqtt.writeString(body, willPayload);
        return RawMqtt.packet(0x10, body.toByteArray());
    }
}
