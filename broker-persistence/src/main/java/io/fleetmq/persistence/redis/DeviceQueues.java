package io.fleetmq.persistence.redis;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The offline queues of persistent DEVICE sessions in Redis: per client, an ordered queue of
 * encoded messages, each with a sequence number, bounded in length (the oldest goes first) and in
 * time (the whole queue expires a while after its last write: at least its time to live, at most a
 * hundredth of it or a minute longer, so a busy queue does not set its expiry on every write).
 *
 * <p>Every write is one Lua script, so it is atomic, and every key of one client carries the client
 * ID as its hash tag ({@code fleetmq:q:{client}:...}), so a client's queue lives in one hash slot
 * and the scripts run unchanged on Redis Cluster.
 *
 * <p>Keys per client: {@code :i} sorted set of sequence numbers (the order), {@code :d} hash
 * sequence number to entry, {@code :p} hash sequence number to the packet identifier it was sent
 * with, {@code :m} hash with the last sequence number, per source partition the highest source
 * offset queued (so a message routed twice is queued once) and per entry when it was queued
 * ({@code t<seq>}, the writing node's clock, which lets a late delete spare a newer session's entries),
 * and, while the client is connected, which connection reads the queue (field {@code r}, see
 * {@link #read(String, long, int, String)}).
 *
 * <p>Remove, packet identifier and delete are never given up on: they run in order per client and
 * are retried with backoff until Redis takes them (see {@link ClientLanes}); a read of a client's
 * queue waits for the writes asked for before it. The remove of a QoS 1 entry the client
 * acknowledged, and the packet identifier it was sent with, may instead ride on the client's next
 * append ({@link #writeSoon}): a subscriber that keeps up has its queue written anyway. Every failed command is counted in
 * {@code fleetmq_redis_errors_total{op=...}}.
 */
public final class DeviceQueues {

    /**
     * Source positions per client remembered to recognise repeats, at least: more than one routing
     * batch (Kafka's {@code max.poll.records}, 500), the farthest a record is written again after a
     * later one. A position is remembered until this many later ones were queued, and at most twice as long.
     */
    static final int SEEN_WINDOW = 1024;

    /*
     * A record is a repeat when its source position (publish partition and offset) was queued
     * before. Not "at or below the highest offset seen": a router whose write of an earlier record
     * failed while a later one was stored writes the earlier one again after the later, and it must
     * still be queued. So:
     *  - an offset above the highest queued of its partition (field h<partition> of KEYS[3]) is new:
     *    the common case, decided without looking further;
     *  - one at or below the highest offset of its partition that left the window (field
     *    w<partition>) is taken as queued: it was, or its resend would have come within one routing
     *    batch of it;
     *  - anything between is looked up among the remembered positions, exactly.
     * The positions are remembered in two generations, each a string of "partition:offset," (KEYS[5]
     * the current one, appended to; KEYS[6] the one before). When the current one holds SEEN_WINDOW
     * positions (field n), the one before is forgotten, each partition's mark rising to the highest
     * of its positions there, and the current one takes its place (copied rather than renamed, so
     * it keeps no room its growth left spare). Appending to a string costs one command per call,
     * where a sorted set trimmed to an exact length cost a command per message and a range read per
     * call.
     *
     * KEYS[7] is the sorted set of positions the version before kept, whose nodes may still write
     * the queue during a rolling upgrade: they add their positions there and move neither the
     * highest offsets nor the generations. An append first takes what that set holds into the
     * current generation, raising the highest offsets, and deletes it; so positions queued by either
     * version are known to this one. Those this version queued are not known to the version before:
     * a record routed again across the upgrade, by a node of the version before after one of this
     * version stored it, can be queued twice.
     */
    /*
     * The scripts keep each key of a queue alive at least the time to live past a write: a key
     * that has run down to it gets the time to live and a slack (a hundredth of it, at most a
     * minute), so a busy queue sets its expiry about once per slack rather than on every call.
     * The append script asks only KEYS[3] (the meta hash, which lives as long as the queue): every
     * key gets its expiry when it is made or when KEYS[3] has run down, so no key runs down before
     * KEYS[3] does, and when KEYS[3] has, the script sets the expiry of all. PTTL is -2 for a
     * missing key (PEXPIRE leaves it missing) and -1 for one without an expiry yet.
     */
    private static final String RENEW = """
            local function renew(key, ttl)
              if redis.call('PTTL', key) <= ttl then
                redis.call('PEXPIRE', key, ttl + math.min(60000, math.floor(ttl / 100)))
              end
            end
            """;

    /*
     * Applies removes and packet identifiers of one client given as ARGV[first..last], three per
     * write: its kind ('r' remove, 's' packet identifier), the entry's sequence number, the packet
     * identifier. An identifier is kept only for an entry still queued; removes go last, all at
     * once, which gives the same result as in order since a removed entry is gone for good. Returns
     * whether an identifier was stored, and how many removes ran.
     */
    private static final String APPLY = """
            local function apply(first, last)
              local removed, stamps = {}, {}
              local identified = false
              for i = first, last, 3 do
                local s = ARGV[i + 1]
                if ARGV[i] == 'r' then
                  removed[#removed + 1] = s
                  stamps[#stamps + 1] = 't' .. s
                elseif redis.call('ZSCORE', KEYS[1], s) then
                  redis.call('HSET', KEYS[4], s, ARGV[i + 2])
                  identified = true
                end
              end
              for k = 1, #removed, 200 do
                local last = math.min(k + 199, #removed)
                redis.call('ZREM', KEYS[1], unpack(removed, k, last))
                redis.call('HDEL', KEYS[2], unpack(removed, k, last))
                redis.call('HDEL', KEYS[4], unpack(removed, k, last))
                redis.call('HDEL', KEYS[3], unpack(stamps, k, last))
              end
              return identified, #removed
            end
            """;

    /*
     * Appends one or more messages in order, atomically: ARGV[1] limit, ARGV[2] time to live,
     * ARGV[3] now, ARGV[4] window, ARGV[5] how many of the client's writes the call carries (see
     * writeSoon), then those writes (see APPLY; applied before the new messages are stored, so
     * removes make room before the queue is trimmed), then per message its source partition, source
     * offset, the packet identifier it was sent with ('0' for none: see store) and value. A new
     * entry's identifier is kept with it in the same step; a repeat's is not, as the step that
     * queued it kept its own.
     * Returns per message its sequence number (0 for a repeat) and how many old entries it pushed
     * out: the call's new messages are stored together, then the queue is trimmed once, and what
     * the call pushed out is told on its last new message. Last comes the reader registered for the
     * queue (field r of KEYS[3], empty for none), in the same atomic step. One call costs about
     * eight commands, whatever the number of messages.
     */
    private static final String APPEND = """
            local limit = tonumber(ARGV[1])
            local window = tonumber(ARGV[4])
            local carried = tonumber(ARGV[5])
            local start = 6 + 3 * carried
            local out = {}
            local parts, listed = {}, {}
            for i = start, #ARGV, 4 do
              if not listed[ARGV[i]] then
                listed[ARGV[i]] = true
                parts[#parts + 1] = ARGV[i]
              end
            end
            local fields = {'seq', 'n', 'r'}
            for _, p in ipairs(parts) do
              fields[#fields + 1] = 'h' .. p
              fields[#fields + 1] = 'w' .. p
            end
            local got = redis.call('HMGET', KEYS[3], unpack(fields))
            local seq = tonumber(got[1] or '0')
            local first = seq
            local n = tonumber(got[2] or '0')
            local high, mark, raised = {}, {}, {}
            for k, p in ipairs(parts) do
              mark[p] = tonumber(got[2 * k + 3] or '-1')
              high[p] = math.max(mark[p], tonumber(got[2 * k + 2] or '-1'))
            end
            local fresh = {}
            if carried > 0 and apply(6, start - 1) and redis.call('PTTL', KEYS[4]) == -1 then
              fresh[#fresh + 1] = KEYS[4]
            end
            local function remember(text)
              if redis.call('APPEND', KEYS[5], text) == #text then fresh[#fresh + 1] = KEYS[5] end
            end
            local function each(command, key, args)
              for k = 1, #args, 200 do
                redis.call(command, key, unpack(args, k, math.min(k + 199, #args)))
              end
            end
            local function highest(positions)
              local top = {}
              for p, o in string.gmatch(positions, '([^,:]+):(%d+),') do
                o = tonumber(o)
                if top[p] == nil or o > top[p] then top[p] = o end
              end
              return top
            end
            local legacy = redis.call('ZRANGE', KEYS[7], 0, -1)
            if #legacy > 0 then
              local positions = table.concat(legacy, ',') .. ','
              for p, o in pairs(highest(positions)) do
                local h = high[p]
                if h == nil then h = tonumber(redis.call('HGET', KEYS[3], 'h' .. p) or '-1') end
                if o > h then
                  high[p] = o
                  raised[p] = true
                end
              end
              remember(positions)
              n = n + #legacy
              redis.call('DEL', KEYS[7])
            end
            local remembered
            local added = {}
            local seen, order, data, ids = {}, {}, {}, {}
            local last = 0
            for i = start, #ARGV, 4 do
              local part = ARGV[i]
              local off = tonumber(ARGV[i + 1])
              local member = part .. ':' .. ARGV[i + 1]
              local queued = false
              if off <= high[part] then
                if off <= mark[part] or added[member] then
                  queued = true
                else
                  if remembered == nil then
                    remembered = ',' .. (redis.call('GET', KEYS[6]) or '') .. (redis.call('GET', KEYS[5]) or '')
                  end
                  queued = string.find(remembered, ',' .. member .. ',', 1, true) ~= nil
                end
              end
              if queued then
                out[#out + 1] = 0
                out[#out + 1] = 0
              else
                seq = seq + 1
                added[member] = true
                if off > high[part] then
                  high[part] = off
                  raised[part] = true
                end
                seen[#seen + 1] = member
                order[#order + 1] = seq
                order[#order + 1] = seq
                data[#data + 1] = seq
                data[#data + 1] = ARGV[i + 3]
                if ARGV[i + 2] ~= '0' then
                  ids[#ids + 1] = seq
                  ids[#ids + 1] = ARGV[i + 2]
                end
                out[#out + 1] = seq
                out[#out + 1] = 0
                last = #out
              end
            end
            if seq > first or #legacy > 0 then
              local meta = {}
              if seq > first then
                remember(table.concat(seen, ',') .. ',')
                n = n + #seen
                meta[#meta + 1] = 'seq'
                meta[#meta + 1] = seq
                for k = 1, #order, 2 do
                  meta[#meta + 1] = 't' .. order[k]
                  meta[#meta + 1] = ARGV[3]
                end
              end
              if n >= window then
                for p, o in pairs(highest(redis.call('GET', KEYS[6]) or '')) do
                  local w = mark[p]
                  if w == nil then w = tonumber(redis.call('HGET', KEYS[3], 'w' .. p) or '-1') end
                  if o > w then
                    meta[#meta + 1] = 'w' .. p
                    meta[#meta + 1] = o
                  end
                end
                redis.call('SET', KEYS[6], redis.call('GET', KEYS[5]))
                redis.call('DEL', KEYS[5])
                fresh[#fresh + 1] = KEYS[6]
                n = 0
              end
              for p in pairs(raised) do
                meta[#meta + 1] = 'h' .. p
                meta[#meta + 1] = high[p]
              end
              meta[#meta + 1] = 'n'
              meta[#meta + 1] = n
              each('HSET', KEYS[3], meta)
            end
            if seq > first then
              each('ZADD', KEYS[1], order)
              each('HSET', KEYS[2], data)
              if #ids > 0 then
                each('HSET', KEYS[4], ids)
                if redis.call('PTTL', KEYS[4]) == -1 then fresh[#fresh + 1] = KEYS[4] end
              end
              local size = redis.call('ZCARD', KEYS[1])
              if size == #order / 2 then
                fresh[#fresh + 1] = KEYS[1]
                fresh[#fresh + 1] = KEYS[2]
              end
              local over = size - limit
              if over > 0 then
                for _, s in ipairs(redis.call('ZRANGE', KEYS[1], 0, over - 1)) do
                  redis.call('HDEL', KEYS[2], s)
                  redis.call('HDEL', KEYS[4], s)
                  redis.call('HDEL', KEYS[3], 't' .. s)
                end
                redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1)
                out[last] = over
              end
            end
            local ttl = tonumber(ARGV[2])
            local life = ttl + math.min(60000, math.floor(ttl / 100))
            if redis.call('PTTL', KEYS[3]) <= ttl then
              for k = 1, 6 do redis.call('PEXPIRE', KEYS[k], life) end
            else
              for _, key in ipairs(fresh) do redis.call('PEXPIRE', key, life) end
            end
            out[#out + 1] = got[3] or ''
            return out
            """;
    private static final LuaScript APPEND_SCRIPT = new LuaScript(APPLY + APPEND);

    /*
     * ARGV[1] after which sequence number, ARGV[2] how many; ARGV[3], unless empty, registers the
     * reader (field r of KEYS[3], kept as long as the queue, ARGV[4] milliseconds at least).
     */
    private static final String READ = """
            if ARGV[3] ~= '' then
              redis.call('HSET', KEYS[3], 'r', ARGV[3])
              if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[3], ARGV[4]) end
            end
            local seqs = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'LIMIT', 0, tonumber(ARGV[2]))
            local out = {}
            for _, s in ipairs(seqs) do
              out[#out + 1] = s
              out[#out + 1] = redis.call('HGET', KEYS[2], s) or ''
              out[#out + 1] = redis.call('HGET', KEYS[4], s) or '0'
            end
            return out
            """;
    private static final LuaScript READ_SCRIPT = new LuaScript(READ);

    /** Unregisters reader ARGV[1], unless another has registered since. */
    private static final String RELEASE = """
            if redis.call('HGET', KEYS[3], 'r') == ARGV[1] then
              redis.call('HDEL', KEYS[3], 'r')
              return 1
            end
            return 0
            """;
    private static final LuaScript RELEASE_SCRIPT = new LuaScript(RELEASE);

    /*
     * Removes of entries (acknowledged, expired) and packet identifiers entries were sent with, in
     * the order asked for: ARGV[1] time to live of the identifiers, then the writes (see APPLY).
     * Returns how many removes it ran.
     */
    private static final String WRITES = """
            local identified, removes = apply(2, #ARGV)
            if identified then renew(KEYS[4], tonumber(ARGV[1])) end
            return removes
            """;
    private static final LuaScript WRITES_SCRIPT = new LuaScript(RENEW + APPLY + WRITES);

    /*
     * Deletes the entries queued before the delete was asked for (ARGV[1], the asking node's
     * clock; an entry without a time predates the stamps and goes too). Entries queued later belong
     * to the client's next session: a delete retried after a Redis outage must not take them.
     */
    private static final String DELETE = """
            local cutoff = tonumber(ARGV[1])
            local n = 0
            local kept = 0
            for _, s in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
              local t = tonumber(redis.call('HGET', KEYS[3], 't' .. s) or '0')
              if t < cutoff then
                redis.call('ZREM', KEYS[1], s)
                redis.call('HDEL', KEYS[2], s)
                redis.call('HDEL', KEYS[4], s)
                redis.call('HDEL', KEYS[3], 't' .. s)
                n = n + 1
              else
                kept = kept + 1
              end
            end
            if kept == 0 then redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]) end
            return n
            """;
    private static final LuaScript DELETE_SCRIPT = new LuaScript(DELETE);

    /**
     * One queued message; {@code packetId} is 0 if it was never sent, the identifier it was sent
     * with, or minus that identifier once the client answered its QoS 2 PUBLISH with PUBREC (what
     * is left is PUBREL and PUBCOMP).
     */
    public record Entry(long seq, byte[] value, int packetId) {
    }

    /** What {@link #append} did: the new entry's sequence number (0 if it was a repeat) and how many old ones went. */
    public record Appended(long seq, long dropped) {
        public boolean duplicate() {
            return seq == 0;
        }
    }

    /**
     * What {@link #appendAll} did, per message, and the reader registered for the queue at that
     * moment ({@code null} if none): whoever must learn that the queue grew.
     */
    public record Appends(List<Appended> items, String reader) {
        public Appends {
            items = List.copyOf(items);
        }
    }

    private final RedisClusterAsyncCommands<String, byte[]> commands;
    private final String prefix;
    private final int limit;
    private final Duration ttl;
    private final ClientLanes lanes;
    private final MeterRegistry meters;
    private final LongSupplier clock;
    private final Map<String, Counter> errors = new ConcurrentHashMap<>();
    /** Where writes wait for their client's next append; null: writes are never deferred. */
    private final ScheduledExecutorService timer;
    /**
     * Removes and packet identifiers waiting for their client's next append to carry them (see
     * {@link #writeSoon}), by client; under {@code deferLock}, which is also held while they go to
     * the client's lane, so that they reach it in their order with a delete.
     */
    private final Map<String, List<ClientLanes.Write>> deferred = new HashMap<>();
    /** Clients with writes that appends carry right now; under {@code deferLock}. */
    private final Map<String, Carry> carrying = new HashMap<>();
    private final Object deferLock = new Object();
    /** Writes in {@link #deferred}, over all clients. */
    private final AtomicInteger deferredCount = new AtomicInteger();

    /** How many appends carry writes of a client now, and whether a delete was asked for since. */
    private static final class Carry {
        int appends;
        boolean deleted;
    }

    /** Without retries or meters: a failed write fails its future. For tests of the scripts. */
    public DeviceQueues(RedisClusterAsyncCommands<String, byte[]> commands, String prefix, int limit, Duration ttl) {
        this(commands, prefix, limit, ttl, null, null);
    }

    /**
     * @param limit      most messages per client; beyond it the oldest is dropped
     * @param ttl        how long a queue lives at least after its last write, and the longest a message is kept
     * @param retryTimer where failed writes wait for their next attempt; null: no retries
     * @param meters     where failures are counted; null: not counted
     */
    public DeviceQueues(RedisClusterAsyncCommands<String, byte[]> commands, String prefix, int limit, Duration ttl,
            ScheduledExecutorService retryTimer, MeterRegistry meters) {
        this(commands, prefix, limit, ttl, retryTimer, meters, System::currentTimeMillis);
    }

    /** @param clock stamps appends and deletes (epoch milliseconds); the wall clock in the node */
    public DeviceQueues(RedisClusterAsyncCommands<String, byte[]> commands, String prefix, int limit, Duration ttl,
            ScheduledExecutorService retryTimer, MeterRegistry meters, LongSupplier clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
        this.meters = meters;
        this.timer = retryTimer;
        this.lanes = new ClientLanes(retryTimer, op -> failed(op.label), this::writeNow);
        if (meters != null) {
            Gauge.builder("fleetmq.redis.pending.writes", this, DeviceQueues::pendingWrites)
                    .description("DEVICE queue operations waiting for Redis (retried until it takes them), writes"
                            + " waiting for an append to carry them included")
                    .register(meters);
            // Every operation's series from the start, so rate() and alerts see the first error.
            for (String op : java.util.List.of("append", "read", "remove", "sent_with", "delete", "release", "store", "size")) {
                errorCounter(op);
            }
        }
        this.commands = Objects.requireNonNull(commands, "commands");
        this.prefix = Objects.requireNonNull(prefix, "prefix");
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1");
        }
        this.limit = limit;
        this.ttl = ttl;
    }

    /** Operations waiting for Redis or in progress, over all clients, writes waiting for an append included. */
    public int pendingWrites() {
        return lanes.pending() + deferredCount.get();
    }

    private void failed(String op) {
        if (meters != null) {
            errorCounter(op).increment();
        }
    }

    private Counter errorCounter(String op) {
        return errors.computeIfAbsent(op, o -> Counter.builder("fleetmq.redis.errors")
                .description("Redis commands that failed, by operation (writes are retried)")
                .tag("op", o).register(meters));
    }

    /** Counts a failure of a command that is not retried here (its caller tries again). */
    private <T> CompletionStage<T> counted(String op, CompletionStage<T> stage) {
        return stage.whenComplete((v, e) -> {
            if (e != null) {
                failed(op);
            }
        });
    }

    public int limit() {
        return limit;
    }

    public Duration ttl() {
        return ttl;
    }

    /** One message to queue, from the given position of the {@code publish} topic. */
    public record Item(int sourcePartition, long sourceOffset, byte[] value) {
    }

    /**
     * Queues {@code value} for {@code clientId}, unless a message from the same source position was
     * queued before (see {@link #appendAll}).
     */
    public CompletionStage<Appended> append(String clientId, int sourcePartition, long sourceOffset, byte[] value) {
        return appendAll(clientId, List.of(new Item(sourcePartition, sourceOffset, value)))
                .thenApply(r -> r.items().get(0));
    }

    /**
     * Queues the messages for {@code clientId} in the order given, skipping those whose source
     * position was queued before, all or none: one atomic script. A writer that stops at the first
     * failed call for a client therefore never stores a later message of it before an earlier one.
     * Not retried here: the writer reads its batch from Kafka again until Redis takes it.
     */
    public CompletionStage<Appends> appendAll(String clientId, List<Item> items) {
        return appendAll(clientId, items, clock.getAsLong(), null);
    }

    /**
     * As {@link #appendAll(String, List)}, the entries stamped {@code stamp} for a delete's cutoff,
     * each new one with its packet identifier {@code packetIds[i]} (none if null or 0).
     */
    private CompletionStage<Appends> appendAll(String clientId, List<Item> items, long stamp, int[] packetIds) {
        List<ClientLanes.Write> carried = takeDeferred(clientId);
        byte[][] args = new byte[5 + 3 * carried.size() + 4 * items.size()][];
        args[0] = bytes(Integer.toString(limit));
        args[1] = bytes(Long.toString(ttl.toMillis()));
        args[2] = bytes(Long.toString(stamp));
        args[3] = bytes(Integer.toString(SEEN_WINDOW));
        args[4] = bytes(Integer.toString(carried.size()));
        int a = 5;
        for (ClientLanes.Write w : carried) {
            args[a++] = w.op() == ClientLanes.Op.REMOVE ? REMOVE_KIND : SENT_WITH_KIND;
            args[a++] = bytes(Long.toString(w.seq()));
            args[a++] = bytes(Integer.toString(w.arg()));
        }
        for (int i = 0; i < items.size(); i++) {
            Item item = items.get(i);
            args[a++] = bytes("p" + item.sourcePartition());
            args[a++] = bytes(Long.toString(item.sourceOffset()));
            args[a++] = packetIds == null || packetIds[i] == 0 ? NO_PACKET_ID : bytes(Integer.toString(packetIds[i]));
            args[a++] = item.value();
        }
        CompletionStage<List<Object>> run = APPEND_SCRIPT
                .run(commands(), ScriptOutputType.MULTI, keys(clientId), args);
        if (!carried.isEmpty()) {
            run = run.whenComplete((r, error) -> carried(clientId, carried, error == null));
        }
        return counted("append", run
                .thenApply(r -> {
                    List<Appended> out = new ArrayList<>(r.size() / 2);
                    for (int i = 0; i + 1 < r.size(); i += 2) {
                        out.add(new Appended((Long) r.get(i), (Long) r.get(i + 1)));
                    }
                    String reader = r.size() % 2 == 1 ? text(r.get(r.size() - 1)) : "";
                    return new Appends(out, reader.isEmpty() ? null : reader);
                }));
    }

    /**
     * Queues messages a connected session held in memory (see {@link #appendAll}), and the packet
     * identifiers of those it sent already ({@code packetIds[i]}, 0 for one not sent), as one step
     * of the client's lane: a read asked for after it sees them with their identifiers, so a next
     * connection gets them again as the same packets with DUP set. Entries and identifiers go in one
     * atomic script, so a store whose answer was lost and that is run again (it is retried until
     * Redis takes it; the source positions make it store nothing twice) finds them together; a
     * delete asked for meanwhile makes it moot, and it then completes with null. The entries are stamped as queued
     * before this call, so a delete asked for after it takes them however soon it runs: they are
     * the session's of now, not a next one's.
     */
    public CompletionStage<Appends> store(String clientId, List<Item> items, int[] packetIds) {
        if (packetIds.length != items.size()) {
            throw new IllegalArgumentException("one packet identifier per item");
        }
        long stamp = clock.getAsLong() - 1;
        return lanes.submit(clientId, ClientLanes.Op.STORE, 0, () -> appendAll(clientId, items, stamp, packetIds));
    }

    /**
     * Up to {@code max} entries after sequence number {@code afterSeq}, in order, once the writes
     * asked for before (a clean start's delete, removes of acknowledged entries) are done. Fails
     * without retrying when Redis is away.
     */
    public CompletionStage<List<Entry>> read(String clientId, long afterSeq, int max) {
        return read(clientId, afterSeq, max, null);
    }

    /**
     * As {@link #read(String, long, int)}, and registers {@code reader} (unless null) as the one
     * reading the queue, in the same atomic step: every later append answers with it
     * ({@link Appends#reader()}), so the writer can tell the reader of an entry this read missed.
     * Either the read sees an entry, or the entry's append sees the reader; none falls between.
     */
    public CompletionStage<List<Entry>> read(String clientId, long afterSeq, int max, String reader) {
        return lanes.submit(clientId, ClientLanes.Op.READ, 0, () -> readNow(clientId, afterSeq, max, reader));
    }

    /**
     * Unregisters {@code reader} (its connection ended), unless another reader registered since.
     * Retried until Redis takes it; a stale registration only costs notices nobody acts on.
     */
    public CompletionStage<Void> release(String clientId, String reader) {
        return lanes.submit(clientId, ClientLanes.Op.RELEASE, 0, () -> RELEASE_SCRIPT
                .<Long>run(commands(), ScriptOutputType.INTEGER, keys(clientId), bytes(reader))
                .thenApply(r -> (Void) null));
    }

    private CompletionStage<List<Entry>> readNow(String clientId, long afterSeq, int max, String reader) {
        return READ_SCRIPT.<List<Object>>run(commands(), ScriptOutputType.MULTI, keys(clientId),
                bytes(Long.toString(afterSeq)), bytes(Integer.toString(max)), bytes(reader == null ? "" : reader),
                bytes(Long.toString(ttl.toMillis())))
                .thenApply(r -> {
                    List<Entry> entries = new ArrayList<>(r.size() / 3);
                    for (int i = 0; i + 2 < r.size(); i += 3) {
                        entries.add(new Entry(Long.parseLong(text(r.get(i))), (byte[]) r.get(i + 1),
                                Integer.parseInt(text(r.get(i + 2)))));
                    }
                    return entries;
                });
    }

    /** Removes an entry: acknowledged by the client, or expired. Retried until Redis takes it. */
    public CompletionStage<Void> remove(String clientId, long seq) {
        return lanes.submitWrite(clientId, ClientLanes.Op.REMOVE, seq, 0).thenApply(r -> (Void) null);
    }

    /**
     * How long a write given to {@link #writeSoon} waits for the client's next append to carry it;
     * what is still waiting then goes on its own, as {@link #remove} and {@link #sentWith} do.
     */
    public static final Duration CARRY_DELAY = Duration.ofMillis(200);

    /**
     * Removes an entry the client acknowledged, as {@link #remove} does, but with the client's next
     * append if one comes within {@link #CARRY_DELAY} (see {@link #writeSoon}).
     */
    public void removeSoon(String clientId, long seq) {
        writeSoon(clientId, new ClientLanes.Write(ClientLanes.Op.REMOVE, seq, 0));
    }

    /**
     * Remembers the packet identifier an entry was sent with, as {@link #sentWith} does, but with the
     * client's next append if one comes within {@link #CARRY_DELAY} (see {@link #writeSoon}).
     */
    public void sentWithSoon(String clientId, long seq, int packetId) {
        writeSoon(clientId, new ClientLanes.Write(ClientLanes.Op.SENT_WITH, seq, packetId));
    }

    /**
     * A remove or packet identifier that rides on the client's next append if one comes within
     * {@link #CARRY_DELAY}, else goes on its own, retried until Redis takes it. A subscriber that
     * keeps up has its queue written by every batch of its messages anyway, so such writes then
     * cost Redis no call of their own. Until it is written the queue holds what it held: a
     * connection that reads past the entry does not see it, {@link #flushWrites} sends what waits
     * before a next connection reads, and a delete makes what waits moot. Without a timer (a queue
     * made without retries) the write goes at once.
     */
    private void writeSoon(String clientId, ClientLanes.Write write) {
        if (timer == null) {
            lanes.submitWrite(clientId, write.op(), write.seq(), write.arg());
            return;
        }
        List<ClientLanes.Write> fresh = null;
        synchronized (deferLock) {
            List<ClientLanes.Write> waiting = deferred.get(clientId);
            if (waiting == null) {
                waiting = fresh = new ArrayList<>(4);
                deferred.put(clientId, waiting);
            }
            waiting.add(write);
            deferredCount.incrementAndGet();
        }
        if (fresh != null) {
            // This list's own deadline: one that an append took is not the next one's.
            List<ClientLanes.Write> mine = fresh;
            try {
                timer.schedule(() -> flushWrites(clientId, mine), CARRY_DELAY.toMillis(), TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException stopping) {
                flushWrites(clientId); // the node is stopping: on their own, now
            }
        }
    }

    /** The deadline of {@code list}: sent on its own if it still waits. */
    private void flushWrites(String clientId, List<ClientLanes.Write> list) {
        synchronized (deferLock) {
            if (deferred.get(clientId) == list) {
                flushWrites(clientId);
            }
        }
    }

    /**
     * Sends the client's writes that wait for an append (see {@link #writeSoon}) on their own, now:
     * before a next connection's read, which waits for the writes asked for before it.
     */
    public void flushWrites(String clientId) {
        synchronized (deferLock) {
            List<ClientLanes.Write> waiting = deferred.remove(clientId);
            if (waiting != null) {
                deferredCount.addAndGet(-waiting.size());
                submitAll(clientId, waiting);
            }
        }
    }

    private void submitAll(String clientId, List<ClientLanes.Write> writes) {
        for (ClientLanes.Write w : writes) {
            lanes.submitWrite(clientId, w.op(), w.seq(), w.arg());
        }
    }

    /** The writes that wait for the client's next append: this one carries them. */
    private List<ClientLanes.Write> takeDeferred(String clientId) {
        if (timer == null) {
            return List.of();
        }
        synchronized (deferLock) {
            List<ClientLanes.Write> waiting = deferred.remove(clientId);
            if (waiting == null) {
                return List.of();
            }
            deferredCount.addAndGet(-waiting.size());
            carrying.computeIfAbsent(clientId, c -> new Carry()).appends++;
            return waiting;
        }
    }

    /**
     * An append that carried writes is done. If it failed, they go on their own (retried until
     * Redis takes them), unless a delete of the queue was asked for meanwhile: that delete takes
     * the entries, and a write after it could touch an entry of the next session that has the same
     * sequence number.
     */
    private void carried(String clientId, List<ClientLanes.Write> writes, boolean stored) {
        synchronized (deferLock) {
            Carry carry = carrying.get(clientId);
            boolean deleted = carry != null && carry.deleted;
            if (carry != null && --carry.appends == 0) {
                carrying.remove(clientId);
            }
            if (!stored && !deleted) {
                submitAll(clientId, writes);
            }
        }
    }

    /**
     * Remembers the packet identifier an entry was sent with, for resending it after a reconnect;
     * negative once PUBREC came for it (see {@link Entry}). Retried until Redis takes it.
     */
    public CompletionStage<Void> sentWith(String clientId, long seq, int packetId) {
        return lanes.submitWrite(clientId, ClientLanes.Op.SENT_WITH, seq, packetId).thenApply(r -> (Void) null);
    }

    /** Runs removes and packet identifiers of one client as one script, in order. */
    private CompletionStage<?> writeNow(String clientId, List<ClientLanes.Write> writes) {
        byte[][] args = new byte[1 + 3 * writes.size()][];
        args[0] = bytes(Long.toString(ttl.toMillis()));
        int a = 1;
        for (ClientLanes.Write w : writes) {
            args[a++] = w.op() == ClientLanes.Op.REMOVE ? REMOVE_KIND : SENT_WITH_KIND;
            args[a++] = bytes(Long.toString(w.seq()));
            args[a++] = bytes(Integer.toString(w.arg()));
        }
        return WRITES_SCRIPT.<Long>run(commands(), ScriptOutputType.INTEGER, keys(clientId), args);
    }

    private static final byte[] REMOVE_KIND = {'r'};
    private static final byte[] SENT_WITH_KIND = {'s'};
    private static final byte[] NO_PACKET_ID = {'0'};

    /**
     * Deletes the client's queue: its session ended. Completes with the number of messages it held
     * (0 for a delete that a later one made moot). Retried until Redis takes it, and a read asked
     * for after it waits for it, so a clean start never sees the old session's queue; entries
     * queued after the delete was asked for (by the writing node's clock) are the next session's
     * and stay.
     */
    public CompletionStage<Long> delete(String clientId) {
        // What "the queue" is is fixed now, when the session ends, not when Redis takes the delete:
        // a clean start's new session may have had entries queued by then.
        byte[] cutoff = bytes(Long.toString(clock.getAsLong()));
        synchronized (deferLock) {
            // Writes still waiting are moot: the delete takes their entries.
            List<ClientLanes.Write> waiting = deferred.remove(clientId);
            if (waiting != null) {
                deferredCount.addAndGet(-waiting.size());
            }
            Carry carry = carrying.get(clientId);
            if (carry != null) {
                carry.deleted = true;
            }
            return lanes.submit(clientId, ClientLanes.Op.DELETE, 0,
                    () -> DELETE_SCRIPT.<Long>run(commands(), ScriptOutputType.INTEGER, keys(clientId), cutoff));
        }
    }

    /** Messages queued for the client. */
    public CompletionStage<Long> size(String clientId) {
        return counted("size", commands().zcard(keys(clientId)[0]));
    }

    private RedisClusterAsyncCommands<String, byte[]> commands() {
        return commands;
    }

    private String[] keys(String clientId) {
        String base = prefix + "q:{" + clientId + "}:";
        return new String[] {base + "i", base + "d", base + "m", base + "p", base + "a", base + "b", base + "s"};
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(Object o) {
        return o instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(o);
    }

    /** The keys of one client's queue, all in one hash slot. */
    List<String> keysOf(String clientId) {
        return List.of(keys(clientId));
    }
}
