package io.fleetmq.core.security;

import java.net.InetAddress;
import java.util.Arrays;

/**
 * An IP address or CIDR range, IPv4 or IPv6, parsed from text without any name lookup (which
 * {@code InetAddress.getByName} may do for a string that is not a literal).
 *
 * <p>Both families are kept as 16 bytes, IPv4 in its IPv4-mapped IPv6 form ({@code ::ffff:a.b.c.d},
 * prefix + 96), so that a client seen over an IPv6 socket as {@code ::ffff:10.1.2.3} matches the
 * entry {@code 10.0.0.0/8}, and an IPv6 range that contains the mapped block ({@code ::/0}) matches
 * IPv4 clients too. Host bits below the prefix are ignored: {@code 10.1.2.3/8} is {@code 10.0.0.0/8}.
 */
final class IpRange {

    private static final byte[] MAPPED_PREFIX = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff};

    private final byte[] network; // 16 bytes, host bits cleared
    private final int prefix;     // 0..128

    private IpRange(byte[] network, int prefix) {
        this.network = network;
        this.prefix = prefix;
        for (int bit = prefix; bit < 128; bit++) {
            network[bit >> 3] &= (byte) ~(0x80 >> (bit & 7));
        }
    }

    /** The range, or null if {@code text} is no IP address or CIDR range. */
    static IpRange parse(String text) {
        String address = text;
        int prefix = -1;
        int slash = text.indexOf('/');
        if (slash >= 0) {
            address = text.substring(0, slash);
            prefix = parseDecimal(text.substring(slash + 1), 128);
            if (prefix < 0) {
                return null;
            }
        }
        byte[] v4 = parseV4(address);
        if (v4 != null) {
            if (prefix > 32) {
                return null;
            }
            return new IpRange(mapped(v4), prefix < 0 ? 128 : prefix + 96);
        }
        byte[] v6 = parseV6(address);
        if (v6 == null) {
            return null;
        }
        return new IpRange(v6, prefix < 0 ? 128 : prefix);
    }

    /** Why {@code text} is not a range, for a 400 answer; null if it is one. */
    static String problem(String text) {
        if (parse(text) != null) {
            return null;
        }
        int slash = text.indexOf('/');
        if (slash >= 0) {
            String address = text.substring(0, slash);
            int max = parseV4(address) != null ? 32 : parseV6(address) != null ? 128 : -1;
            if (max > 0) {
                return "not an IP address or CIDR range (the prefix length after '/' must be 0 to " + max + ")";
            }
        }
        return "not an IP address or CIDR range";
    }

    /** Whether the address lies in the range. */
    boolean contains(InetAddress address) {
        byte[] bytes = address.getAddress();
        if (bytes.length == 4) {
            bytes = mapped(bytes);
        }
        int full = prefix >> 3;
        for (int i = 0; i < full; i++) {
            if (bytes[i] != network[i]) {
                return false;
            }
        }
        int rest = prefix & 7;
        if (rest == 0) {
            return true;
        }
        int mask = (0xff << (8 - rest)) & 0xff;
        return (bytes[full] & mask) == (network[full] & 0xff);
    }

    /**
     * The address as text: dotted IPv4 (also for an IPv4-mapped IPv6 address), otherwise the short
     * IPv6 form of RFC 5952 (lower case, longest run of zero groups as {@code ::}), without a zone.
     */
    static String text(InetAddress address) {
        byte[] bytes = address.getAddress();
        if (bytes.length == 16 && Arrays.equals(bytes, 0, 12, MAPPED_PREFIX, 0, 12)) {
            bytes = Arrays.copyOfRange(bytes, 12, 16);
        }
        if (bytes.length == 4) {
            return (bytes[0] & 0xff) + "." + (bytes[1] & 0xff) + "." + (bytes[2] & 0xff) + "." + (bytes[3] & 0xff);
        }
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = ((bytes[2 * i] & 0xff) << 8) | (bytes[2 * i + 1] & 0xff);
        }
        int bestStart = -1;
        int bestLength = 1; // a single zero group is not shortened (RFC 5952 4.2.2)
        for (int i = 0; i < 8; i++) {
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
            i = Math.max(i, j);
        }
        StringBuilder out = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                out.append("::");
                i += bestLength - 1;
                continue;
            }
            if (out.length() > 0 && out.charAt(out.length() - 1) != ':') {
                out.append(':');
            }
            out.append(Integer.toHexString(groups[i]));
        }
        return out.toString();
    }

    private static byte[] mapped(byte[] v4) {
        byte[] bytes = Arrays.copyOf(MAPPED_PREFIX, 16);
        System.arraycopy(v4, 0, bytes, 12, 4);
        return bytes;
    }

    /** A decimal number of 1 to 3 digits up to max, without sign or leading zeros; else -1. */
    private static int parseDecimal(String s, int max) {
        if (s.isEmpty() || s.length() > 3 || (s.length() > 1 && s.charAt(0) == '0')) {
            return -1;
        }
        int value = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value <= max ? value : -1;
    }

    /** Four decimal octets {@code a.b.c.d}, each 0 to 255 without leading zeros; else null. */
    private static byte[] parseV4(String s) {
        String[] parts = s.split("\\.", -1);
        if (parts.length != 4) {
            return null;
        }
        byte[] bytes = new byte[4];
        for (int i = 0; i < 4; i++) {
            int octet = parseDecimal(parts[i], 255);
            if (octet < 0) {
                return null;
            }
            bytes[i] = (byte) octet;
        }
        return bytes;
    }

    /**
     * Eight groups of 1 to 4 hex digits, at most one {@code ::} standing for one or more zero groups,
     * optionally ending in a dotted IPv4 address in place of the last two groups; else null. Zones
     * ({@code %eth0}) are refused: a block names addresses, not interfaces.
     */
    private static byte[] parseV6(String s) {
        if (s.indexOf(':') < 0) {
            return null;
        }
        int gap = s.indexOf("::");
        if (gap >= 0 && s.indexOf("::", gap + 1) >= 0) {
            return null;
        }
        String head = gap >= 0 ? s.substring(0, gap) : s;
        String tail = gap >= 0 ? s.substring(gap + 2) : "";
        int[] headGroups = groups(head, gap < 0);
        int[] tailGroups = gap >= 0 ? groups(tail, true) : new int[0];
        if (headGroups == null || tailGroups == null) {
            return null;
        }
        int count = headGroups.length + tailGroups.length;
        if (gap >= 0 ? count > 7 : count != 8) {
            return null;
        }
        byte[] bytes = new byte[16];
        for (int i = 0; i < headGroups.length; i++) {
            bytes[2 * i] = (byte) (headGroups[i] >> 8);
            bytes[2 * i + 1] = (byte) headGroups[i];
        }
        int offset = 8 - tailGroups.length;
        for (int i = 0; i < tailGroups.length; i++) {
            bytes[2 * (offset + i)] = (byte) (tailGroups[i] >> 8);
            bytes[2 * (offset + i) + 1] = (byte) tailGroups[i];
        }
        return bytes;
    }

    /** The 16-bit groups of a colon-separated part (may be empty); a dotted IPv4 end only if last. */
    private static int[] groups(String part, boolean mayEndInV4) {
        if (part.isEmpty()) {
            return new int[0];
        }
        String[] texts = part.split(":", -1);
        int last = texts.length - 1;
        byte[] v4 = null;
        if (mayEndInV4 && texts[last].indexOf('.') >= 0) {
            v4 = parseV4(texts[last]);
            if (v4 == null) {
                return null;
            }
        }
        int hexCount = v4 == null ? texts.length : last;
        int[] groups = new int[hexCount + (v4 == null ? 0 : 2)];
        for (int i = 0; i < hexCount; i++) {
            String text = texts[i];
            if (text.isEmpty() || text.length() > 4) {
                return null;
            }
            int value = 0;
            for (int k = 0; k < text.length(); k++) {
                int digit = Character.digit(text.charAt(k), 16);
                if (digit < 0 || text.charAt(k) > 'f') { // no full-width or other Unicode digits
                    return null;
                }
                value = (value << 4) | digit;
            }
            groups[i] = value;
        }
        if (v4 != null) {
            groups[hexCount] = ((v4[0] & 0xff) << 8) | (v4[1] & 0xff);
            groups[hexCount + 1] = ((v4[2] & 0xff) << 8) | (v4[3] & 0xff);
        }
        return groups;
    }
}
