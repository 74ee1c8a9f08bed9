package io.fleetmq.transport.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.transport.BoundListener;
import io.fleetmq.transport.EventLoops;
import io.fleetmq.transport.EventLoopsAccess;
import io.fleetmq.transport.ListenerBindException;
import io.fleetmq.transport.Listeners;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Listeners over real sockets: framing, WebSocket carriage, and bind failures. */
class MqttListenerTest {

    private static final byte[] CONNECT_V5 = HexFormat.of().parseHex("100e00044d5154540502003c00000161");
    private static final byte[] CONNECT_V311 = HexFormat.of().parseHex("100d00044d5154540402003c000161");

    private EventLoops loops;

    @BeforeEach
    void start() {
        loops = new EventLoops(1);
    }

    @AfterEach
    void stop() {
        loops.close();
    }

    private BoundListener bind(boolean webSocket) {
        return Listeners.bind(loops, "test", "127.0.0.1", 0, 60,
                new MqttChannelInitializer(null, webSocket, 1024, 64 * 1024, () -> UnavailableConnectionHandler.INSTANCE));
    }

    private static byte[] exchange(int port, byte[] request) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(5_000);
            socket.getOutputStream().write(request);
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) != -1) {
                out.write(b);
            }
            return out.toByteArray();
        }
    }

    @Test
    void mqtt5ConnectIsRefusedWithServerUnavailable0x88() throws IOException {
        try (BoundListener listener = bind(false)) {
            assertArrayEquals(HexFormat.of().parseHex("2003008800"), exchange(listener.port(), CONNECT_V5));
        }
    }

    @Test
    void mqtt311ConnectIsRefusedWithReturnCode3() throws IOException {
        try (BoundListener listener = bind(false)) {
            assertArrayEquals(HexFormat.of().parseHex("20020003"), exchange(listener.port(), CONNECT_V311));
        }
    }

    @Test
    void garbageClosesTheConnection() throws IOException {
        try (BoundListener listener = bind(false)) {
            assertEquals(0, exchange(listener.port(), new byte[] {(byte) 0xF0, 0x00}).length);
        }
    }

    @Test
    void mqttTravelsInBinaryWebSocketFramesOnPathMqtt() throws Exception {
        try (BoundListener listener = bind(true)) {
            CompletableFuture<byte[]> reply = new CompletableFuture<>();
            WebSocket ws = HttpClient.newHttpClient().newWebSocketBuilder()
                    .subprotocols("mqtt")
                    .buildAsync(URI.create("ws://127.0.0.1:" + listener.port() + "/mqtt"), new WebSocket.Listener() {
                        @Override
                        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
                            byte[] bytes = new byte[data.remaining()];
                            data.get(bytes);
                            reply.complete(bytes);
                            return null;
                        }
                    }).get(5, TimeUnit.SECONDS);
            assertEquals("mqtt", ws.getSubprotocol());
            ws.sendBinary(ByteBuffer.wrap(CONNECT_V5), true).get(5, TimeUnit.SECONDS);
            assertArrayEquals(HexFormat.of().parseHex("2003008800"), reply.get(5, TimeUnit.SECONDS));
        }
    }

    @Test
    void portInUseIsABindFailureNamingTheAddress() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            ListenerBindException e = assertThrows(ListenerBindException.class, () -> Listeners.bind(loops, "TCP",
                    "127.0.0.1", taken.getLocalPort(), 60,
                    new MqttChannelInitializer(null, false, 1024, 64 * 1024, () -> UnavailableConnectionHandler.INSTANCE)));
            assertEquals(taken.getLocalPort(), e.port());
            assertTrue(e.getMessage().startsWith("TCP listener cannot bind 127.0.0.1:" + taken.getLocalPort()),
                    e.getMessage());
        }
    }

    @Test
    void closingAListenerFreesItsPort() throws IOException {
        BoundListener listener = bind(false);
        int port = listener.port();
        listener.close();
        try (ServerSocket again = new ServerSocket(port, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            assertEquals(port, again.getLocalPort());
        }
    }

    @ParameterizedTest(name = "epoll {0}")
    @ValueSource(booleans = {true, false})
    void acceptedConnectionsProbeSilentPeersWithTcpKeepAlive(boolean epoll) throws Exception {
        CompletableFuture<io.netty.channel.Channel> accepted = new CompletableFuture<>();
        io.fleetmq.transport.limits.NodeLimits limits = io.fleetmq.transport.limits.NodeLimits.defaults();
        try (EventLoops own = EventLoopsAccess.create(1, epoll);
             BoundListener listener = Listeners.bind(own, "test", "127.0.0.1", 0, 42,
                new MqttChannelInitializer((io.fleetmq.transport.tls.ServerTls) null, false, 1024, 64 * 1024, () -> new io.netty.channel.ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelActive(io.netty.channel.ChannelHandlerContext ctx) {
                        accepted.complete(ctx.channel());
                    }
                }, limits));
             Socket socket = new Socket("127.0.0.1", listener.port())) {
            io.netty.channel.Channel ch = accepted.get(5, TimeUnit.SECONDS);
            // Read back from the accepted socket itself: with epoll they were set on the listening socket only.
            assertEquals(epoll && io.netty.channel.epoll.Epoll.isAvailable(),
                    ch instanceof io.netty.channel.epoll.EpollSocketChannel, "the transport asked for");
            assertTrue(ch.config().getOption(io.netty.channel.ChannelOption.SO_KEEPALIVE), "SO_KEEPALIVE");
            assertTrue(ch.config().getOption(io.netty.channel.ChannelOption.TCP_NODELAY), "TCP_NODELAY");
            if (ch instanceof io.netty.channel.epoll.EpollSocketChannel) {
                assertEquals(42, ch.config().getOption(io.netty.channel.epoll.EpollChannelOption.TCP_KEEPIDLE));
                assertEquals(10, ch.config().getOption(io.netty.channel.epoll.EpollChannelOption.TCP_KEEPINTVL));
                assertEquals(3, ch.config().getOption(io.netty.channel.epoll.EpollChannelOption.TCP_KEEPCNT));
            } else {
                assertEquals(42, ch.config().getOption(io.netty.channel.socket.nio.NioChannelOption.of(
                        jdk.net.ExtendedSocketOptions.TCP_KEEPIDLE)));
                assertEquals(10, ch.config().getOption(io.netty.channel.socket.nio.NioChannelOption.of(
                        jdk.net.ExtendedSocketOptions.TCP_KEEPINTERVAL)));
                assertEquals(3, ch.config().getOption(io.netty.channel.socket.nio.NioChannelOption.of(
                        jdk.net.ExtendedSocketOptions.TCP_KEEPCOUNT)));
            }
            assertEquals(1, limits.connections(), "counted as an open connection of the node");
        }
    }
}
