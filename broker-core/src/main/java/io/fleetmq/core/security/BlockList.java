package io.fleetmq.core.security;

import java.net.InetAddress;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The blocked entries of the cluster, compiled for matching CONNECTs and connected clients.
 *
 * <ul>
 *   <li>{@code client_id} and {@code username} compare exactly (case matters).
 *   <li>{@code ip} is an address or a CIDR range, IPv4 or IPv6; an IPv4-mapped IPv6 client address
 *       ({@code ::ffff:10.1.2.3}) counts as its IPv4 address.
 *   <li>{@code regex} must match the WHOLE target value ({@link java.util.regex.Matcher#matches}), so
 *       {@code sensor-.*} blocks {@code sensor-1} but not {@code old-sensor-1}. For target {@code ip}
 *       the address is matched as text: dotted IPv4 ({@code 10.1.2.3}, also for a mapped address)
 *       or the short IPv6 form of RFC 5952 ({@code 2001:db8::1}), without zone. Expressions come
 *       from operators and run on the CONNECT path as written: one that backtracks badly slows
 *       every CONNECT, so keep them simple.
 * </ul>
 *
 * Instances are immutable and safe to share between threads.
 */
public final class BlockList {

    private static final Logger log = LoggerFactory.getLogger(BlockList.class);

    public static final BlockList EMPTY = new BlockList(List.of(), List.of());

    private final List<BlockEntry> entries;
    private final List<Compiled> compiled;
    private final boolean needsAddressText;

    private BlockList(List<BlockEntry> entries, List<Compiled> compiled) {
        this.entries = entries;
        this.compiled = compiled;
        this.needsAddressText = compiled.stream()
                .anyMatch(c -> c.pattern != null && BlockEntry.IP.equals(c.entry.target()));
    }

    /**
     * Compiles {@code entries}; an entry that does not pass {@link #validate} matches nothing (and is
     * logged), so one bad row cannot stop the others from applying.
     */
    public static BlockList of(List<BlockEntry> entries) {
        Objects.requireNonNull(entries, "entries");
        if (entries.isEmpty()) {
            return EMPTY;
        }
        List<BlockEntry> copy = List.copyOf(entries);
        List<Compiled> compiled = new ArrayList<>(copy.size());
        for (BlockEntry entry : copy) {
            String reason = validate(entry.type(), entry.value(), entry.target());
            if (reason != null) {
                log.warn("Blocked entry {} matches nothing: {}", entry.id(), reason);
                continue;
            }
            compiled.add(Compiled.of(entry));
        }
        return new BlockList(copy, List.copyOf(compiled));
    }

    /**
     * Null if the entry is valid, else a one-line reason naming the field ({@code type},
     * {@code value}, {@code target}) for a 400 answer: an IP address or CIDR range (IPv4 or IPv6) for
     * {@code ip}, a regular expression that compiles for {@code regex} with a target. Only
     * {@code regex} takes a target; for the others it must be null. No name is ever looked up.
     */
    public static String validate(String type, String value, String target) {
        if (type == null || !(type.equals(BlockEntry.CLIENT_ID) || type.equals(BlockEntry.USERNAME)
                || type.equals(BlockEntry.IP) || type.equals(BlockEntry.REGEX))) {
            return "type: must be one of client_id, username, ip, regex";
        }
        if (value == null || value.isEmpty()) {
            return "value: must not be empty";
        }
        if (type.equals(BlockEntry.REGEX)) {
            if (target == null) {
                return "target: required for type regex (client_id, username or ip)";
            }
            if (!(target.equals(BlockEntry.CLIENT_ID) || target.equals(BlockEntry.USERNAME)
                    || target.equals(BlockEntry.IP))) {
                return "target: must be one of client_id, username, ip";
            }
            try {
                Pattern.compile(value);
            } catch (PatternSyntaxException e) {
                // getMessage() spans lines; a 400 answer wants one.
                return "value: not a valid regular expression (" + e.getDescription()
                        + (e.getIndex() >= 0 ? " near index " + e.getIndex() : "") + ")";
            }
            return null;
        }
        if (target != null) {
            return "target: only type regex takes a target";
        }
        if (type.equals(BlockEntry.IP)) {
            String problem = IpRange.problem(value);
            if (problem != null) {
                return "value: " + problem;
            }
        }
        return null;
    }

    /**
     * The first entry, not expired at {@code now}, that blocks a client with these values; username
     * and address may be null (then entries on them do not match).
     */
    public Optional<BlockEntry> match(String clientId, String username, InetAddress address, Instant now) {
        String addressText = null;
        if (needsAddressText && address != null) {
            addressText = IpRange.text(address);
        }
        for (Compiled c : compiled) {
            if (!c.entry.expired(now) && c.blocks(clientId, username, address, addressText)) {
                return Optional.of(c.entry);
            }
        }
        return Optional.empty();
    }

    /** How many entries the list was made from, including any that match nothing. */
    public int size() {
        return entries.size();
    }

    /** One valid entry, ready to match: its range or pattern made once. */
    private record Compiled(BlockEntry entry, IpRange range, Pattern pattern) {

        static Compiled of(BlockEntry entry) {
            return switch (entry.type()) {
                case BlockEntry.IP -> new Compiled(entry, IpRange.parse(entry.value()), null);
                case BlockEntry.REGEX -> new Compiled(entry, null, Pattern.compile(entry.value()));
                default -> new Compiled(entry, null, null);
            };
        }

        boolean blocks(String clientId, String username, InetAddress address, String addressText) {
            return switch (entry.type()) {
                case BlockEntry.CLIENT_ID -> entry.value().equals(clientId);
                case BlockEntry.USERNAME -> entry.value().equals(username);
                case BlockEntry.IP -> address != null && range.contains(address);
                case BlockEntry.REGEX -> {
                    String subject = switch (entry.target()) {
                        case BlockEntry.CLIENT_ID -> clientId;
                        case BlockEntry.USERNAME -> username;
                        default -> addressText;
                    };
                    yield subject != null && pattern.matcher(subject).matches();
                }
                default -> false;
            };
        }
    }
}
