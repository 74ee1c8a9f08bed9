package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.config.BrokerConfig;
import io.fleetmq.app.config.ConfigException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LauncherTest {

    @TempDir
    Path dir;

    private final Map<String, String> env = new HashMap<>();

    private BrokerConfig configure(String... args) {
        return new Launcher(env::get, System.out).configure(Launcher.parse(args));
    }

    @Test
    void standaloneIsTheDefaultCommand() {
        assertEquals(Mode.STANDALONE, Launcher.parse().mode());
        assertEquals(Mode.NODE, Launcher.parse("node").mode());
        assertEquals(Mode.SERVICES, Launcher.parse("services", "--config", "x.yml").mode());
        assertEquals(Path.of("x.yml"), Launcher.parse("--config=x.yml").configFile());
    }

    @Test
    void badCommandLinesAreRefusedWithAReason() {
        assertTrue(assertThrows(ConfigException.class, () -> Launcher.parse("start")).getMessage()
                .contains("unknown command 'start'"));
        assertTrue(assertThrows(ConfigException.class, () -> Launcher.parse("node", "extra")).getMessage()
                .contains("unexpected argument 'extra'"));
        assertTrue(assertThrows(ConfigException.class, () -> Launcher.parse("--config")).getMessage()
                .contains("--config needs a file name"));
    }

    @Test
    void helpPrintsUsageAndStartsNothing() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertNull(new Launcher(env::get, new PrintStream(out, true, StandardCharsets.UTF_8)).run("--help"));
        assertTrue(out.toString(StandardCharsets.UTF_8).startsWith("Usage: java -jar fleetmq.jar"));
    }

    @Test
    void aConfigFileInTheDataDirectoryIsPickedUp() throws Exception {
        env.put("BROKER_DATA_DIR", dir.toString());
        Files.writeString(dir.resolve("fleetmq.yml"), "listeners:\n  tcp:\n    port: 1999\n");
        assertEquals(1999, configure().tcp().port());
    }

    @Test
    void anExplicitConfigFileWinsOverTheOneInTheDataDirectory() throws Exception {
        env.put("BROKER_DATA_DIR", dir.toString());
        Files.writeString(dir.resolve("fleetmq.yml"), "listeners:\n  tcp:\n    port: 1999\n");
        Path other = dir.resolve("other.yml");
        Files.writeString(other, "listeners:\n  tcp:\n    port: 2001\n");
        assertEquals(2001, configure("--config", other.toString()).tcp().port());
    }

    @Test
    void theNodeIdComesFromTheHostNameWhenUnset() {
        env.put("HOSTNAME", "broker-7");
        assertEquals("broker-7", configure().nodeId());
    }

    @Test
    void aStandaloneNodeOnItsEmbeddedKafkaWritesOnePartitionPerTopic() throws Exception {
        env.put("BROKER_DATA_DIR", dir.toString());
        assertEquals(1, configure().kafka().publishPartitions());
        assertEquals(1, configure("standalone").kafka().publishPartitions());
        assertEquals(1, configure().kafka().sessionEventPartitions());
        assertEquals(1, configure().kafka().devicePersistedPartitions());
        // what has nothing to do with partitions keeps its shipped value
        assertEquals(4, configure().cluster().downlinkPartitions());
    }

    @Test
    void theStandaloneDefaultGivesWayToTheOperatorsAndToOtherModes() throws Exception {
        env.put("BROKER_DATA_DIR", dir.toString());
        assertEquals(16, configure("node").kafka().publishPartitions(), "a cluster node spreads routing");
        assertEquals(24, configure("node").kafka().sessionEventPartitions());
        assertEquals(12, configure("node").kafka().devicePersistedPartitions());
        assertEquals(16, configure("services").kafka().publishPartitions());

        env.put("KAFKA_BOOTSTRAP_SERVERS", "kafka-1:9092");
        assertEquals(16, configure().kafka().publishPartitions(), "an external Kafka may serve other nodes later");
        env.remove("KAFKA_BOOTSTRAP_SERVERS");

        Files.writeString(dir.resolve("fleetmq.yml"), "kafka:\n  publish-partitions: 6\n");
        assertEquals(6, configure().kafka().publishPartitions(), "the file wins");
        env.put("KAFKA_PUBLISH_PARTITIONS", "3");
        assertEquals(3, configure().kafka().publishPartitions(), "the environment wins");
        env.put("KAFKA_SESSION_EVENTS_PARTITIONS", "8");
        assertEquals(8, configure().kafka().sessionEventPartitions());
    }
}
