package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalIoHandler;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Connections made in the node's own JVM over Netty's local transport take the TCP listener's
 * pipeline: its authentication, its metrics and the same sessions as socket clients, with no file
 * descriptor behind them; they end with the node.
 */
class InProcessConnectionsTest {

    @TempDir
    Path dataDir;

    @Test
    void anInProcessClientIsAuthenticatedCountedAndGetsWhatSocketClientsPublish() throws Exception {
        MultiThreadIoEventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, LocalIoHandler.newFactory());
        try (SecurityFixture fx = SecurityFixture.startNode(dataDir, Map.of())) {
            TestBroker broker = fx.broker();
            fx.credential("dev", null, "secret-1", List.of("inproc/#"), List.of("inproc/#"));
            LocalAddress address = new LocalAddress("inproc-test-" + ProcessHandle.current().pid());
            broker.node().acceptInProcess(address);
            double tcpBefore = tcpConnections(broker);

            // A wrong password is refused as on a socket: Bad User Name or Password (0x86), then closed.
            BlockingQueue<byte[]> refusedIn = new LinkedBlockingQueue<>();
            Channel refused = connect(loop, address, refusedIn);
            refused.writeAndFlush(Unpooled.wrappedBuffer(RawMqtt.connectWithCredentials(5, "inproc-bad", "dev",
                    "wrong".getBytes(StandardCharsets.UTF_8))));
            assertEquals(0x86, RawMqtt.parseConnAckV5(next(refusedIn)).reasonCode());
            assertTrue(refused.closeFuture().await(10, TimeUnit.SECONDS), "closed after the refusal");

            BlockingQueue<byte[]> in = new LinkedBlockingQueue<>();
            Channel client = connect(loop, address, in);
            client.writeAndFlush(Unpooled.wrappedBuffer(RawMqtt.connectWithCredentials(5, "inproc-1", "dev",
                    "secret-1".getBytes(StandardCharsets.UTF_8))));
            assertEquals(0, RawMqtt.parseConnAckV5(next(in)).reasonCode());
            Await.until(Duration.ofSeconds(10), "the connection counted with the TCP listener's",
                    () -> tcpConnections(broker) == tcpBefore + 1);
            client.writeAndFlush(Unpooled.wrappedBuffer(RawMqtt.subscribeV5(1, "inproc/t", 1)));
            assertEquals(0x90, next(in)[0] & 0xFF, "SUBACK");

            Mqtt5BlockingClient pub = broker.v5("inproc-pub");
            pub.connectWith().simpleAuth().username("dev").password("secret-1".getBytes(StandardCharsets.UTF_8))
                    .applySimpleAuth().send();
            pub.publishWith().topic("inproc/t").qos(MqttQos.AT_LEAST_ONCE)
                    .payload("over a socket".getBytes(StandardCharsets.UTF_8)).send();
            RawMqtt.Publish p = RawMqtt.parsePublishV5(next(in));
            assertEquals("inproc/t", p.topic());
            assertArrayEquals("over a socket".getBytes(StandardCharsets.UTF_8), p.payload());
            pub.disconnect();

            // The node's stop tells the in-process client what it tells a socket's: Server Shutting Down.
            broker.close();
            byte[] disconnect = next(in);
            assertEquals(0xE0, disconnect[0] & 0xFF, "DISCONNECT");
            assertEquals(0x8B, disconnect[2] & 0xFF, "Server shutting down");
            assertTrue(client.closeFuture().await(20, TimeUnit.SECONDS), "the connection ends with the node");
            assertThrows(IllegalStateException.class, () -> broker.node().acceptInProcess(new LocalAddress("late")),
                    "a stopped node accepts nothing more");
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    /** Open MQTT 5 connections of the TCP listener, from the node's /metrics. */
    private static double tcpConnections(TestBroker broker) {
        double n = 0;
        for (String line : broker.scrapeMetrics().split("\n")) {
            if (line.startsWith("fleetmq_connections{") && line.contains("listener=\"tcp\"")
                    && line.contains("protocol=\"5\"")) {
                n += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return n;
    }

    private static Channel connect(MultiThreadIoEventLoopGroup loop, LocalAddress address, BlockingQueue<byte[]> in)
            throws InterruptedException {
        return new Bootstrap().group(loop).channel(LocalChannel.class).handler(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ByteBuf b = (ByteBuf) msg;
                try {
                    in.add(ByteBufUtil.getBytes(b)); // the node writes each packet as one buffer
                } finally {
                    b.release();
                }
            }
        }).connect(address).sync().channel();
    }

    private static byte[] next(BlockingQueue<byte[]> in) throws InterruptedException {
        byte[] packet = in.poll(20, TimeUnit.SECONDS);
        assertNotNull(packet, "a packet within 20 s");
        return packet;
    }
}
