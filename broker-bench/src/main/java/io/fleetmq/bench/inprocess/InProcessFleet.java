package io.fleetmq.bench.inprocess;

import io.fleetmq.app.BrokerNode;
import io.fleetmq.app.Launcher;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.local.LocalServerChannel;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;

/**
 * A fleet of idle MQTT 5 clients held by a standalone node in the same JVM, over Netty's local
 * transport: connections that take no file descriptor, so a node can be measured with more of
 * them than the process may open files. Each client connects with a password (clean start,
 * keep alive 600 s), subscribes to a topic of its own at QoS 1 and stays. The node runs as
 * {@code ./fleetmq} runs it (standalone, its settings from the environment) and takes the
 * connections through its TCP listener's pipeline ({@link BrokerNode#acceptInProcess}).
 *
 * <p>The JVM's live heap is counted by a class histogram (which runs a full GC first) before the
 * first client and with all of them held; both histograms are written to OUT. The difference per
 * client covers both ends of each connection: the node's, and the client's own channel. With
 * {@code --bare} no node runs: a server that only answers CONNECT and SUBSCRIBE holds the same
 * clients, which measures the two ends of a bare local connection, the part of the figure that is
 * not the node's.
 *
 * <pre>
 * java -Xmx1g -cp broker-app/target/fleetmq.jar:broker-bench/target/fleetmq-bench.jar \
 *   io.fleetmq.bench.inprocess.InProcessFleet OUT CLIENTS [--bare]
 * </pre>
 *
 * With a node, the environment must give {@code ADMIN_PASSWORD} (the harness makes the clients'
 * credential through the admin API, as the other scenarios' scripts do) and
 * {@code MQTT_ALLOW_ANONYMOUS=false}; see {@code broker-bench/inprocess-heap.sh}.
 */
public final class InProcessFleet {

    private static final String USERNAME = "bench";
    private static final String PASSWORD = "bench-secret-1";
    /** CONNECT and SUBSCRIBE exchanges under way at once. */
    private static final int WINDOW = 500;
    /** Messages published to held clients once they are all held, to see that the node still routes. */
    private static final int PROBES = 100;
    private static final Pattern TOTAL = Pattern.compile("Total\\s+(\\d+)\\s+(\\d+)");

    private final Path out;
    private final int clients;
    private final PrintStream log;
    private final Semaphore window = new Semaphore(WINDOW);
    private final AtomicInteger held = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    /** PUBLISH packets the held clients received. */
    private final AtomicInteger delivered = new AtomicInteger();
    /** Failures by what happened, for the report. */
    private final java.util.concurrent.ConcurrentHashMap<String, AtomicInteger> failures =
            new java.util.concurrent.ConcurrentHashMap<>();
    /** Set once measured: the clients are closed on purpose from then on. */
    private volatile boolean closing;

    private InProcessFleet(Path out, int clients, PrintStream log) {
        this.out = out;
        this.clients = clients;
        this.log = log;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2 || args.length > 3 || (args.length == 3 && !args[2].equals("--bare"))) {
            System.err.println("usage: InProcessFleet OUT CLIENTS [--bare]");
            System.exit(2);
        }
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        boolean bare = args.length == 3;
        System.exit(run(out, Integer.parseInt(args[1]), bare, System.out));
    }

    /** Runs the fleet, reporting to {@code log} and {@code out}; 0 if every client was held to the end. */
    static int run(Path out, int clients, boolean bare, PrintStream log) throws Exception {
        return new InProcessFleet(out, clients, log).run(bare);
    }

    private int run(boolean bare) throws Exception {
        LocalAddress address = new LocalAddress("fleetmq-bench-" + ProcessHandle.current().pid());
        AutoCloseable server;
        BrokerNode node = null;
        if (bare) {
            server = bareServer(address);
        } else {
            node = (BrokerNode) new Launcher(System::getenv, log).run();
            server = node;
            makeCredential(node.httpPort());
            node.acceptInProcess(address);
        }
        MultiThreadIoEventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, LocalIoHandler.newFactory());
        List<Channel> channels = new ArrayList<>(clients);
        try {
            long empty = liveBytes("histogram-empty.txt");
            log.printf("empty: %d live bytes, max heap %d MiB%n", empty, Runtime.getRuntime().maxMemory() >> 20);
            long t0 = System.nanoTime();
            Bootstrap bootstrap = new Bootstrap().group(loop).channel(LocalChannel.class);
            for (int i = 0; i < clients; i++) {
                if (!window.tryAcquire(2, TimeUnit.MINUTES)) {
                    throw new IllegalStateException("no CONNACK and SUBACK within 2 minutes; held " + held.get());
                }
                int index = i;
                Channel ch = bootstrap.clone().handler(new Client(index))
                        // A name of its own: Netty's random ephemeral local names collide among 100,000.
                        .connect(address, new LocalAddress("inproc-client-" + index))
                        .addListener(f -> {
                            if (!f.isSuccess()) {
                                done(false, "connect failed: " + f.cause());
                            }
                        }).channel();
                channels.add(ch);
                if ((i + 1) % 10_000 == 0) {
                    log.printf("%d started, %d held, %d failed, %.1f s%n", i + 1, held.get(), failed.get(),
                            (System.nanoTime() - t0) / 1e9);
                }
            }
            if (!window.tryAcquire(WINDOW, 2, TimeUnit.MINUTES)) {
                throw new IllegalStateException("the last handshakes did not end within 2 minutes");
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            log.printf("holding %d of %d (%d failed: %s) after %.1f s, %.0f connects/s%n", held.get(), clients,
                    failed.get(), failures, seconds, clients / seconds);
            if (node != null) {
                awaitGauges(node.httpPort());
            }
            long full = liveBytes("histogram-held.txt");
            int probes = bare ? 0 : Math.min(PROBES, held.get());
            int reached = bare ? 0 : probe(bootstrap, address, probes);
            long open = channels.stream().filter(Channel::isActive).count();
            String summary = String.format(
                    "%s clients %d held %d failed %d still open %d connects/s %.0f live heap empty %.1f MiB held %.1f MiB"
                            + " per client %d B max heap %d MiB%s",
                    bare ? "bare" : "node", clients, held.get(), failed.get(), open, clients / seconds,
                    empty / 1048576.0, full / 1048576.0, (full - empty) / Math.max(1, held.get()),
                    Runtime.getRuntime().maxMemory() >> 20,
                    bare ? "" : String.format(" probes delivered %d of %d", reached, probes));
            log.println(summary);
            Files.writeString(out.resolve("summary.txt"), summary + "\n");
            return failed.get() == 0 && open == clients && reached == probes ? 0 : 1;
        } finally {
            closing = true;
            for (Channel ch : channels) {
                ch.close();
            }
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
            server.close();
        }
    }

    /**
     * Publishes one QoS 1 message to each of {@code probes} held clients spread over the fleet, from
     * a client of its own, and returns how many of them received theirs within a minute: the node
     * still routes with the whole fleet held.
     */
    private int probe(Bootstrap bootstrap, LocalAddress address, int probes) throws InterruptedException {
        int before = delivered.get();
        java.util.concurrent.CountDownLatch acked = new java.util.concurrent.CountDownLatch(probes);
        int step = Math.max(1, clients / probes);
        List<byte[]> publishes = new ArrayList<>(probes);
        for (int i = 0; i < probes; i++) {
            publishes.add(publish("fleetmq-bench/inproc-" + i * step, i + 1));
        }
        Channel publisher = bootstrap.clone().handler(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelActive(ChannelHandlerContext ctx) {
                ctx.writeAndFlush(Unpooled.wrappedBuffer(connect("inproc-publisher")));
            }

            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ByteBuf in = (ByteBuf) msg;
                try {
                    while (in.isReadable()) {
                        int type = in.readUnsignedByte() >> 4;
                        int length = remainingLength(in);
                        if (type == 2 && in.getUnsignedByte(in.readerIndex() + 1) == 0) {
                            publishes.forEach(p -> ctx.write(Unpooled.wrappedBuffer(p)));
                            ctx.flush();
                        } else if (type == 4 && (length == 2 || in.getUnsignedByte(in.readerIndex() + 2) == 0)) {
                            acked.countDown();
                        }
                        in.skipBytes(length);
                    }
                } finally {
                    in.release();
                }
            }
        }).connect(address, new LocalAddress("inproc-publisher")).sync().channel();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        boolean allAcked = acked.await(1, TimeUnit.MINUTES);
        while (delivered.get() - before < probes && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        publisher.close();
        int reached = delivered.get() - before;
        log.printf("probes: %d published, %s acknowledged, %d delivered%n", probes,
                allAcked ? "all" : (probes - acked.getCount()) + "", reached);
        return reached;
    }

    /** Waits until the node's gauges count every client's connection, session and subscription. */
    private void awaitGauges(int httpPort) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        String text = "";
        while (System.nanoTime() < deadline) {
            text = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            if (gauge(text, "fleetmq_connections") >= held.get() && gauge(text, "fleetmq_sessions") >= held.get()
                    && gauge(text, "fleetmq_subscriptions") >= held.get()) {
                break;
            }
            Thread.sleep(500);
        }
        log.printf("node counts connections %.0f, sessions %.0f, subscriptions %.0f%n", gauge(text, "fleetmq_connections"),
                gauge(text, "fleetmq_sessions"), gauge(text, "fleetmq_subscriptions"));
        for (String line : text.split("\n")) {
            if ((line.startsWith("fleetmq_connections_refused_total{") || line.startsWith("fleetmq_disconnects_total{"))
                    && !line.endsWith(" 0.0")) {
                log.println("node: " + line);
            }
        }
    }

    /** The sum of a gauge's series in Prometheus text. */
    private static double gauge(String text, String name) {
        double sum = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /** Live bytes on the heap after a full GC, from a class histogram, written to {@code file}. */
    private long liveBytes(String file) throws Exception {
        String histogram = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                new Object[] {new String[0]}, new String[] {String[].class.getName()});
        Files.writeString(out.resolve(file), histogram);
        Matcher m = TOTAL.matcher(histogram);
        if (!m.find()) {
            throw new IllegalStateException("no total in the class histogram");
        }
        return Long.parseLong(m.group(2));
    }

    private void makeCredential(int httpPort) throws IOException, InterruptedException {
        String admin = System.getenv("ADMIN_PASSWORD");
        if (admin == null) {
            throw new IllegalStateException("ADMIN_PASSWORD is not set: the harness makes the clients' credential with it");
        }
        HttpClient http = HttpClient.newHttpClient();
        String base = "http://127.0.0.1:" + httpPort + "/api/v1/";
        HttpResponse<String> login = http.send(HttpRequest.newBuilder(URI.create(base + "auth/login"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"username\":\"admin\",\"password\":\"" + admin + "\"}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        Matcher token = Pattern.compile("\"token\"\\s*:\\s*\"([^\"]+)\"").matcher(login.body());
        if (login.statusCode() != 200 || !token.find()) {
            throw new IllegalStateException("admin login failed: " + login.statusCode() + " " + login.body());
        }
        HttpResponse<String> made = http.send(HttpRequest.newBuilder(URI.create(base + "credentials"))
                .header("Content-Type", "application/json").header("Authorization", "Bearer " + token.group(1))
                .POST(HttpRequest.BodyPublishers.ofString("{\"type\":\"basic\",\"username\":\"" + USERNAME
                        + "\",\"password\":\"" + PASSWORD + "\",\"publish\":[\"fleetmq-bench/#\"],"
                        + "\"subscribe\":[\"fleetmq-bench/#\"]}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        if (made.statusCode() / 100 != 2) {
            throw new IllegalStateException("making the credential failed: " + made.statusCode() + " " + made.body());
        }
    }

    /** A server that answers CONNECT with success and SUBSCRIBE with QoS 1 granted, and holds nothing else. */
    private static AutoCloseable bareServer(LocalAddress address) {
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(2, LocalIoHandler.newFactory());
        ChannelHandler answer = new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ByteBuf in = (ByteBuf) msg;
                try {
                    while (in.isReadable()) {
                        int type = in.readUnsignedByte() >> 4;
                        int length = remainingLength(in);
                        if (type == 1) {
                            ctx.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {0x20, 3, 0, 0, 0}));
                        } else if (type == 8) {
                            int id = in.getUnsignedShort(in.readerIndex());
                            ctx.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {(byte) 0x90, 4, (byte) (id >> 8), (byte) id, 0, 1}));
                        }
                        in.skipBytes(length);
                    }
                } finally {
                    in.release();
                }
            }

            @Override
            public boolean isSharable() {
                return true;
            }
        };
        Channel server = new ServerBootstrap().group(group).channel(LocalServerChannel.class)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(answer);
                    }
                }).bind(address).syncUninterruptibly().channel();
        return () -> {
            server.close().awaitUninterruptibly();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        };
    }

    /** How many bytes the remaining length {@code length} took. */
    private static int lengthBytes(int length) {
        return length < 128 ? 1 : length < 16_384 ? 2 : length < 2_097_152 ? 3 : 4;
    }

    private static int remainingLength(ByteBuf in) {
        int value = 0;
        for (int shift = 0; shift < 28; shift += 7) {
            int b = in.readUnsignedByte();
            value |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return value;
            }
        }
        throw new IllegalStateException("malformed remaining length");
    }

    private void done(boolean ok, String failure) {
        if (ok) {
            held.incrementAndGet();
        } else {
            failed.incrementAndGet();
            failures.computeIfAbsent(failure, f -> new AtomicInteger()).incrementAndGet();
        }
        window.release();
    }

    /** One client: CONNECT, then SUBSCRIBE once the CONNACK says success, then idle. */
    private final class Client extends ChannelInboundHandlerAdapter {

        private final int index;
        /** 0 waiting for CONNACK, 1 for SUBACK, 2 holding, 3 failed. */
        private byte phase;

        Client(int index) {
            this.index = index;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ctx.writeAndFlush(Unpooled.wrappedBuffer(connect("inproc-" + index)));
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            try {
                while (in.isReadable()) {
                    int type = in.readUnsignedByte() >> 4;
                    int length = remainingLength(in);
                    int end = in.readerIndex() + length;
                    if (type == 2 && phase == 0) {
                        int code = in.getUnsignedByte(in.readerIndex() + 1);
                        if (code != 0) {
                            fail(ctx, String.format("CONNACK 0x%02X", code));
                            return;
                        }
                        phase = 1;
                        ctx.writeAndFlush(Unpooled.wrappedBuffer(subscribe("fleetmq-bench/inproc-" + index)));
                    } else if (type == 9 && phase == 1) {
                        int granted = in.getUnsignedByte(end - 1);
                        if (granted != 1) {
                            fail(ctx, String.format("SUBACK 0x%02X", granted));
                            return;
                        }
                        phase = 2;
                        done(true, null);
                    } else if (type == 3 && phase == 2) {
                        delivered.incrementAndGet();
                        int flags = in.getUnsignedByte(in.readerIndex() - 1 - lengthBytes(length));
                        if (((flags >> 1) & 3) == 1) {
                            int packetId = in.getUnsignedShort(in.readerIndex() + 2 + in.getUnsignedShort(in.readerIndex()));
                            ctx.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {0x40, 2, (byte) (packetId >> 8), (byte) packetId}));
                        }
                    }
                    in.readerIndex(end);
                }
            } finally {
                in.release();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (phase < 2) {
                done(false, phase == 0 ? "closed before CONNACK" : "closed before SUBACK");
                phase = 3;
            } else if (phase == 2 && !closing) {
                log.println("inproc-" + index + " was closed while held");
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            fail(ctx, cause.toString());
        }

        private void fail(ChannelHandlerContext ctx, String failure) {
            if (phase < 2) {
                phase = 3;
                done(false, failure);
            }
            ctx.close();
        }
    }

    /** MQTT 5 CONNECT: clean start, keep alive 600 s, the fleet's user name and password. */
    static byte[] connect(String clientId) {
        byte[] id = clientId.getBytes(StandardCharsets.UTF_8);
        byte[] user = USERNAME.getBytes(StandardCharsets.UTF_8);
        byte[] pass = PASSWORD.getBytes(StandardCharsets.UTF_8);
        int length = 10 + 1 + 2 + id.length + 2 + user.length + 2 + pass.length;
        ByteBuf b = Unpooled.buffer(length + 5);
        b.writeByte(0x10);
        writeLength(b, length);
        b.writeShort(4).writeBytes("MQTT".getBytes(StandardCharsets.US_ASCII)).writeByte(5);
        b.writeByte(0xC2).writeShort(600).writeByte(0); // user name, password, clean start; no properties
        b.writeShort(id.length).writeBytes(id);
        b.writeShort(user.length).writeBytes(user);
        b.writeShort(pass.length).writeBytes(pass);
        return bytes(b);
    }

    /** MQTT 5 PUBLISH at QoS 1, no properties, a 64-byte payload. */
    static byte[] publish(String topic, int packetId) {
        byte[] t = topic.getBytes(StandardCharsets.UTF_8);
        int length = 2 + t.length + 2 + 1 + 64;
        ByteBuf b = Unpooled.buffer(length + 5);
        b.writeByte(0x32);
        writeLength(b, length);
        b.writeShort(t.length).writeBytes(t).writeShort(packetId).writeByte(0).writeZero(64);
        return bytes(b);
    }

    /** MQTT 5 SUBSCRIBE, packet identifier 1, one filter at QoS 1. */
    static byte[] subscribe(String filter) {
        byte[] f = filter.getBytes(StandardCharsets.UTF_8);
        int length = 2 + 1 + 2 + f.length + 1;
        ByteBuf b = Unpooled.buffer(length + 5);
        b.writeByte(0x82);
        writeLength(b, length);
        b.writeShort(1).writeByte(0).writeShort(f.length).writeBytes(f).writeByte(1);
        return bytes(b);
    }

    private static void writeLength(ByteBuf b, int length) {
        do {
            int digit = length & 0x7F;
            length >>>= 7;
            b.writeByte(length > 0 ? digit | 0x80 : digit);
        } while (length > 0);
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] a = new byte[b.readableBytes()];
        b.readBytes(a);
        return a;
    }
}
