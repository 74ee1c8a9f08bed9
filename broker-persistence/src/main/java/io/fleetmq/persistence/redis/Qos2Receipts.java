package io.fleetmq.persistence.redis;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * The packet identifiers of QoS 2 PUBLISH packets a persistent session received, stored in Kafka and
 * answered (or about to answer) with PUBREC, and not yet released by PUBREL. Kept here rather than
 * in one node's memory so that the node a session resumes on, after its previous node died, still
 * recognises a resend and does not store it again [MQTT-4.3.3-10].
 *
 * <p>One set per client, {@code <prefix>q2:{client}}: the client ID is the hash tag, as in
 * {@link DeviceQueues}, so a client's receipts share the hash slot of its queue. The set expires
 * with the session: every write sets its TTL to the session expiry interval (plus a margin for the
 * time between the last write and the end of the connection), and the session's end deletes it.
 */
public final class Qos2Receipts {

    /** Between the last write and the moment the session's expiry starts counting (its connection ends). */
    static final Duration MARGIN = Duration.ofHours(1);

    private static final String ADD = """
            redis.call('SADD', KEYS[1], ARGV[1])
            redis.call('PEXPIRE', KEYS[1], ARGV[2])
            return 1
            """;
    private static final LuaScript ADD_SCRIPT = new LuaScript(ADD);

    private static final String TOUCH = """
            if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
            return 1
            """;
    private static final LuaScript TOUCH_SCRIPT = new LuaScript(TOUCH);

    private final RedisClusterAsyncCommands<String, byte[]> commands;
    private final String prefix;

    public Qos2Receipts(RedisClusterAsyncCommands<String, byte[]> commands, String prefix) {
        this.commands = Objects.requireNonNull(commands, "commands");
        this.prefix = Objects.requireNonNull(prefix, "prefix");
    }

    /** Remembers {@code packetId} as received and stored; the record lives as long as the session may. */
    public CompletionStage<Void> add(String clientId, int packetId, Duration sessionExpiry) {
        return ADD_SCRIPT.<Long>run(commands, ScriptOutputType.INTEGER, new String[] {key(clientId)},
                        bytes(Integer.toString(packetId)), bytes(Long.toString(ttlMillis(sessionExpiry))))
                .thenApply(r -> null);
    }

    /** PUBREL came for {@code packetId}: the identifier is free again [MQTT-4.3.3-11]. */
    public CompletionStage<Void> remove(String clientId, int packetId) {
        return commands.srem(key(clientId), bytes(Integer.toString(packetId))).thenApply(r -> null);
    }

    /** The identifiers still waiting for PUBREL. */
    public CompletionStage<Set<Integer>> pending(String clientId) {
        return commands.smembers(key(clientId)).thenApply(members -> {
            Set<Integer> ids = new HashSet<>();
            for (byte[] m : members) {
                ids.add(Integer.parseInt(new String(m, StandardCharsets.UTF_8)));
            }
            return ids;
        });
    }

    /** The connection ended: the session expiry (perhaps changed by DISCONNECT) counts from now. */
    public CompletionStage<Void> touch(String clientId, Duration sessionExpiry) {
        return TOUCH_SCRIPT.<Long>run(commands, ScriptOutputType.INTEGER, new String[] {key(clientId)},
                bytes(Long.toString(ttlMillis(sessionExpiry)))).thenApply(r -> null);
    }

    /** The session ended: its QoS 2 state ends with it. */
    public CompletionStage<Void> delete(String clientId) {
        return commands.del(key(clientId)).thenApply(r -> null);
    }

    String key(String clientId) {
        return prefix + "q2:{" + clientId + "}";
    }

    List<String> keysOf(String clientId) {
        return List.of(key(clientId));
    }

    private static long ttlMillis(Duration sessionExpiry) {
        return sessionExpiry.plus(MARGIN).toMillis();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
