package io.fleetmq.bench.cli;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Parses {@code --source-addresses}: IPv4 ranges such as {@code 127.0.0.1-127.0.0.50} and single
 * addresses (IPv4 or IPv6 literals), comma-separated. Only literals: a name would need DNS, and
 * the point is to pick exact local addresses.
 */
final class SourceAddresses {

    /** More than this is a typo: a million connections need fewer than 40 addresses. */
    static final int MAX = 65_536;

    private static final Pattern IPV4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");

    private SourceAddresses() {
    }

    static List<InetAddress> parse(String text) {
        Set<InetAddress> addresses = new LinkedHashSet<>();
        for (String part : text.split(",", -1)) {
            String item = part.trim();
            int dash = item.indexOf('-');
            if (dash > 0) {
                long from = ipv4(item.substring(0, dash).trim());
                long to = ipv4(item.substring(dash + 1).trim());
                if (to < from) {
                    throw new IllegalArgumentException("the range " + item + " ends before it starts");
                }
                if (to - from + 1 > MAX) {
                    throw new IllegalArgumentException("the range " + item + " holds more than " + MAX + " addresses");
                }
                for (long a = from; a <= to; a++) {
                    addresses.add(address(a));
                }
            } else if (IPV4.matcher(item).matches()) {
                addresses.add(address(ipv4(item)));
            } else if (item.contains(":")) {
                addresses.add(ipv6(item));
            } else {
                throw new IllegalArgumentException("'" + item + "' is neither an IP address nor a range A-B");
            }
            if (addresses.size() > MAX) {
                throw new IllegalArgumentException("more than " + MAX + " addresses");
            }
        }
        return List.copyOf(new ArrayList<>(addresses));
    }

    private static long ipv4(String text) {
        var m = IPV4.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not an IPv4 address");
        }
        long value = 0;
        for (int i = 1; i <= 4; i++) {
            int octet = Integer.parseInt(m.group(i));
            if (octet > 255) {
                throw new IllegalArgumentException("'" + text + "' is not an IPv4 address");
            }
            value = value << 8 | octet;
        }
        return value;
    }

    private static InetAddress address(long ipv4) {
        byte[] bytes = {(byte) (ipv4 >>> 24), (byte) (ipv4 >>> 16), (byte) (ipv4 >>> 8), (byte) ipv4};
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("four bytes are always an address", e);
        }
    }

    /** {@code getByName} never asks DNS about text with a colon: a valid literal or an error. Brackets optional. */
    private static InetAddress ipv6(String text) {
        String literal = text.startsWith("[") && text.endsWith("]") ? text.substring(1, text.length() - 1) : text;
        try {
            return InetAddress.getByName(literal);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("'" + text + "' is not an IPv6 address", e);
        }
    }
}
