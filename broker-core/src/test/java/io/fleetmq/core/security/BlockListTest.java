package io.fleetmq.core.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class BlockListTest {

    private static final Instant NOW = Instant.parse("2026-06-01T12:00:00Z");
    private static int ids;

    private static BlockEntry entry(String type, String value, String target) {
        return entry(type, value, target, null);
    }

    private static BlockEntry entry(String type, String value, String target, Instant expiresAt) {
        return new BlockEntry("id-" + (++ids), type, value, target, expiresAt, NOW.minusSeconds(60));
    }

    /** Parses a literal by bytes, never by name, so no test can reach DNS. */
    private static InetAddress ip(String literal) {
        IpRange range = IpRange.parse(literal);
        assertNotNull(range, literal);
        try {
            return InetAddress.getByAddress(literalBytes(literal));
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    private static byte[] literalBytes(String literal) throws UnknownHostException {
        // InetAddress.getByName does no lookup for a string with ':' or four dotted numbers, and
        // IpRange.parse above already proved it is one.
        return InetAddress.getByName(literal).getAddress();
    }

    private static InetAddress mappedV6(String v4) throws UnknownHostException {
        byte[] bytes = new byte[16];
        bytes[10] = (byte) 0xff;
        bytes[11] = (byte) 0xff;
        System.arraycopy(ip(v4).getAddress(), 0, bytes, 12, 4);
        InetAddress address = Inet6Address.getByAddress(null, bytes, -1);
        assertTrue(address instanceof Inet6Address, "kept as IPv6, as a dual-stack socket reports it");
        return address;
    }

    private static boolean blocksAddress(String value, InetAddress address) {
        return BlockList.of(List.of(entry(BlockEntry.IP, value, null)))
                .match("c", "u", address, NOW).isPresent();
    }

    // --- validation ---

    @ParameterizedTest(name = "{0} {1} {2}")
    @CsvSource(nullValues = "null", value = {
        "client_id, dev-1, null",
        "username, alice, null",
        "ip, 10.1.2.3, null",
        "ip, 10.0.0.0/8, null",
        "ip, 0.0.0.0/0, null",
        "ip, 10.1.2.3/32, null",
        "ip, 10.1.2.3/7, null",
        "ip, ::1, null",
        "ip, ::, null",
        "ip, 2001:db8::/32, null",
        "ip, 2001:DB8:0:0:0:0:0:1/128, null",
        "ip, ::/0, null",
        "ip, ::ffff:10.0.0.0/104, null",
        "ip, 1:2:3:4:5:6:7:8, null",
        "ip, 1::, null",
        "ip, 64:ff9b::1.2.3.4, null",
        "regex, sensor-.*, client_id",
        "regex, ^admin$, username",
        "regex, 10\\.1\\..*, ip",
    })
    void validEntries(String type, String value, String target) {
        assertNull(BlockList.validate(type, value, target));
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @CsvSource(nullValues = "null", delimiter = '|', quoteCharacter = '"', value = {
        "null      | x         | null      | type: must be one of client_id, username, ip, regex",
        "clientid  | x         | null      | type: must be one of client_id, username, ip, regex",
        "IP        | 10.0.0.1  | null      | type: must be one of",
        "client_id | null      | null      | value: must not be empty",
        "username  | \"\"        | null      | value: must not be empty",
        "client_id | x         | client_id | target: only type regex takes a target",
        "ip        | 10.0.0.1  | ip        | target: only type regex takes a target",
        "regex     | x.*       | null      | target: required for type regex",
        "regex     | x.*       | address   | target: must be one of client_id, username, ip",
        "regex     | x.*       | regex     | target: must be one of client_id, username, ip",
        "regex     | (unclosed | client_id | value: not a valid regular expression (Unclosed group",
        "regex     | *x        | username  | value: not a valid regular expression (Dangling meta character",
        "ip        | example.com | null    | value: not an IP address or CIDR range",
        "ip        | localhost | null      | value: not an IP address or CIDR range",
        "ip        | 10.0.0    | null      | value: not an IP address or CIDR range",
        "ip        | 10.0.0.256 | null     | value: not an IP address or CIDR range",
        "ip        | 10.0.0.01 | null      | value: not an IP address or CIDR range",
        "ip        | 10.0.0.1/33 | null    | value: not an IP address or CIDR range (the prefix length after '/' must be 0 to 32)",
        "ip        | 10.0.0.1/ | null      | value: not an IP address or CIDR range (the prefix length after '/' must be 0 to 32",
        "ip        | 10.0.0.1/-1 | null    | value: not an IP address or CIDR range (the prefix length after '/' must be 0 to 32",
        "ip        | 10.0.0.1/08 | null    | value: not an IP address or CIDR range (the prefix length after '/' must be 0 to 32",
        "ip        | ::1/129   | null      | value: not an IP address or CIDR range (the prefix length after '/' must be 0 to 128",
        "ip        | 1:2:3:4:5:6:7 | null  | value: not an IP address or CIDR range",
        "ip        | 1:2:3:4:5:6:7:8:9 | null | value: not an IP address or CIDR range",
        "ip        | 1::2::3   | null      | value: not an IP address or CIDR range",
        "ip        | 12345::   | null      | value: not an IP address or CIDR range",
        "ip        | g::1      | null      | value: not an IP address or CIDR range",
        "ip        | fe80::1%eth0 | null   | value: not an IP address or CIDR range",
        "ip        | :1        | null      | value: not an IP address or CIDR range",
        "ip        | 1.2.3.4::  | null     | value: not an IP address or CIDR range",
        "ip        | \" 10.0.0.1\" | null    | value: not an IP address or CIDR range",
        "ip        | 10.0.0.0/8/8 | null   | value: not an IP address or CIDR range",
    })
    void invalidEntriesGetAOneLineReasonNamingTheField(String type, String value, String target, String expected) {
        String reason = BlockList.validate(type, value, target);
        assertNotNull(reason);
        assertTrue(reason.startsWith(expected), reason);
        assertFalse(reason.contains("\n"), reason);
    }

    // --- matching by client ID and user name ---

    @Test
    void emptyIsARealEmptyList() {
        assertNotNull(BlockList.EMPTY);
        assertEquals(0, BlockList.EMPTY.size());
        assertEquals(Optional.empty(), BlockList.EMPTY.match("c", "u", ip("10.0.0.1"), NOW));
        assertSame(BlockList.EMPTY, BlockList.of(List.of()));
    }

    @Test
    void clientIdAndUsernameMatchExactly() {
        BlockEntry byId = entry(BlockEntry.CLIENT_ID, "dev-1", null);
        BlockEntry byUser = entry(BlockEntry.USERNAME, "mallory", null);
        BlockList list = BlockList.of(List.of(byId, byUser));
        assertEquals(2, list.size());
        assertEquals(Optional.of(byId), list.match("dev-1", "alice", null, NOW));
        assertEquals(Optional.of(byUser), list.match("dev-2", "mallory", null, NOW));
        assertEquals(Optional.empty(), list.match("dev-10", "alice", null, NOW));
        assertEquals(Optional.empty(), list.match("DEV-1", "Mallory", null, NOW));
        assertEquals(Optional.empty(), list.match("dev-", "mallor", null, NOW));
        assertEquals(Optional.empty(), list.match(null, null, null, NOW));
    }

    @Test
    void theFirstMatchingEntryIsReturned() {
        BlockEntry first = entry(BlockEntry.USERNAME, "mallory", null);
        BlockEntry second = entry(BlockEntry.CLIENT_ID, "dev-1", null);
        BlockList list = BlockList.of(List.of(first, second));
        assertEquals(Optional.of(first), list.match("dev-1", "mallory", null, NOW));
    }

    @Test
    void aNullUsernameOrAddressMatchesNoEntryOnThem() {
        BlockList list = BlockList.of(List.of(
                entry(BlockEntry.USERNAME, "null", null),
                entry(BlockEntry.REGEX, ".*", BlockEntry.USERNAME),
                entry(BlockEntry.IP, "0.0.0.0/0", null),
                entry(BlockEntry.IP, "::/0", null),
                entry(BlockEntry.REGEX, ".*", BlockEntry.IP)));
        assertEquals(Optional.empty(), list.match("c", null, null, NOW));
        assertTrue(list.match("c", "", null, NOW).isPresent(), "an empty user name is a user name");
        assertTrue(list.match("c", null, ip("10.0.0.1"), NOW).isPresent());
    }

    // --- expiry ---

    @Test
    void anEntryEndsAtItsExpiry() {
        BlockEntry temporary = entry(BlockEntry.CLIENT_ID, "dev-1", null, NOW.plus(Duration.ofMinutes(5)));
        BlockList list = BlockList.of(List.of(temporary));
        assertEquals(Optional.of(temporary), list.match("dev-1", null, null, NOW));
        assertEquals(Optional.of(temporary), list.match("dev-1", null, null, NOW.plus(Duration.ofMinutes(5)).minusNanos(1)));
        assertEquals(Optional.empty(), list.match("dev-1", null, null, NOW.plus(Duration.ofMinutes(5))));
        assertEquals(Optional.empty(), list.match("dev-1", null, null, NOW.plus(Duration.ofDays(1))));
    }

    @Test
    void anExpiredEntryLetsALaterOneMatch() {
        BlockEntry expired = entry(BlockEntry.CLIENT_ID, "dev-1", null, NOW.minusSeconds(1));
        BlockEntry permanent = entry(BlockEntry.REGEX, "dev-.*", BlockEntry.CLIENT_ID);
        assertEquals(Optional.of(permanent), BlockList.of(List.of(expired, permanent)).match("dev-1", null, null, NOW));
    }

    // --- IP addresses and ranges ---

    @ParameterizedTest(name = "{0} contains {1}: {2}")
    @CsvSource({
        "10.1.2.3, 10.1.2.3, true",
        "10.1.2.3, 10.1.2.4, false",
        "10.1.2.3/32, 10.1.2.3, true",
        "10.1.2.3/32, 10.1.2.2, false",
        "10.0.0.0/8, 10.255.255.255, true",
        "10.0.0.0/8, 11.0.0.0, false",
        "10.0.0.0/8, 9.255.255.255, false",
        "10.1.2.3/8, 10.9.9.9, true",
        "192.168.4.0/22, 192.168.7.255, true",
        "192.168.4.0/22, 192.168.8.0, false",
        "192.168.4.0/22, 192.168.3.255, false",
        "128.0.0.0/1, 200.0.0.1, true",
        "128.0.0.0/1, 127.255.255.255, false",
        "0.0.0.0/0, 1.2.3.4, true",
        "0.0.0.0/0, 255.255.255.255, true",
        "0.0.0.0/0, 2001:db8::1, false",
        "10.0.0.1, ::ffff:a00:2, false",
        "2001:db8::1, 2001:db8::1, true",
        "2001:db8::1, 2001:db8::2, false",
        "2001:db8::1/128, 2001:db8:0:0:0:0:0:1, true",
        "2001:db8::/32, 2001:db8:ffff:ffff:ffff:ffff:ffff:ffff, true",
        "2001:db8::/32, 2001:db9::, false",
        "2001:db8::/33, 2001:db8:7fff::1, true",
        "2001:db8::/33, 2001:db8:8000::1, false",
        "::/0, 2001:db8::1, true",
        "::/0, 10.0.0.1, true",
        "::1, 0.0.0.1, false",
        "::ffff:10.0.0.0/104, 10.20.30.40, true",
        "::ffff:10.0.0.0/104, 11.0.0.0, false",
        "::ffff:a00:1, 10.0.0.1, true",
        "2001:db8::/32, 32.1.13.184, false",
    })
    void addressesAndRanges(String value, String address, boolean blocked) {
        assertEquals(blocked, blocksAddress(value, ip(address)));
    }

    @Test
    @DisplayName("an IPv4-mapped IPv6 client address counts as its IPv4 address")
    void mappedAddressesMatchIpv4Entries() throws Exception {
        InetAddress mapped = mappedV6("10.1.2.3");
        assertTrue(blocksAddress("10.1.2.3", mapped));
        assertTrue(blocksAddress("10.0.0.0/8", mapped));
        assertTrue(blocksAddress("0.0.0.0/0", mapped));
        assertFalse(blocksAddress("10.1.2.4", mapped));
        assertFalse(blocksAddress("11.0.0.0/8", mapped));
        BlockList regex = BlockList.of(List.of(entry(BlockEntry.REGEX, "10\\.1\\.2\\.3", BlockEntry.IP)));
        assertTrue(regex.match("c", null, mapped, NOW).isPresent(), "the regex sees dotted text");
    }

    // --- regular expressions ---

    @Test
    void aRegexMustMatchTheWholeValue() {
        BlockList list = BlockList.of(List.of(entry(BlockEntry.REGEX, "sensor-[0-9]+", BlockEntry.CLIENT_ID)));
        assertTrue(list.match("sensor-42", null, null, NOW).isPresent());
        assertFalse(list.match("old-sensor-42", null, null, NOW).isPresent());
        assertFalse(list.match("sensor-42x", null, null, NOW).isPresent());
        assertFalse(list.match("sensor-", null, null, NOW).isPresent());
        assertFalse(list.match(null, null, null, NOW).isPresent());
    }

    @Test
    void aRegexLooksOnlyAtItsTarget() {
        BlockList list = BlockList.of(List.of(entry(BlockEntry.REGEX, "bot.*", BlockEntry.USERNAME)));
        assertTrue(list.match("x", "bot7", null, NOW).isPresent());
        assertFalse(list.match("bot7", "alice", ip("10.0.0.1"), NOW).isPresent());
    }

    @ParameterizedTest(name = "{0} as text is {1}")
    @CsvSource({
        "10.1.2.3, 10.1.2.3",
        "2001:db8::1, 2001:db8::1",
        "2001:DB8:0:0:0:0:0:1, 2001:db8::1",
        "::1, ::1",
        "::, ::",
        "1::, 1::",
        "2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1",
        "2001:0:0:1:0:0:0:1, 2001:0:0:1::1",
        "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
        "fe80::abcd:ef, fe80::abcd:ef",
    })
    @DisplayName("a regex on ip sees dotted IPv4 or the short IPv6 form of RFC 5952")
    void regexOnIpSeesTheShortTextualForm(String address, String text) {
        assertEquals(text, IpRange.text(ip(address)));
        BlockList list = BlockList.of(List.of(
                entry(BlockEntry.REGEX, java.util.regex.Pattern.quote(text), BlockEntry.IP)));
        assertTrue(list.match("c", null, ip(address), NOW).isPresent());
    }

    @Test
    void aScopedIpv6AddressIsMatchedWithoutItsZone() throws Exception {
        InetAddress scoped = Inet6Address.getByAddress(null, ip("fe80::1").getAddress(), 3);
        assertTrue(BlockList.of(List.of(entry(BlockEntry.REGEX, "fe80::1", BlockEntry.IP)))
                .match("c", null, scoped, NOW).isPresent());
        assertTrue(blocksAddress("fe80::/10", scoped));
    }

    // --- invalid entries ---

    @Test
    void anInvalidEntryMatchesNothingAndTheOthersStillApply() {
        List<BlockEntry> entries = new ArrayList<>();
        entries.add(entry(BlockEntry.IP, "not-an-address", null));
        entries.add(entry(BlockEntry.REGEX, "(", BlockEntry.CLIENT_ID));
        entries.add(entry(BlockEntry.REGEX, ".*", null));
        entries.add(entry("hostname", "x", null));
        entries.add(entry(BlockEntry.CLIENT_ID, "", null));
        entries.add(entry(null, null, null));
        BlockEntry good = entry(BlockEntry.CLIENT_ID, "dev-1", null);
        entries.add(good);
        BlockList list = BlockList.of(entries);
        assertEquals(7, list.size(), "size counts every entry given");
        assertEquals(Optional.empty(), list.match("", "x", ip("10.0.0.1"), NOW));
        assertEquals(Optional.empty(), list.match("(", "not-an-address", ip("10.0.0.1"), NOW));
        assertEquals(Optional.of(good), list.match("dev-1", null, null, NOW));
    }

    @ParameterizedTest
    @ValueSource(strings = {"localhost", "example.invalid", "1.2.3.4.nip.io", "0x7f.0.0.1", "127.1", "2130706433"})
    @DisplayName("host names and odd numeric forms are refused without being looked up")
    void namesAreNeverResolved(String value) {
        long start = System.nanoTime();
        assertNotNull(BlockList.validate(BlockEntry.IP, value, null));
        assertNull(IpRange.parse(value));
        assertTrue(Duration.ofNanos(System.nanoTime() - start).toMillis() < 1_000, "no lookup happened");
    }
}
