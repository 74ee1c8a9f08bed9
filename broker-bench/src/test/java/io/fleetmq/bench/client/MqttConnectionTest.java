package io.fleetmq.bench.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttMessageType;
import org.junit.jupiter.api.Test;

/** The acknowledgements the client writes, byte for byte. */
class MqttConnectionTest {

    private static String encode(MqttMessageType type, int packetId) {
        EmbeddedChannel channel = new EmbeddedChannel(MqttEncoder.INSTANCE);
        channel.writeOutbound(MqttConnection.reply(type, packetId));
        ByteBuf out = channel.readOutbound();
        String hex = ByteBufUtil.hexDump(out);
        out.release();
        channel.finishAndReleaseAll();
        return hex;
    }

    @Test
    void pubrelCarriesTheReservedFlags0010_MQTT_3_6_1_1() {
        assertEquals("62020007", encode(MqttMessageType.PUBREL, 7));
    }

    @Test
    void pubackPubrecAndPubcompAreTheTwoByteFormWithoutFlags() {
        assertEquals("40020102", encode(MqttMessageType.PUBACK, 0x0102));
        assertEquals("5002ffff", encode(MqttMessageType.PUBREC, 65_535));
        assertEquals("70020001", encode(MqttMessageType.PUBCOMP, 1));
    }
}
