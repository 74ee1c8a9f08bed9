package io.fleetmq.persistence.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * A Lua script run by its SHA-1 digest ({@code EVALSHA}), so Redis neither receives nor hashes the
 * script's text on every call. A server that does not know the script yet (first use, a restart, a
 * failover, another node of a Redis Cluster) answers {@code NOSCRIPT}; the call is then made once
 * with the text ({@code EVAL}), which also makes the server remember it.
 */
final class LuaScript {

    private final String text;
    private final String sha1;

    LuaScript(String text) {
        this.text = text;
        this.sha1 = sha1(text);
    }

    String sha1() {
        return sha1;
    }

    <T> CompletionStage<T> run(RedisClusterAsyncCommands<String, byte[]> commands, ScriptOutputType type,
            String[] keys, byte[]... args) {
        CompletionStage<T> bySha = commands.<T>evalsha(sha1, type, keys, args);
        return bySha.handle((value, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(value);
            }
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            if (cause instanceof RedisNoScriptException) {
                return commands.<T>eval(text, type, keys, args);
            }
            return CompletableFuture.<T>failedFuture(cause);
        }).thenCompose(stage -> stage);
    }

    private static String sha1(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-1", e);
        }
    }
}
