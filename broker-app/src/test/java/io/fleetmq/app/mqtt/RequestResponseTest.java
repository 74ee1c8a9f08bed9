package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5PubAckException;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5PayloadFormatIndicator;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import com.hivemq.client.mqtt.mqtt5.message.publish.puback.Mqtt5PubAckReasonCode;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.RawMqtt;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Request / response (4.10): Response Information from CONNACK, Response Topic and Correlation
 * Data forwarded unaltered, user properties in order, and the payload format check (0x99).
 */
class RequestResponseTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    @DisplayName("[MQTT-3.1.2-28] [MQTT-3.3.2-15] [MQTT-3.3.2-16] [MQTT-3.3.2-17] [MQTT-3.3.2-18] a request and its response under the Response Information prefix")
    void aRequestAndItsResponse() throws Exception {
        Mqtt5BlockingClient requester = broker.v5("requester");
        String prefix = requester.connectWith().restrictions().requestResponseInformation(true).applyRestrictions()
                .send().getResponseInformation().orElseThrow().toString();
        Mqtt5BlockingClient responder = broker.connectedV5("responder");
        try (Mqtt5BlockingClient.Mqtt5Publishes requests = responder.publishes(MqttGlobalPublishFilter.ALL);
             Mqtt5BlockingClient.Mqtt5Publishes responses = requester.publishes(MqttGlobalPublishFilter.ALL)) {
            responder.subscribeWith().topicFilter("service/time").qos(MqttQos.AT_LEAST_ONCE).send();
            requester.subscribeWith().topicFilter(prefix + "/#").qos(MqttQos.AT_LEAST_ONCE).send();

            byte[] correlation = {0, 1, 2, (byte) 0xFF};
            requester.publishWith().topic("service/time").qos(MqttQos.AT_LEAST_ONCE)
                    .responseTopic(prefix + "/time").correlationData(correlation)
                    .userProperties().add("z", "1").add("a", "2").add("z", "3").applyUserProperties()
                    .payload("what time is it".getBytes(StandardCharsets.UTF_8)).send();
            Mqtt5Publish request = Received.next(requests);
            assertEquals(prefix + "/time", request.getResponseTopic().orElseThrow().toString());
            assertEquals(ByteBuffer.wrap(correlation), request.getCorrelationData().orElseThrow());
            assertEquals(List.of("z=1", "a=2", "z=3"), request.getUserProperties().asList().stream()
                    .map(u -> u.getName() + "=" + u.getValue()).toList());

            responder.publishWith().topic(request.getResponseTopic().orElseThrow()).qos(MqttQos.AT_LEAST_ONCE)
                    .correlationData(request.getCorrelationData().orElseThrow())
                    .payload("noon".getBytes(StandardCharsets.UTF_8)).send();
            Mqtt5Publish response = Received.next(responses);
            assertEquals("response/requester/time", response.getTopic().toString());
            assertEquals(ByteBuffer.wrap(correlation), response.getCorrelationData().orElseThrow());
            assertArrayEquals("noon".getBytes(StandardCharsets.UTF_8), response.getPayloadAsBytes());
        }
        requester.disconnect();
        responder.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.3.2-14] a Response Topic with a wildcard: DISCONNECT 0x82")
    void aWildcardResponseTopicIsAProtocolError() throws Exception {
        try (RawMqtt raw = broker.rawV5("bad-response-topic")) {
            // properties: Response Topic (0x08) "r/#"
            raw.send(RawMqtt.publishV5("rr/t", 0, 0, "08 0003 722f23", new byte[] {1}));
            byte[] disconnect = raw.readType(14);
            assertEquals(0x82, disconnect[2] & 0xFF);
        }
    }

    @Test
    @DisplayName("3.3.2.3.2 payload format indicator 1 with a payload that is not UTF-8: PUBACK 0x99")
    void invalidUtf8WithPayloadFormatIndicatorIsRefusedWith0x99() {
        Mqtt5BlockingClient c = broker.connectedV5("utf8");
        Mqtt5PubAckException e = assertThrows(Mqtt5PubAckException.class, () -> c.publishWith().topic("utf8/t")
                .qos(MqttQos.AT_LEAST_ONCE)
                .payloadFormatIndicator(Mqtt5PayloadFormatIndicator.UTF_8)
                .payload(new byte[] {(byte) 0xC3, (byte) 0x28}).send());
        assertEquals(Mqtt5PubAckReasonCode.PAYLOAD_FORMAT_INVALID, e.getMqttMessage().getReasonCode());
        assertTrue(e.getMqttMessage().getReasonString().isPresent(), "a reason string by default");
        c.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.1.2-29] with Request Problem Information 0 the PUBACK 0x99 carries no Reason String")
    void noReasonStringWithoutProblemInformation() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, true, 60, "no-problems", "02 1700")); // Request Problem Information 0
            raw.readType(2);
            raw.send(RawMqtt.publishV5("rr/q", 1, 3, "01 01", new byte[] {(byte) 0xC3, (byte) 0x28}));
            byte[] puback = raw.readType(4);
            String hex = HexFormat.of().formatHex(puback);
            assertEquals(0x99, puback[4] & 0xFF, hex);
            assertTrue(puback.length == 5 || puback.length == 6 && puback[5] == 0, "no properties: " + hex);
        }
    }

    @Test
    @DisplayName("3.3.2.3.2 a QoS 0 PUBLISH with an invalid UTF-8 payload marked as UTF-8: DISCONNECT 0x99")
    void invalidUtf8PayloadAtQos0() throws Exception {
        try (RawMqtt raw = broker.rawV5("utf8-q0")) {
            raw.send(RawMqtt.publishV5("rr/q0", 0, 0, "01 01", new byte[] {(byte) 0xFF}));
            byte[] disconnect = raw.readType(14);
            assertEquals(0x99, disconnect[2] & 0xFF);
        }
        Mqtt5BlockingClient ok = broker.connectedV5("utf8-ok");
        assertFalse(ok.publishWith().topic("rr/ok").qos(MqttQos.AT_LEAST_ONCE)
                .payloadFormatIndicator(Mqtt5PayloadFormatIndicator.UTF_8)
                .payload("ü".getBytes(StandardCharsets.UTF_8)).send().getError().isPresent(), "valid UTF-8 passes");
        ok.disconnect();
    }
}
