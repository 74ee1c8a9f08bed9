package io.fleetmq.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Source addresses come as ranges or lists of literals, never as names to resolve. */
class SourceAddressesTest {

    private static List<String> parse(String text) {
        return SourceAddresses.parse(text).stream().map(InetAddress::getHostAddress).toList();
    }

    @Test
    void aRangeIsInclusiveAndCrossesOctets() {
        assertEquals(List.of("127.0.0.1", "127.0.0.2", "127.0.0.3"), parse("127.0.0.1-127.0.0.3"));
        assertEquals(List.of("10.0.0.254", "10.0.0.255", "10.0.1.0"), parse("10.0.0.254-10.0.1.0"));
        assertEquals(List.of("127.0.0.7"), parse("127.0.0.7-127.0.0.7"));
    }

    @Test
    void listsMixRangesAndSingleAddressesWithoutDuplicates() {
        assertEquals(List.of("127.0.0.1", "127.0.0.2", "192.168.1.5"), parse("127.0.0.1-127.0.0.2, 192.168.1.5,127.0.0.2"));
        assertEquals(List.of("0:0:0:0:0:0:0:1"), parse("::1"));
        assertEquals(List.of("0:0:0:0:0:0:0:1"), parse("[::1]"));
    }

    @Test
    void namesTyposAndHugeRangesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> parse("example.org"));
        assertThrows(IllegalArgumentException.class, () -> parse("127.0.0.256"));
        assertThrows(IllegalArgumentException.class, () -> parse("127.0.0.1-"));
        assertThrows(IllegalArgumentException.class, () -> parse(""));
        assertThrows(IllegalArgumentException.class, () -> parse("10.0.0.0-10.2.0.0"));
        assertThrows(IllegalArgumentException.class, () -> parse("fe80::zz"));
    }
}
