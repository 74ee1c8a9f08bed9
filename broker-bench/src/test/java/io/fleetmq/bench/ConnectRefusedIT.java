package io.fleetmq.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.client.Credentials;
import io.fleetmq.bench.client.Protocol;
import io.fleetmq.bench.connect.ConnectRun;
import io.fleetmq.bench.report.ConnectReport;
import io.fleetmq.bench.report.ErrorKind;
import io.fleetmq.bench.scenario.Scenario;
import io.fleetmq.bench.support.FreePort;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The connect scenario against a fake broker that refuses every CONNECT, and against no broker at
 * all: refusals are counted by code, not as errors; no answer is an error. Needs nothing but the JDK.
 */
class ConnectRefusedIT {

    /** MQTT 5 CONNACK: session present 0, reason 0x86 "bad user name or password", no properties. */
    private static final byte[] CONNACK_BAD_PASSWORD = HexFormat.of().parseHex("2003008600");

    private static BenchOptions options(int port, Credentials credentials) {
        return new BenchOptions(Scenario.CONNECT, "127.0.0.1", port, Protocol.MQTT_5, 0, 2, 0, Duration.ZERO,
                Duration.ofMillis(700), Duration.ZERO, 64, 16, 1, port, 0, 0, credentials);
    }

    @Test
    void refusalsAreCountedByCodeAndTheCredentialsAreInEveryConnect() throws Exception {
        List<byte[]> connects = new CopyOnWriteArrayList<>();
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread refuser = new Thread(() -> refuseAll(server, connects), "refuser");
            refuser.setDaemon(true);
            refuser.start();

            ConnectReport report = new ConnectRun(options(server.getLocalPort(), new Credentials("bench", "pw")),
                    quiet()).run();

            assertEquals(0, report.accepted());
            assertTrue(report.refused() > 2, "both connectors must have come back: " + report.refused());
            assertEquals(Map.of(0x86, report.refused()), report.refusedByCode());
            assertEquals(0, report.errors().total(), report.errors().samples().toString());
            assertTrue(report.clean());
            assertTrue(connects.size() >= report.refused(), connects.size() + " CONNECTs");
            String first = new String(connects.get(0), StandardCharsets.ISO_8859_1);
            assertTrue(first.contains("bench") && first.contains("pw") && first.contains("b" + report.runId() + "c"),
                    "CONNECT carries user name, password and a connector's client ID: " + first);
        }
    }

    @Test
    void noBrokerListeningIsAnErrorAndTheConnectorsKeepTrying() {
        ConnectReport report = new ConnectRun(options(FreePort.next(), Credentials.NONE), quiet()).run();
        assertEquals(0, report.accepted());
        assertEquals(0, report.refused());
        long failures = report.errors().count(ErrorKind.CONNECT_FAILED);
        assertTrue(failures > 2, "each connector retried after its pause: " + failures);
        assertTrue(report.errors().samples().get(0).contains("cannot open TCP connection"),
                report.errors().samples().toString());
        assertTrue(!report.clean());
    }

    /** Reads each CONNECT, answers 0x86 and hangs up. */
    private static void refuseAll(ServerSocket server, List<byte[]> connects) {
        while (!server.isClosed()) {
            try (Socket client = server.accept()) {
                InputStream in = client.getInputStream();
                byte[] buffer = new byte[256];
                int n = in.read(buffer);
                if (n > 0) {
                    connects.add(java.util.Arrays.copyOf(buffer, n));
                }
                OutputStream out = client.getOutputStream();
                out.write(CONNACK_BAD_PASSWORD);
                out.flush();
            } catch (IOException closed) {
                return;
            }
        }
    }

    private static PrintStream quiet() {
        return new PrintStream(OutputStream.nullOutputStream());
    }
}
