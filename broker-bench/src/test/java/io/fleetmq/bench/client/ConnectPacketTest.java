package io.fleetmq.bench.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The CONNECT on the wire, encoded and decoded again: flags and fields as MQTT 5 and 3.1.1 want them. */
class ConnectPacketTest {

    private static MqttConnectMessage roundTrip(MqttConnectMessage connect) {
        EmbeddedChannel out = new EmbeddedChannel(MqttEncoder.INSTANCE);
        out.writeOutbound(connect);
        ByteBuf bytes = out.readOutbound();
        out.finishAndReleaseAll();
        EmbeddedChannel in = new EmbeddedChannel(new MqttDecoder());
        in.writeInbound(bytes);
        MqttConnectMessage decoded = in.readInbound();
        in.finishAndReleaseAll();
        assertTrue(decoded.decoderResult().isSuccess(), String.valueOf(decoded.decoderResult()));
        return decoded;
    }

    @Test
    void userNameAndPasswordSetTheirFlagsAndTravelAsGiven_MQTT_3_1_2_18_to_21() {
        for (Protocol protocol : Protocol.values()) {
            MqttConnectMessage c = roundTrip(ConnectPacket.build("dev1", protocol, 60, 0,
                    new Credentials("bench", "pässword")));
            assertTrue(c.variableHeader().hasUserName(), protocol.label());
            assertTrue(c.variableHeader().hasPassword(), protocol.label());
            assertEquals("bench", c.payload().userName());
            assertArrayEquals("pässword".getBytes(StandardCharsets.UTF_8), c.payload().passwordInBytes());
            assertEquals("dev1", c.payload().clientIdentifier());
            assertTrue(c.variableHeader().isCleanSession());
            assertEquals(protocol.version().protocolLevel(), (byte) c.variableHeader().version());
        }
    }

    @Test
    void anonymousConnectCarriesNeitherFlag() {
        MqttConnectMessage c = roundTrip(ConnectPacket.build("dev1", Protocol.MQTT_5, 60, 0, Credentials.NONE));
        assertFalse(c.variableHeader().hasUserName());
        assertFalse(c.variableHeader().hasPassword());
        assertNull(c.payload().userName());
    }

    @Test
    void mqtt5MayCarryAPasswordWithoutAUserName() {
        MqttConnectMessage c = roundTrip(ConnectPacket.build("dev1", Protocol.MQTT_5, 60, 0,
                new Credentials(null, "token")));
        assertFalse(c.variableHeader().hasUserName());
        assertTrue(c.variableHeader().hasPassword());
    }

    @Test
    void credentialsNeverPrintThePassword() {
        Credentials c = new Credentials("bench", "s3cret");
        assertEquals("user 'bench' with password", c.toString());
        assertEquals("anonymous", Credentials.NONE.describe());
        assertFalse(c.toString().contains("s3cret"));
    }
}
