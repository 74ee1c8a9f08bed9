package io.fleetmq.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalIoHandler;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** How many I/O threads the listeners get, and what closing the loops does to open connections. */
class EventLoopsTest {

    /** Accepts connections and does nothing with them: only the loops' close can end them. */
    private static final ChannelInitializer<Channel> IDLE = new ChannelInitializer<>() {
        @Override
        protected void initChannel(Channel ch) {
        }
    };

    @Test
    void byDefaultOneIoThreadPerCoreAndAtLeastTwo() {
        try (EventLoops loops = new EventLoops(0)) {
            assertEquals(Math.max(2, Runtime.getRuntime().availableProcessors()), loops.ioThreads());
        }
    }

    @Test
    void asManyIoThreadsAsConfigured() {
        try (EventLoops loops = new EventLoops(3)) {
            assertEquals(3, loops.ioThreads());
        }
    }

    @Test
    void closingTheLoopsEndsTheConnectionsStillOpenOfEveryTransport() throws Exception {
        MultiThreadIoEventLoopGroup clientLoop = new MultiThreadIoEventLoopGroup(1, LocalIoHandler.newFactory());
        EventLoops loops = new EventLoops(2);
        try (Socket socket = new Socket()) {
            BoundListener tcp = Listeners.bind(loops, "test", "127.0.0.1", 0, 60, IDLE);
            LocalAddress address = new LocalAddress("event-loops-test-" + System.nanoTime());
            Listeners.bindInProcess(loops, "in-process", address, IDLE);
            socket.connect(new InetSocketAddress("127.0.0.1", tcp.port()), 10_000);
            socket.setSoTimeout(20_000);
            Channel local = new Bootstrap().group(clientLoop).channel(LocalChannel.class)
                    .handler(new ChannelInboundHandlerAdapter()).connect(address).sync().channel();
            waitFor(() -> loops.openConnections() == 2);

            loops.close();

            InputStream in = socket.getInputStream();
            assertEquals(-1, in.read(), "the socket's peer closed it");
            assertTrue(local.closeFuture().await(20, TimeUnit.SECONDS), "the in-process connection ended");
            assertEquals(0, loops.openConnections());
            assertThrows(IllegalStateException.class, () -> Listeners.bindInProcess(loops, "late",
                    new LocalAddress("event-loops-late-" + System.nanoTime()), IDLE), "closed loops accept nothing");
        } finally {
            loops.close();
            clientLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    private static void waitFor(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "condition not met within 20 s");
            Thread.sleep(10);
        }
    }
}
