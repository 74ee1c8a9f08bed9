package io.fleetmq.bench.failover;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * How long a dead node's clients go without service: {@code failover} connects persistent clients
 * to one node of a cluster, has a publisher on another node send each of them a message every
 * interval, kills the first node ({@code SIGKILL} to the PID given), and measures for every client
 * the time from the kill until it is connected again to a survivor (CONNACK, session present) and
 * until it receives again through its kept subscription.
 *
 * <pre>
 * java -jar fleetmq-bench.jar failover --victim-port 1884 --victim-pid 12345 \
 *     --survivor-ports 1883,1885 --clients 100
 * </pre>
 */
public final class Failover {

    private Failover() {
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        String host = "127.0.0.1";
        int victimPort = 0;
        long victimPid = 0;
        int[] survivors = null;
        int clients = 100;
        Duration interval = Duration.ofMillis(100);
        Duration timeout = Duration.ofSeconds(120);
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--host" -> host = args[i + 1];
                case "--victim-port" -> victimPort = Integer.parseInt(args[i + 1]);
                case "--victim-pid" -> victimPid = Long.parseLong(args[i + 1]);
                case "--survivor-ports" -> survivors = Arrays.stream(args[i + 1].split(",")).mapToInt(Integer::parseInt).toArray();
                case "--clients" -> clients = Integer.parseInt(args[i + 1]);
                case "--interval-ms" -> interval = Duration.ofMillis(Long.parseLong(args[i + 1]));
                default -> {
                    err.println("failover: unknown option " + args[i]);
                    return 2;
                }
            }
        }
        if (victimPort == 0 || victimPid == 0 || survivors == null || survivors.length == 0) {
            err.println("usage: failover --victim-port P --victim-pid PID --survivor-ports P1,P2 [--clients N]"
                    + " [--interval-ms MS] [--host H]");
            return 2;
        }
        try {
            return measure(host, victimPort, victimPid, survivors, clients, interval, timeout, out, err);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        }
    }

    private static int measure(String host, int victimPort, long victimPid, int[] survivors, int count,
            Duration interval, Duration timeout, PrintStream out, PrintStream err) throws InterruptedException {
        String run = Long.toString(System.currentTimeMillis() % 100_000, 36);
        AtomicLong killedAt = new AtomicLong(Long.MAX_VALUE);
        AtomicLongArray connectedAgain = new AtomicLongArray(count);
        AtomicLongArray servedAgain = new AtomicLongArray(count);
        AtomicLongArray firstMessage = new AtomicLongArray(count);
        CountDownLatch allServedBefore = new CountDownLatch(count);
        List<Mqtt5AsyncClient> before = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int n = i;
            Mqtt5AsyncClient c = Mqtt5Client.builder().identifier("fo-" + run + "-" + i).serverHost(host)
                    .serverPort(victimPort).buildAsync();
            c.publishes(MqttGlobalPublishFilter.ALL, p -> {
                if (firstMessage.compareAndSet(n, 0, System.nanoTime())) {
                    allServedBefore.countDown();
                }
            });
            c.connectWith().cleanStart(true).sessionExpiryInterval(600).send().join();
            c.subscribeWith().topicFilter("failover/" + run + "/" + i).qos(MqttQos.AT_LEAST_ONCE).send().join();
            before.add(c);
        }
        Mqtt5AsyncClient publisher = Mqtt5Client.builder().identifier("fo-" + run + "-pub").serverHost(host)
                .serverPort(survivors[0]).buildAsync();
        publisher.connect().join();
        Thread sender = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                for (int i = 0; i < count; i++) {
                    publisher.publishWith().topic("failover/" + run + "/" + i).qos(MqttQos.AT_LEAST_ONCE)
                            .payload(ByteBuffer.allocate(8).putLong(System.nanoTime()).flip()).send();
                }
                try {
                    Thread.sleep(interval.toMillis());
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "failover-publisher");
        sender.setDaemon(true);
        sender.start();
        if (!allServedBefore.await(timeout.toSeconds(), TimeUnit.SECONDS)) {
            err.println("failover: not every client received a message before the kill");
            sender.interrupt();
            return 1;
        }
        err.printf("failover: %d clients served through node on port %d; killing PID %d%n", count, victimPort, victimPid);

        ProcessHandle victim = ProcessHandle.of(victimPid).orElse(null);
        if (victim == null) {
            err.println("failover: no process " + victimPid);
            sender.interrupt();
            return 1;
        }
        killedAt.set(System.nanoTime());
        victim.destroyForcibly();

        List<Thread> reconnecting = new ArrayList<>();
        int[] sessionPresent = new int[1];
        for (int i = 0; i < count; i++) {
            int n = i;
            int port = survivors[i % survivors.length];
            Thread t = new Thread(() -> {
                Mqtt5AsyncClient c = Mqtt5Client.builder().identifier("fo-" + run + "-" + n).serverHost(host)
                        .serverPort(port).buildAsync();
                c.publishes(MqttGlobalPublishFilter.ALL, p -> servedAgain.compareAndSet(n, 0, System.nanoTime()));
                long deadline = System.nanoTime() + timeout.toNanos();
                while (System.nanoTime() < deadline) {
                    try {
                        var ack = c.connectWith().cleanStart(false).sessionExpiryInterval(0).send()
                                .get(15, TimeUnit.SECONDS);
                        connectedAgain.set(n, System.nanoTime());
                        if (ack.isSessionPresent()) {
                            synchronized (sessionPresent) {
                                sessionPresent[0]++;
                            }
                        }
                        return;
                    } catch (Exception e) {
                        // refused (0x88) or timed out while the cluster settles: try again
                    }
                }
            });
            t.start();
            reconnecting.add(t);
        }
        for (Thread t : reconnecting) {
            t.join(timeout.toMillis());
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline && !allSet(servedAgain)) {
            Thread.sleep(50);
        }
        sender.interrupt();

        long kill = killedAt.get();
        long[] connect = millisSince(kill, connectedAgain);
        long[] served = millisSince(kill, servedAgain);
        out.printf(Locale.ROOT, "clients %d, session present %d, reconnected %d, served again %d%n", count,
                sessionPresent[0], connect.length, served.length);
        out.printf(Locale.ROOT, "kill -> CONNACK on a survivor   (ms): %s%n", summary(connect));
        out.printf(Locale.ROOT, "kill -> first message again    (ms): %s%n", summary(served));
        out.printf(Locale.ROOT, "{\"clients\":%d,\"sessionPresent\":%d,\"reconnected\":%d,\"served\":%d,"
                        + "\"connackP50Ms\":%d,\"connackMaxMs\":%d,\"servedP50Ms\":%d,\"servedMaxMs\":%d}%n",
                count, sessionPresent[0], connect.length, served.length, pct(connect, 50), pct(connect, 100),
                pct(served, 50), pct(served, 100));
        return connect.length == count && served.length == count ? 0 : 1;
    }

    private static boolean allSet(AtomicLongArray a) {
        for (int i = 0; i < a.length(); i++) {
            if (a.get(i) == 0) {
                return false;
            }
        }
        return true;
    }

    private static long[] millisSince(long start, AtomicLongArray a) {
        List<Long> values = new ArrayList<>();
        for (int i = 0; i < a.length(); i++) {
            if (a.get(i) != 0) {
                values.add(TimeUnit.NANOSECONDS.toMillis(a.get(i) - start));
            }
        }
        return values.stream().mapToLong(Long::longValue).sorted().toArray();
    }

    private static long pct(long[] sorted, int p) {
        if (sorted.length == 0) {
            return -1;
        }
        int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    private static String summary(long[] sorted) {
        return String.format(Locale.ROOT, "min %d, p50 %d, p95 %d, max %d", pct(sorted, 0), pct(sorted, 50),
                pct(sorted, 95), pct(sorted, 100));
    }
}
