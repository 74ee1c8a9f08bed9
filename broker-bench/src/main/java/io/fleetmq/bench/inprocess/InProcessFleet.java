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
 * <p>As a cluster node ({@code --cluster-node}) the fleet can also stand for a node's devices in a
 * reconnect storm: one run holds a persistent fleet ({@code --persistent --hold}) until its process
 * is killed, another, on a second node, waits for the kill ({@code --storm FILE}) and reconnects the
 * same client IDs at once, retrying refused attempts, and reports when each was served again
 * (broker-bench/inprocess-storm.sh).
 *
 * <pre>
 * java -Xmx1g -cp broker-app/target/fleetmq.jar:broker-bench/target/fleetmq-bench.jar \
 *   io.fleetmq.bench.inprocess.InProcessFleet OUT CLIENTS [--bare] [--cluster-node] [--persistent]
 *   [--hold] [--storm FILE] [--window N] [--anonymous] [--own-credentials]
 * </pre>
 *
 * With a node, the environment must give {@code ADMIN_PASSWORD} (the harness makes the clients'
 * credential through the admin API, as the other scenarios' scripts do) and
 * {@code MQTT_ALLOW_ANONYMOUS=false}; see {@code broker-bench/inprocess-heap.sh}. With
 * {@code --own-credentials} every client is a device with a credential of its own instead: user
 * name its client ID, password {@link #ownPassword}, made beforehand (inprocess-storm.sh imports
 * them as a Mosquitto password file).
 */
public final class InProcessFleet {

    private static final String USERNAME = "bench";
    private static final String PASSWORD = "bench-secret-1";
    /** CONNECT and SUBSCRIBE exchanges under way at once. */
    private static final int WINDOW = 500;
    /** Messages published to held clients once they are all held, to see that the node still routes. */
    private static final int PROBES = 100;
    /** A storm's device gives up this long after the kill. */
    private static final long STORM_GIVE_UP_MILLIS = 120_000;
    private static final Pattern TOTAL = Pattern.compile("Total\\s+(\\d+)\\s+(\\d+)");

    private final Path out;
    private final int clients;
    private final PrintStream log;
    private final Options options;
    private final Semaphore window;
    private volatile Bootstrap bootstrap;
    private volatile LocalAddress address;
    /** In a storm, each client's CONNACK after the kill, in milliseconds (-1 for none). */
    private final int[] connackMillis;
    /** In a storm, the kill's epoch milliseconds. */
    private volatile long killedAt;
    /** In a storm, CONNACKs that found the session. */
    private final AtomicInteger sessionPresent = new AtomicInteger();
    private final AtomicInteger held = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    /** PUBLISH packets the held clients received. */
    private final AtomicInteger delivered = new AtomicInteger();
    /**
     * Which clients are held (connected and subscribed), written by the fleet's event loop before
     * it releases the client's place in the window, read once every place was taken back.
     */
    private final boolean[] holding;
    /** Failures by what happened, for the report. */
    private final java.util.concurrent.ConcurrentHashMap<String, AtomicInteger> failures =
            new java.util.concurrent.ConcurrentHashMap<>();
    /** Set once measured: the clients are closed on purpose from then on. */
    private volatile boolean closing;

    private InProcessFleet(Path out, int clients, Options options, PrintStream log) {
        this.out = out;
        this.clients = clients;
        this.options = options;
        this.log = log;
        this.window = new Semaphore(options.window());
        this.connackMillis = options.storm() != null ? new int[clients] : null;
        this.holding = new boolean[clients];
    }

    /**
     * What the run does.
     *
     * @param bare       no node: a server that only answers CONNECT and SUBSCRIBE
     * @param cluster    the node runs as a cluster node ({@code node} mode; the environment names Kafka,
     *                   Redis and PostgreSQL), not standalone
     * @param persistent clients ask for a session expiry of 300 s
     * @param hold       once measured, hold the fleet until the process is killed
     * @param storm      a storm: wait until this file exists (it holds the epoch milliseconds at which a
     *                   node holding the same fleet was killed), then reconnect every client at once
     *                   without clean start, and measure from that moment
     * @param window     handshakes under way at once
     * @param anonymous  make no credential: a node that allows anonymous clients lets them in without
     *                   a password check (the clients still send theirs)
     * @param ownCredentials each client sends its client ID as user name and {@link #ownPassword}; the
     *                   credentials exist already, none is made
     */
    record Options(boolean bare, boolean cluster, boolean persistent, boolean hold, Path storm, int window,
                   boolean anonymous, boolean ownCredentials) {
        static Options parse(List<String> args) {
            boolean bare = false;
            boolean cluster = false;
            boolean persistent = false;
            boolean hold = false;
            Path storm = null;
            int window = WINDOW;
            boolean anonymous = false;
            boolean own = false;
            for (int i = 0; i < args.size(); i++) {
                switch (args.get(i)) {
                    case "--bare" -> bare = true;
                    case "--cluster-node" -> cluster = true;
                    case "--persistent" -> persistent = true;
                    case "--hold" -> hold = true;
                    case "--storm" -> storm = Path.of(args.get(++i));
                    case "--window" -> window = Integer.parseInt(args.get(++i));
                    case "--anonymous" -> anonymous = true;
                    case "--own-credentials" -> own = true;
                    default -> throw new IllegalArgumentException("unknown option " + args.get(i));
                }
            }
            if (bare && (cluster || storm != null)) {
                throw new IllegalArgumentException("--bare runs no node");
            }
            if (anonymous && own) {
                throw new IllegalArgumentException("--anonymous and --own-credentials exclude each other");
            }
            return new Options(bare, cluster, persistent || storm != null, hold, storm, window, anonymous, own);
        }
    }

    public static void main(String[] args) throws Exception {
        Options options;
        int clients;
        try {
            if (args.length < 2) {
                throw new IllegalArgumentException("OUT and CLIENTS are needed");
            }
            clients = Integer.parseInt(args[1]);
            options = Options.parse(List.of(args).subList(2, args.length));
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            System.err.println("InProcessFleet: " + e.getMessage() + "\nusage: InProcessFleet OUT CLIENTS [--bare]"
                    + " [--cluster-node] [--persistent] [--hold] [--storm FILE] [--window N] [--anonymous]"
                    + " [--own-credentials]");
            System.exit(2);
            return;
        }
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        System.exit(run(out, clients, options, System.out));
    }

    /** Runs the fleet, reporting to {@code log} and {@code out}; 0 if every client was held to the end. */
    static int run(Path out, int clients, Options options, PrintStream log) throws Exception {
        return new InProcessFleet(out, clients, options, log).run();
    }

    private int run() throws Exception {
        boolean bare = options.bare();
        LocalAddress address = new LocalAddress("fleetmq-bench-" + ProcessHandle.current().pid());
        AutoCloseable server;
        BrokerNode node = null;
        if (bare) {
            server = bareServer(address);
        } else {
            node = (BrokerNode) (options.cluster() ? new Launcher(System::getenv, log).run("node")
                    : new Launcher(System::getenv, log).run());
            server = node;
            if (!options.anonymous() && !options.ownCredentials()) {
                makeCredential(node.httpPort());
            }
            node.acceptInProcess(address);
        }
        MultiThreadIoEventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, LocalIoHandler.newFactory());
        List<Channel> channels = new ArrayList<>(clients);
        try {
            long empty = liveBytes("histogram-empty.txt");
            log.printf("empty: %d live bytes, max heap %d MiB%n", empty, Runtime.getRuntime().maxMemory() >> 20);
            if (options.storm() != null) {
                log.println("waiting for " + options.storm());
                while (!Files.exists(options.storm())) {
                    Thread.sleep(10);
                }
                killedAt = Long.parseLong(Files.readString(options.storm()).trim());
                java.util.Arrays.fill(connackMillis, -1);
                log.printf("storm: the other node was killed %d ms ago%n", System.currentTimeMillis() - killedAt);
            }
            long t0 = System.nanoTime();
            bootstrap = new Bootstrap().group(loop).channel(LocalChannel.class);
            this.address = address;
            for (int i = 0; i < clients; i++) {
                if (!window.tryAcquire(2, TimeUnit.MINUTES)) { // the node answers, or the run fails
                    throw new IllegalStateException("no CONNACK and SUBACK within 2 minutes; held " + held.get());
                }
                channels.add(start(i, 0));
                if ((i + 1) % 10_000 == 0) {
                    log.printf("%d started, %d held, %d failed, %.1f s%n", i + 1, held.get(), failed.get(),
                            (System.nanoTime() - t0) / 1e9);
                }
            }
            if (!window.tryAcquire(options.window(), 2, TimeUnit.MINUTES)) {
                throw new IllegalStateException("the last handshakes did not end within 2 minutes");
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            log.printf("holding %d of %d (%d failed: %s) after %.1f s, %.0f connects/s%n", held.get(), clients,
                    failed.get(), failures, seconds, clients / seconds);
            if (node != null) {
                awaitGauges(node.httpPort());
            }
            if (options.storm() != null) {
                return stormReport();
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
            if (options.hold()) {
                log.println("holding until killed");
                Thread.sleep(Long.MAX_VALUE);
            }
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

    /** The storm's report: when the clients were served again after the kill, and how. */
    private int stormReport() throws IOException {
        int[] served = java.util.Arrays.stream(connackMillis).filter(m -> m >= 0).sorted().toArray();
        String summary = String.format("storm clients %d served %d with session present %d gave up %d;"
                        + " attempts refused or dropped before being served, by kind: %s;"
                        + " served after the kill, ms: 50%% %d 90%% %d 99%% %d 100%% %d",
                clients, served.length, sessionPresent.get(), failed.get(), failures,
                percentile(served, 50), percentile(served, 90), percentile(served, 99), percentile(served, 100));
        log.println(summary);
        Files.writeString(out.resolve("summary.txt"), summary + "\n");
        return served.length == clients && sessionPresent.get() == clients ? 0 : 1;
    }

    private static int percentile(int[] sorted, int p) {
        if (sorted.length == 0) {
            return -1;
        }
        return sorted[Math.max(0, (int) Math.ceil(sorted.length * p / 100.0) - 1)];
    }

    /**
     * Publishes one QoS 1 message to each of {@code probes} held clients spread over the fleet, from
     * a client of its own, and returns how many of them received theirs within a minute: the node
     * still routes with the whole fleet held.
     */
    private int probe(Bootstrap bootstrap, LocalAddress address, int probes) throws InterruptedException {
        int before = delivered.get();
        java.util.concurrent.CountDownLatch acked = new java.util.concurrent.CountDownLatch(probes);
        // Spread over the fleet, each the first held client from its place on: one whose CONNECT
        // was refused has no subscription, and a probe to it would be counted as lost.
        int step = Math.max(1, clients / probes);
        List<byte[]> publishes = new ArrayList<>(probes);
        for (int i = 0, target = 0; i < probes; i++) {
            target = Math.max(target, i * step);
            while (target < clients && !holding[target]) {
                target++;
            }
            if (target == clients) {
                throw new IllegalStateException("fewer held clients than probes after client " + i * step);
            }
            publishes.add(publish("fleetmq-bench/inproc-" + target++, i + 1));
        }
        Channel publisher = bootstrap.clone().handler(new PacketReader() {
            @Override
            public void channelActive(ChannelHandlerContext ctx) {
                ctx.writeAndFlush(Unpooled.wrappedBuffer(connect("inproc-publisher", true, 0,
                        options.ownCredentials())));
            }

            @Override
            boolean packet(ChannelHandlerContext ctx, int first, ByteBuf body) {
                int type = first >> 4;
                if (type == 2 && body.getUnsignedByte(1) == 0) {
                    publishes.forEach(p -> ctx.write(Unpooled.wrappedBuffer(p)));
                    ctx.flush();
                } else if (type == 4 && (body.readableBytes() == 2 || body.getUnsignedByte(2) == 0)) {
                    acked.countDown();
                }
                return true;
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
        if (made.statusCode() == 409) {
            return; // made by another node's run of the same fleet
        }
        if (made.statusCode() / 100 != 2) {
            throw new IllegalStateException("making the credential failed: " + made.statusCode() + " " + made.body());
        }
    }

    /** A server that answers CONNECT with success and SUBSCRIBE with QoS 1 granted, and holds nothing else. */
    private static AutoCloseable bareServer(LocalAddress address) {
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(2, LocalIoHandler.newFactory());
        ChannelHandler answer = new PacketReader() {
            @Override
            boolean packet(ChannelHandlerContext ctx, int first, ByteBuf body) {
                int type = first >> 4;
                if (type == 1) {
                    ctx.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {0x20, 3, 0, 0, 0}));
                } else if (type == 8) {
                    int id = body.getUnsignedShort(0);
                    ctx.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {(byte) 0x90, 4, (byte) (id >> 8), (byte) id, 0, 1}));
                }
                return true;
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

    /**
     * Takes received buffers apart into MQTT packets (the other end writes each packet whole, as
     * the node's encoder and this tool do) and hands each to {@link #packet}.
     */
    private abstract static class PacketReader extends ChannelInboundHandlerAdapter {

        /**
         * One packet: its first byte and its body (after the remaining length). Returns false to
         * read no further packets of the buffer (the connection is being closed).
         */
        abstract boolean packet(ChannelHandlerContext ctx, int first, ByteBuf body);

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            try {
                while (in.isReadable()) {
                    int first = in.readUnsignedByte();
                    int length = remainingLength(in);
                    ByteBuf body = in.readSlice(length);
                    if (!packet(ctx, first, body)) {
                        return;
                    }
                }
            } finally {
                in.release();
            }
        }
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

    /** Starts attempt {@code attempt} of client {@code index}. */
    private Channel start(int index, int attempt) {
        return bootstrap.clone().handler(new Client(index, attempt))
                // A name of its own: Netty's random ephemeral local names collide among 100,000.
                .connect(address, new LocalAddress("inproc-client-" + index + (attempt == 0 ? "" : "-" + attempt)))
                .addListener(f -> {
                    if (!f.isSuccess()) {
                        attemptFailed(index, attempt, "connect failed: " + f.cause());
                    }
                }).channel();
    }

    /**
     * An attempt was refused or dropped before the client was served: counted by kind. In a storm
     * the device tries again after 100 to 200 ms, as the storm scenario's devices do, until
     * {@link #STORM_GIVE_UP_MILLIS} after the kill; otherwise it has failed.
     */
    private void attemptFailed(int index, int attempt, String failure) {
        if (options.storm() == null || System.currentTimeMillis() - killedAt > STORM_GIVE_UP_MILLIS) {
            done(false, failure);
            return;
        }
        failures.computeIfAbsent(failure, f -> new AtomicInteger()).incrementAndGet();
        bootstrap.config().group().schedule(() -> start(index, attempt + 1),
                100 + java.util.concurrent.ThreadLocalRandom.current().nextInt(100), TimeUnit.MILLISECONDS);
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
    private final class Client extends PacketReader {

        private final int index;
        private final int attempt;
        /** 0 waiting for CONNACK, 1 for SUBACK, 2 holding, 3 failed. */
        private byte phase;

        Client(int index, int attempt) {
            this.index = index;
            this.attempt = attempt;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ctx.writeAndFlush(Unpooled.wrappedBuffer(connect("inproc-" + index, options.storm() == null,
                    options.persistent() ? 300 : 0, options.ownCredentials())));
        }

        @Override
        boolean packet(ChannelHandlerContext ctx, int first, ByteBuf body) {
            int type = first >> 4;
            if (type == 2 && phase == 0) {
                int code = body.getUnsignedByte(1);
                if (code != 0) {
                    fail(ctx, String.format("CONNACK 0x%02X", code));
                    return false;
                }
                if (connackMillis != null) {
                    connackMillis[index] = (int) (System.currentTimeMillis() - killedAt);
                    if ((body.getUnsignedByte(0) & 1) == 1) {
                        sessionPresent.incrementAndGet(); // its subscription came with it
                        phase = 2;
                        holding[index] = true;
                        done(true, null);
                        return true;
                    }
                }
                phase = 1;
                ctx.writeAndFlush(Unpooled.wrappedBuffer(subscribe("fleetmq-bench/inproc-" + index)));
            } else if (type == 9 && phase == 1) {
                int granted = body.getUnsignedByte(body.readableBytes() - 1);
                if (granted != 1) {
                    fail(ctx, String.format("SUBACK 0x%02X", granted));
                    return false;
                }
                phase = 2;
                holding[index] = true;
                done(true, null);
            } else if (type == 3 && phase == 2) {
                delivered.incrementAndGet();
                if (((first >> 1) & 3) == 1) {
                    int packetId = body.getUnsignedShort(2 + body.getUnsignedShort(0));
                    ctx.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {0x40, 2, (byte) (packetId >> 8), (byte) packetId}));
                }
            }
            return true;
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (phase < 2) {
                attemptFailed(index, attempt, phase == 0 ? "closed before CONNACK" : "closed before SUBACK");
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
                attemptFailed(index, attempt, failure);
            }
            ctx.close();
        }
    }

    /** MQTT 5 CONNECT: clean start, keep alive 600 s, the fleet's user name and password. */
    static byte[] connect(String clientId) {
        return connect(clientId, true, 0, false);
    }

    /** The password of a client with a credential of its own (user name: its client ID). */
    static String ownPassword(String clientId) {
        return "pw-" + clientId;
    }

    /**
     * MQTT 5 CONNECT, keep alive 600 s, a session expiry unless 0; the fleet's user name and password,
     * or with {@code own} the client ID as user name and {@link #ownPassword}.
     */
    static byte[] connect(String clientId, boolean cleanStart, int sessionExpirySeconds, boolean own) {
        byte[] id = clientId.getBytes(StandardCharsets.UTF_8);
        byte[] user = (own ? clientId : USERNAME).getBytes(StandardCharsets.UTF_8);
        byte[] pass = (own ? ownPassword(clientId) : PASSWORD).getBytes(StandardCharsets.UTF_8);
        int properties = sessionExpirySeconds > 0 ? 5 : 0;
        int length = 10 + 1 + properties + 2 + id.length + 2 + user.length + 2 + pass.length;
        ByteBuf b = Unpooled.buffer(length + 5);
        b.writeByte(0x10);
        writeLength(b, length);
        b.writeShort(4).writeBytes("MQTT".getBytes(StandardCharsets.US_ASCII)).writeByte(5);
        b.writeByte(0xC0 | (cleanStart ? 0x02 : 0)).writeShort(600); // user name, password
        b.writeByte(properties);
        if (sessionExpirySeconds > 0) {
            b.writeByte(0x11).writeInt(sessionExpirySeconds);
        }
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
