package io.fleetmq.transport.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

class MqttChannelInitializerTest {

    @Test
    void aConnectionStopsBeingWritableAtTheConfiguredWriteBufferAndResumesAtHalf() {
        EmbeddedChannel channel = new EmbeddedChannel(
                new MqttChannelInitializer(null, false, 1024, 4096, () -> UnavailableConnectionHandler.INSTANCE));
        assertEquals(4096, channel.config().getWriteBufferHighWaterMark());
        assertEquals(2048, channel.config().getWriteBufferLowWaterMark());

        channel.write(Unpooled.wrappedBuffer(new byte[3000]));
        assertTrue(channel.isWritable(), "below the mark");
        channel.write(Unpooled.wrappedBuffer(new byte[2000]));
        assertFalse(channel.isWritable(), "above the mark");

        channel.flush();
        assertTrue(channel.isWritable(), "written out");
        channel.finishAndReleaseAll();
    }
}
