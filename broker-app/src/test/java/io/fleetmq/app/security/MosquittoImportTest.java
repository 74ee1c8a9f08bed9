package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.mosquitto.MosquittoImport;
import io.fleetmq.app.support.PrivateDatabase;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code import-mosquitto} against one running node: files written by the real mosquitto_passwd, a
 * hand-written ACL file and dynamic-security JSON; afterwards clients log in with their original
 * passwords and are allowed and refused as Mosquitto would allow and refuse them.
 */
class MosquittoImportTest {

    private static final int OK = 0x00;
    private static final int NOT_AUTHORIZED = 0x87;

    @TempDir
    static Path dir;
    static PrivateDatabase db;
    static TestBroker broker;
    static Path passwd;
    static Path acl;
    static Path dynsec;

    @BeforeAll
    static void start() throws Exception {
        passwd = dir.resolve("passwd");
        mosquittoPasswd("-c", "-b", passwd.toString(), "alice", "alice-pw"); // $7$, the default
        mosquittoPasswd("-H", "sha512", "-b", passwd.toString(), "bob", "bob-pw"); // $6$
        Files.writeString(passwd, "carol:carol-pw\n", java.nio.file.StandardOpenOption.APPEND); // plain
        String written = Files.readString(passwd);
        assertTrue(written.contains("alice:$7$") && written.contains("bob:$6$"), written);

        acl = dir.resolve("acl");
        Files.writeString(acl, """
                # anonymous clients
                topic read public/#

                user alice
                topic readwrite home/#
                topic deny home/secret/#

                user bob
                topic write sensors/bob/#

                pattern readwrite devices/%c/#
                pattern read x/%c-suffix
                """);

        dynsec = dir.resolve("dynamic-security.json");
        byte[] salt = "dave-salt-12".getBytes(StandardCharsets.UTF_8);
        Files.writeString(dynsec, """
                {"defaultACLAccess": {"publishClientSend": false, "publishClientReceive": true,
                                      "subscribe": false, "unsubscribe": true},
                 "clients": [{"username": "dave", "password": "%s", "salt": "%s", "iterations": 101,
                              "roles": [{"rolename": "writer"}], "groups": [{"groupname": "readers"}]}],
                 "groups": [{"groupname": "readers", "roles": [{"rolename": "reader"}]}],
                 "roles": [{"rolename": "writer", "acls": [
                              {"acltype": "publishClientSend", "topic": "dyn/out/#", "priority": 0, "allow": true},
                              {"acltype": "publishClientSend", "topic": "dyn/out/blocked", "priority": 5, "allow": false}]},
                           {"rolename": "reader", "acls": [
                              {"acltype": "subscribePattern", "topic": "dyn/in/+", "allow": true},
                              {"acltype": "subscribeLiteral", "topic": "dyn/lit/+", "allow": true}]}]}
                """.formatted(Base64.getEncoder().encodeToString(pbkdf2("dave-pw", salt, 101)),
                Base64.getEncoder().encodeToString(salt)));

        db = PrivateDatabase.create();
        Map<String, String> env = new HashMap<>(db.env());
        env.put("MQTT_ALLOW_ANONYMOUS", "false");
        env.put("ADMIN_PASSWORD", "operator-pw");
        broker = TestBroker.start(dir.resolve("data"), env);
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
        if (db != null) {
            db.close();
        }
    }

    @Test
    void importsPasswordsAndRulesIdempotently() throws Exception {
        // A malformed line names its file and line, and nothing is imported.
        Path bad = dir.resolve("bad-acl");
        Files.writeString(bad, "topic read a/#\nuser alice\ntopic\n");
        Result malformed = runImport("--passwd", passwd.toString(), "--acl", bad.toString());
        assertEquals(2, malformed.code, malformed.err);
        assertTrue(malformed.err.contains(bad + ":3"), malformed.err);

        Result dry = runImport("--dry-run", "--passwd", passwd.toString(), "--acl", acl.toString(),
                "--dynsec", dynsec.toString());
        assertEquals(0, dry.code, dry.err);
        assertTrue(dry.out.contains("would create user 'alice'"), dry.out);
        assertEquals(0x86, connectCode("alice-dev", "alice", "alice-pw"), "a dry run creates nothing");

        Result first = runImport("--passwd", passwd.toString(), "--acl", acl.toString(), "--dynsec", dynsec.toString());
        assertEquals(0, first.code, first.err + first.out);
        assertTrue(first.out.contains(acl + ":12") && first.out.contains("x/%c-suffix"), first.out);
        assertTrue(first.out.contains("subscribeLiteral 'dyn/lit/+'"), first.out);

        Await.until(Duration.ofSeconds(15), "alice logs in with her Mosquitto password",
                () -> connectCode("alice-dev", "alice", "alice-pw") == OK);
        assertEquals(0x86, connectCode("alice-dev", "alice", "wrong"));
        try (var c = SecurityFixture.connect(broker.mqttPort(), 5, "alice-dev", "alice", "alice-pw").expect(OK)) {
            assertEquals(OK, SecurityFixture.publishQos1V5(c.raw(), 1, "home/kitchen", "1"));
            assertEquals(NOT_AUTHORIZED, SecurityFixture.publishQos1V5(c.raw(), 2, "home/secret/safe", "1"));
            assertEquals(NOT_AUTHORIZED, SecurityFixture.subscribeV5(c.raw(), 3, "home/secret/#", 1));
            assertEquals(1, SecurityFixture.subscribeV5(c.raw(), 4, "home/kitchen", 1));
            assertEquals(OK, SecurityFixture.publishQos1V5(c.raw(), 5, "devices/alice-dev/state", "1"));
            assertEquals(NOT_AUTHORIZED, SecurityFixture.publishQos1V5(c.raw(), 6, "devices/other/state", "1"));
            assertEquals(NOT_AUTHORIZED, SecurityFixture.subscribeV5(c.raw(), 7, "public/#", 1));
        }
        try (var c = SecurityFixture.connect(broker.mqttPort(), 5, "bob-dev", "bob", "bob-pw").expect(OK)) {
            assertEquals(OK, SecurityFixture.publishQos1V5(c.raw(), 1, "sensors/bob/t", "1"));
            assertEquals(NOT_AUTHORIZED, SecurityFixture.subscribeV5(c.raw(), 2, "sensors/bob/t", 1));
            assertEquals(NOT_AUTHORIZED, SecurityFixture.publishQos1V5(c.raw(), 3, "home/kitchen", "1"));
        }
        try (var c = SecurityFixture.connect(broker.mqttPort(), 5, "carol-dev", "carol", "carol-pw").expect(OK)) {
            assertEquals(OK, SecurityFixture.publishQos1V5(c.raw(), 1, "devices/carol-dev/x", "1"));
            assertEquals(NOT_AUTHORIZED, SecurityFixture.publishQos1V5(c.raw(), 2, "sensors/bob/t", "1"));
        }
        try (var c = SecurityFixture.connect(broker.mqttPort(), 5, "dave-dev", "dave", "dave-pw").expect(OK)) {
            assertEquals(OK, SecurityFixture.publishQos1V5(c.raw(), 1, "dyn/out/a", "1"));
            assertEquals(NOT_AUTHORIZED, SecurityFixture.publishQos1V5(c.raw(), 2, "dyn/out/blocked", "1"));
            assertEquals(1, SecurityFixture.subscribeV5(c.raw(), 3, "dyn/in/a", 1));
            assertEquals(NOT_AUTHORIZED, SecurityFixture.subscribeV5(c.raw(), 4, "dyn/lit/a", 1));
        }

        Result second = runImport("--passwd", passwd.toString(), "--acl", acl.toString(), "--dynsec", dynsec.toString());
        assertEquals(0, second.code, second.err);
        assertTrue(second.out.contains("0 change(s) made"), second.out);
        Result dryAgain = runImport("--dry-run", "--passwd", passwd.toString(), "--acl", acl.toString(),
                "--dynsec", dynsec.toString());
        assertTrue(dryAgain.out.contains("0 change(s) would be made"), dryAgain.out);

        // An edited file is carried over on the next run, and only what changed is written.
        Files.writeString(acl, Files.readString(acl).replace("topic write sensors/bob/#", "topic readwrite sensors/bob/#"));
        Result third = runImport("--passwd", passwd.toString(), "--acl", acl.toString(), "--dynsec", dynsec.toString());
        assertTrue(third.out.contains("1 change(s) made") && third.out.contains("update user 'bob'"), third.out);
        Await.until(Duration.ofSeconds(15), "bob may now subscribe", () -> {
            try (var c = SecurityFixture.connect(broker.mqttPort(), 5, "bob-dev", "bob", "bob-pw")) {
                return c.code() == OK && SecurityFixture.subscribeV5(c.raw(), 1, "sensors/bob/t", 1) == 1;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        assertNotEquals(OK, connectCode("anon", null, null), "anonymous clients stay refused");
    }

    private record Result(int code, String out, String err) {
    }

    private static Result runImport(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Map<String, String> env = Map.of("ADMIN_PASSWORD", "operator-pw");
        List<String> all = new java.util.ArrayList<>(List.of(args));
        all.add("--api");
        all.add("http://127.0.0.1:" + broker.node().httpPort());
        int code = new MosquittoImport(env::get, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8)).run(all.toArray(String[]::new));
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static int connectCode(String clientId, String user, String password) {
        try (var c = SecurityFixture.connect(broker.mqttPort(), 5, clientId, user, password)) {
            return c.code();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void mosquittoPasswd(String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("/usr/bin/mosquitto_passwd"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "mosquitto_passwd finished");
        assertEquals(0, p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    /** The stored form Mosquitto's dynamic-security plugin keeps: PBKDF2-HMAC-SHA512, 64 bytes. */
    private static byte[] pbkdf2(String password, byte[] salt, int iterations) throws Exception {
        return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA512")
                .generateSecret(new PBEKeySpec(password.toCharArray(), salt, iterations, 512)).getEncoded();
    }
}
