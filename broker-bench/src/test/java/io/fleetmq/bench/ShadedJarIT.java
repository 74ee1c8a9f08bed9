package io.fleetmq.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The packaged jar runs on its own: main class, shaded dependencies, usage text. */
class ShadedJarIT {

    @Test
    void jarPrintsItsUsage() throws Exception {
        Path jar = Path.of(System.getProperty("fleetmq.bench.jar", "target/fleetmq-bench.jar"));
        assertTrue(Files.isRegularFile(jar), jar + " missing; run through mvn verify");
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process process = new ProcessBuilder(java.toString(), "-jar", jar.toString(), "--help")
                .redirectErrorStream(true)
                .start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, process.exitValue(), output);
        assertTrue(output.startsWith("Usage: java -jar fleetmq-bench.jar --scenario fan-in|fan-out|p2p"), output);
    }
}
