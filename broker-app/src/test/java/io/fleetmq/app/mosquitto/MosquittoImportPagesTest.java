package io.fleetmq.app.mosquitto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fleetmq.app.support.AdminHttp;
import io.fleetmq.app.support.PrivateDatabase;
import io.fleetmq.app.support.TestBroker;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code import-mosquitto} with more users than one page of the admin API holds, and with a name that
 * another client takes between the import's reading of what is stored and its writes.
 */
class MosquittoImportPagesTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ADMIN_PASSWORD = "operator-pw";

    @TempDir
    static Path dir;
    static PrivateDatabase db;
    static TestBroker broker;
    static String token;

    @BeforeAll
    static void start() throws Exception {
        db = PrivateDatabase.create();
        Map<String, String> env = new HashMap<>(db.env());
        env.put("MQTT_ALLOW_ANONYMOUS", "false");
        env.put("ADMIN_PASSWORD", ADMIN_PASSWORD);
        broker = TestBroker.start(dir.resolve("data"), env);
        token = AdminHttp.login(broker.node().httpPort(), "admin", ADMIN_PASSWORD);
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
    void usersOnEveryPageAreFoundAgainAndOnlyWhatChangedIsWritten() throws Exception {
        int users = 2_345; // three pages of the admin API
        StringBuilder passwd = new StringBuilder();
        for (int i = 0; i < users; i++) {
            passwd.append(String.format("dev-%04d", i)).append(':').append(mosquittoHash("pw-" + i, i)).append('\n');
        }
        Path file = dir.resolve("passwd");
        Files.writeString(file, passwd);

        Result first = runImport(null, "--passwd", file.toString());
        assertEquals(0, first.code, first.err);
        assertEquals(users, first.lines("create user 'dev-"), first.out);
        assertTrue(first.out.contains(users + " change(s) made"), first.out);
        JsonNode last = credential("dev-" + (users - 1));
        assertEquals(List.of("#"), strings(last.path("publish")), last.toString());

        Result again = runImport(null, "--passwd", file.toString());
        assertEquals(0, again.code, again.err);
        assertEquals(0, again.lines("create "), again.out);
        assertTrue(again.out.contains("0 change(s) made"), again.out);

        // One user's password changes in the file: that user alone is written.
        String newHash = mosquittoHash("new-pw", 2300);
        Files.writeString(file, Files.readString(file).replace("dev-2300:" + mosquittoHash("pw-2300", 2300),
                "dev-2300:" + newHash));
        Result edited = runImport(null, "--passwd", file.toString());
        assertEquals(0, edited.code, edited.err);
        assertEquals(List.of("update user 'dev-2300': password"),
                edited.out.lines().filter(l -> l.startsWith("update ") || l.startsWith("create ")).toList(), edited.out);
        assertTrue(edited.out.contains("1 change(s) made"), edited.out);
        assertEquals(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                .digest(newHash.getBytes(StandardCharsets.UTF_8))), credential("dev-2300").path("passwordFingerprint").asText());
    }

    @Test
    void aNameTakenAfterTheReadingIsComparedAgainAndUpdated() throws Exception {
        Path file = dir.resolve("late-passwd");
        Files.writeString(file, "late-user:" + mosquittoHash("late-pw", 7) + "\n");
        Result result = runImport(() -> {
            HttpResponse<String> created = AdminHttp.send(broker.node().httpPort(), token, "POST",
                    "/api/v1/credentials", "{\"type\":\"basic\",\"username\":\"late-user\",\"password\":\"other-pw\","
                            + "\"publish\":[\"x/#\"],\"subscribe\":[\"x/#\"]}");
            assertEquals(201, created.statusCode(), created.body());
        }, "--passwd", file.toString());
        assertEquals(0, result.code, result.err);
        assertTrue(result.out.contains("create user 'late-user'"), result.out);
        assertTrue(result.out.contains("update user 'late-user': password; publish [x/#] -> [#]; subscribe [x/#] -> [#]"),
                result.out);
        assertTrue(result.out.contains("1 change(s) made"), result.out);
        JsonNode stored = credential("late-user");
        assertEquals(List.of("#"), strings(stored.path("publish")), stored.toString());
    }

    private record Result(int code, String out, String err) {
        long lines(String prefix) {
            return out.lines().filter(l -> l.startsWith(prefix)).count();
        }
    }

    /** Runs the command against the node; {@code afterReading} (null: nothing) runs before its writes. */
    private static Result runImport(Runnable afterReading, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--api", "http://127.0.0.1:" + broker.node().httpPort()));
        MosquittoImport command = new MosquittoImport(Map.of("ADMIN_PASSWORD", ADMIN_PASSWORD)::get,
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        if (afterReading != null) {
            command.afterReading(afterReading);
        }
        int code = command.run(all.toArray(String[]::new));
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static JsonNode credential(String username) throws Exception {
        HttpResponse<String> page = AdminHttp.send(broker.node().httpPort(), token, "GET",
                "/api/v1/credentials?username=" + username, null);
        assertEquals(200, page.statusCode(), page.body());
        JsonNode items = JSON.readTree(page.body()).path("items");
        assertEquals(1, items.size(), page.body());
        return items.get(0);
    }

    private static List<String> strings(JsonNode array) {
        List<String> list = new ArrayList<>();
        array.forEach(n -> list.add(n.asText()));
        return list;
    }

    /** Mosquitto's $7$ form, as mosquitto_passwd writes it: PBKDF2-HMAC-SHA512, 101 iterations. */
    private static String mosquittoHash(String password, int seed) throws Exception {
        byte[] salt = String.format("salt-%07d", seed).getBytes(StandardCharsets.US_ASCII);
        byte[] hash = SecretKeyFactory.getInstance("PBKDF2WithHmacSHA512")
                .generateSecret(new PBEKeySpec(password.toCharArray(), salt, 101, 512)).getEncoded();
        return "$7$101$" + Base64.getEncoder().encodeToString(salt) + "$" + Base64.getEncoder().encodeToString(hash);
    }
}
