package io.fleetmq.persistence.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fleetmq.testkit.TestServices;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.ScriptOutputType;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Against the embedded Redis of the test kit. */
class LuaScriptTest {

    private static Redis redis;

    @BeforeAll
    static void connect() {
        redis = Redis.connect(new RedisSettings(TestServices.shared().redisUrl(), Duration.ofSeconds(5)));
    }

    @AfterAll
    static void close() {
        redis.close();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aScriptTheServerDoesNotKnowIsSentOnceAndThenRunByItsDigest() {
        // A script no other test uses, so the server has not seen it.
        String marker = UUID.randomUUID().toString();
        LuaScript script = new LuaScript("-- " + marker + "\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])");
        String key = "lua-test:" + marker;
        assertEquals(List.of(false), redis.sync().scriptExists(script.sha1()), "unknown before its first use");

        Long first = script.<Long>run(redis.binaryCommands(), ScriptOutputType.INTEGER, new String[] {key}, bytes("2"))
                .toCompletableFuture().join();
        assertEquals(2L, first);
        assertEquals(List.of(true), redis.sync().scriptExists(script.sha1()), "the first run taught the server");

        Long second = script.<Long>run(redis.binaryCommands(), ScriptOutputType.INTEGER, new String[] {key}, bytes("3"))
                .toCompletableFuture().join();
        assertEquals(5L, second);

        redis.sync().scriptFlush(); // as after a restart or a failover
        Long third = script.<Long>run(redis.binaryCommands(), ScriptOutputType.INTEGER, new String[] {key}, bytes("1"))
                .toCompletableFuture().join();
        assertEquals(6L, third, "run again by its text once the server forgot it");
        redis.sync().del(key);
    }

    @Test
    void anErrorOfTheScriptItselfIsReportedNotRetried() {
        LuaScript script = new LuaScript("return redis.call('NO-SUCH-COMMAND-" + UUID.randomUUID() + "')");
        CompletionException e = assertThrows(CompletionException.class, () -> script
                .<Long>run(redis.binaryCommands(), ScriptOutputType.INTEGER, new String[] {"lua-test:x"})
                .toCompletableFuture().join());
        assertInstanceOf(RedisCommandExecutionException.class, e.getCause(), e.toString());
    }
}
