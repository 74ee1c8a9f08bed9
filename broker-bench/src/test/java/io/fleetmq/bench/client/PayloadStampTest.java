package io.fleetmq.bench.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class PayloadStampTest {

    @Test
    void roundTripsIncludingNegativeNanoTimes() {
        // nanoTime() has an arbitrary origin and may well be negative.
        for (PayloadStamp stamp : new PayloadStamp[] {
                new PayloadStamp(123_456_789_012L, 7, 42),
                new PayloadStamp(-5_000_000_000L, 0, 0),
                new PayloadStamp(Long.MAX_VALUE, Integer.MAX_VALUE, Integer.MAX_VALUE)}) {
            ByteBuf buf = Unpooled.buffer();
            stamp.writeTo(buf, 64);
            assertEquals(stamp, PayloadStamp.readFrom(buf));
            buf.release();
        }
    }

    @Test
    void layoutIsBigEndianNanosPublisherSequenceThenZeros() {
        ByteBuf buf = Unpooled.buffer();
        new PayloadStamp(0x0102030405060708L, 0x0a0b0c0d, 0x11121314).writeTo(buf, 20);
        byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        assertEquals("0102030405060708" + "0a0b0c0d" + "11121314" + "00000000", HexFormat.of().formatHex(bytes));
    }

    @Test
    void fillsThePayloadToTheRequestedSizeExactly() {
        ByteBuf buf = Unpooled.buffer();
        new PayloadStamp(1, 2, 3).writeTo(buf, PayloadStamp.SIZE);
        assertEquals(16, buf.readableBytes());
        buf.clear();
        new PayloadStamp(1, 2, 3).writeTo(buf, 4096);
        assertEquals(4096, buf.readableBytes());
    }

    @Test
    void readingLeavesTheReaderIndexAlone() {
        ByteBuf buf = Unpooled.buffer();
        new PayloadStamp(9, 8, 7).writeTo(buf, 32);
        PayloadStamp.readFrom(buf);
        assertEquals(0, buf.readerIndex());
        assertEquals(32, buf.readableBytes());
    }

    @Test
    void payloadsTooShortForAStampAreRecognisedAndRefused() {
        ByteBuf shortOne = Unpooled.wrappedBuffer(new byte[15]);
        assertFalse(PayloadStamp.fits(shortOne));
        assertTrue(PayloadStamp.fits(Unpooled.wrappedBuffer(new byte[16])));
        assertThrows(IllegalArgumentException.class, () -> PayloadStamp.readFrom(shortOne));
        assertThrows(IllegalArgumentException.class, () -> new PayloadStamp(1, 2, 3).writeTo(Unpooled.buffer(), 15));
    }
}
