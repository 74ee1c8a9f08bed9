package io.fleetmq.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.client.Protocol;
import io.fleetmq.bench.report.BenchReport;
import io.fleetmq.bench.report.ErrorKind;
import io.fleetmq.bench.run.BenchmarkRun;
import io.fleetmq.bench.scenario.Scenario;
import io.fleetmq.bench.support.FreePort;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * A broker that refuses every CONNECT, as FleetMQ does until its protocol work lands, and no broker
 * at all: the run is aborted, nothing is published, and every failure is counted with its reason.
 * Needs nothing but the JDK, so it runs everywhere.
 */
class RefusedConnectIT {

    /** MQTT 5 CONNACK: session present 0, reason 0x88 "server unavailable", no properties. */
    private static final byte[] CONNACK_SERVER_UNAVAILABLE = HexFormat.of().parseHex("2003008800");

    private static BenchOptions options(int port) {
        return new BenchOptions(Scenario.P2P, "127.0.0.1", port, Protocol.MQTT_5, 1, 2, 100, Duration.ZERO,
                Duration.ofSeconds(1), Duration.ofSeconds(1), 64, 16, 1);
    }

    @Test
    void refusedConnectsAbortTheRunAndCarryTheirReasonCode() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread refuser = new Thread(() -> refuseAll(server), "refuser");
            refuser.setDaemon(true);
            refuser.start();

            BenchReport report = new BenchmarkRun(options(server.getLocalPort()), quiet()).run();

            assertEquals(BenchReport.Status.ABORTED, report.status());
            assertEquals("2 of 2 subscribers could not connect", report.note());
            assertEquals(2, report.errors().count(ErrorKind.CONNECT_FAILED));
            assertEquals(2, report.errors().total(), "publishers are never started: " + report.errors());
            assertEquals(0, report.published());
            assertTrue(report.errors().samples().get(0).contains("CONNECTION_REFUSED_SERVER_UNAVAILABLE_5 (0x88)"),
                    report.errors().samples().toString());
            assertTrue(!report.clean());
        }
    }

    @Test
    void noBrokerListeningIsAConnectFailureToo() {
        BenchReport report = new BenchmarkRun(options(FreePort.next()), quiet()).run();
        assertEquals(BenchReport.Status.ABORTED, report.status());
        assertEquals(2, report.errors().count(ErrorKind.CONNECT_FAILED));
        assertTrue(report.errors().samples().get(0).contains("cannot open TCP connection"),
                report.errors().samples().toString());
    }

    /** Reads the CONNECT's first bytes, answers 0x88 and hangs up, for every client that comes. */
    private static void refuseAll(ServerSocket server) {
        while (!server.isClosed()) {
            try (Socket client = server.accept()) {
                InputStream in = client.getInputStream();
                in.read(new byte[256]);
                OutputStream out = client.getOutputStream();
                out.write(CONNACK_SERVER_UNAVAILABLE);
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
