package io.fleetmq.bench.inprocess;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The in-process fleet's clients against its bare server: every one connects, subscribes and is
 * held, and the report counts them and the live heap. (With a node it runs in
 * broker-bench/inprocess-heap.sh; the node's side of in-process connections is tested in
 * broker-app.)
 */
class InProcessFleetTest {

    @TempDir
    Path out;

    @Test
    void everyClientOfABareRunIsHeldAndCounted() throws Exception {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        int code = InProcessFleet.run(out, 2_000, InProcessFleet.Options.parse(java.util.List.of("--bare")), new PrintStream(log, true, StandardCharsets.UTF_8));
        String text = log.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, text);
        String summary = Files.readString(out.resolve("summary.txt"));
        assertTrue(summary.startsWith("bare clients 2000 held 2000 failed 0 still open 2000 "), summary);
        assertTrue(Files.readString(out.resolve("histogram-held.txt")).contains("io.netty.channel.local.LocalChannel"),
                "the histogram of the held state lists the clients' channels");
    }

    @Test
    void theConnectAndSubscribePacketsAreWellFormedMqtt5() {
        byte[] connect = InProcessFleet.connect("c-1");
        assertEquals(0x10, connect[0] & 0xFF);
        assertEquals(connect.length - 2, connect[1], "remaining length");
        assertEquals(5, connect[8], "protocol level");
        assertEquals(0xC2, connect[9] & 0xFF, "user name, password, clean start");
        byte[] subscribe = InProcessFleet.subscribe("fleetmq-bench/c-1");
        assertEquals(0x82, subscribe[0] & 0xFF);
        assertEquals(subscribe.length - 2, subscribe[1], "remaining length");
        assertEquals(1, subscribe[subscribe.length - 1], "QoS 1");
    }

    @Test
    void aClientWithACredentialOfItsOwnSendsItsClientIdAsUserName() {
        byte[] connect = InProcessFleet.connect("c-7", false, 300, true);
        assertEquals(0xC0, connect[9] & 0xFF, "user name, password, no clean start");
        String tail = new String(connect, connect.length - 16, 16, java.nio.charset.StandardCharsets.UTF_8);
        assertEquals("\0\3c-7\0\6pw-c-7", tail.substring(tail.length() - 13), "user name c-7, password pw-c-7");
        assertEquals("pw-c-7", InProcessFleet.ownPassword("c-7"));
    }
}
