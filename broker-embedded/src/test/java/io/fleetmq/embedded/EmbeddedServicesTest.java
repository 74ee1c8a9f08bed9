package io.fleetmq.embedded;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EmbeddedServicesTest {

    private static final String HOST = "127.0.0.1";

    @TempDir
    Path dataDir;

    @Test
    void closeStopsEverythingAndFreesThePorts() throws Exception {
        Set<Thread> threadsBefore = Thread.getAllStackTraces().keySet();
        Set<Long> childrenBefore = childProcesses();

        EmbeddedServices services = EmbeddedServices.start(EmbeddedServicesConfig.allOnLoopback(dataDir));
        List<Integer> ports;
        try {
            assertTrue(services.kafkaBootstrapServers().matches("127\\.0\\.0\\.1:\\d+"), services.kafkaBootstrapServers());
            assertTrue(services.redisUrl().matches("redis://127\\.0\\.0\\.1:\\d+"), services.redisUrl());
            assertTrue(services.databaseUrl().matches("jdbc:postgresql://127\\.0\\.0\\.1:\\d+/fleetmq"), services.databaseUrl());
            assertEquals("fleetmq", services.databaseUser());
            assertNotNull(services.databasePassword());

            ports = List.of(
                    Integer.parseInt(services.kafkaBootstrapServers().substring(HOST.length() + 1)),
                    URI.create(services.redisUrl()).getPort(),
                    URI.create(services.databaseUrl().substring("jdbc:".length())).getPort());
            for (int port : ports) {
                try (Socket socket = new Socket()) {
                    socket.connect(new InetSocketAddress(HOST, port), 2_000);
                }
            }
        } finally {
            services.close();
        }

        for (int port : ports) {
            assertDoesNotThrow(() -> bind(port), "port " + port + " is free after close");
        }
        assertEquals(Set.of(), processesMentioning(dataDir), "no server process left for the data dir");
        Set<Long> leftChildren = childProcesses();
        leftChildren.removeAll(childrenBefore);
        assertEquals(Set.of(), leftChildren, "no child process left");
        // Output readers of the child processes end at the EOF that follows the process exit. The JDK's own
        // shared pools (process reaper, common fork-join pool) idle on by design and are not ours to stop.
        List<Thread> newThreads = Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> !threadsBefore.contains(thread))
                .filter(thread -> !thread.getName().equals("process reaper")
                        && !thread.getName().startsWith("ForkJoinPool.commonPool"))
                .collect(Collectors.toList());
        for (Thread thread : newThreads) {
            thread.join(10_000);
        }
        assertEquals(List.of(), newThreads.stream().filter(Thread::isAlive).map(Thread::getName).collect(Collectors.toList()),
                "no thread left running");
        assertDoesNotThrow(services::close, "close is idempotent");
    }

    @ParameterizedTest
    @ValueSource(strings = {"Kafka", "Kafka controller", "Redis", "PostgreSQL"})
    void portInUseIsReportedWithTheServiceAndPort(String service) throws IOException {
        try (ServerSocket occupied = new ServerSocket(0, 50, InetAddress.getByName(HOST))) {
            int port = occupied.getLocalPort();
            EmbeddedServicesConfig config = switch (service) {
                case "Kafka" -> new EmbeddedServicesConfig(dataDir, HOST, true, port, 0, false, 0, false, 0);
                case "Kafka controller" -> new EmbeddedServicesConfig(dataDir, HOST, true, 0, port, false, 0, false, 0);
                case "Redis" -> new EmbeddedServicesConfig(dataDir, HOST, false, 0, 0, true, port, false, 0);
                default -> new EmbeddedServicesConfig(dataDir, HOST, false, 0, 0, false, 0, true, port);
            };

            EmbeddedServiceException failure = assertThrows(EmbeddedServiceException.class,
                    () -> EmbeddedServices.start(config).close());

            String name = service.startsWith("Kafka") ? "Kafka" : service;
            assertEquals("embedded " + name + ": port " + port + " on " + HOST + " is already in use", failure.getMessage());
        }
    }

    @Test
    void failedStartStopsTheServicesThatDidStart() throws IOException {
        Set<Long> childrenBefore = childProcesses();
        try (ServerSocket occupied = new ServerSocket(0, 50, InetAddress.getByName(HOST))) {
            int redisPort = occupied.getLocalPort();
            EmbeddedServicesConfig config = new EmbeddedServicesConfig(dataDir, HOST, true, 0, 0, true, redisPort, true, 0);

            EmbeddedServiceException failure = assertThrows(EmbeddedServiceException.class,
                    () -> EmbeddedServices.start(config).close());
            assertTrue(failure.getMessage().startsWith("embedded Redis: port " + redisPort), failure.getMessage());
        }

        assertEquals(Set.of(), processesMentioning(dataDir), "PostgreSQL was stopped again");
        Set<Long> leftChildren = childProcesses();
        leftChildren.removeAll(childrenBefore);
        assertEquals(Set.of(), leftChildren, "no child process left");
        assertTrue(Files.exists(dataDir.resolve("kafka").resolve("meta.properties")), "Kafka had started");
        // Kafka would refuse to start on a log dir that the stopped one still locks.
        EmbeddedKafkaServer kafka = new EmbeddedKafkaServer(dataDir, HOST, 0, 0);
        kafka.start();
        kafka.stop();
    }

    @Test
    void disabledServicesHaveNoAddress() {
        try (EmbeddedServices services = EmbeddedServices.start(
                new EmbeddedServicesConfig(dataDir, HOST, false, 0, 0, true, 0, false, 0))) {
            assertAll(
                    () -> assertNull(services.kafkaBootstrapServers()),
                    () -> assertNull(services.databaseUrl()),
                    () -> assertNull(services.databaseUser()),
                    () -> assertNull(services.databasePassword()),
                    () -> assertNotNull(services.redisUrl()));
        }
    }

    private static void bind(int port) throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(HOST, port));
        }
    }

    private static Set<Long> childProcesses() {
        return ProcessHandle.current().descendants()
                .filter(ProcessHandle::isAlive)
                .map(ProcessHandle::pid)
                .collect(Collectors.toSet());
    }

    /** Processes whose command line names the data dir, as the PostgreSQL server's does. */
    private static Set<String> processesMentioning(Path dir) {
        String path = dir.toAbsolutePath().toString();
        return ProcessHandle.allProcesses()
                .filter(ProcessHandle::isAlive)
                .map(handle -> handle.pid() + " " + handle.info().commandLine().orElse(""))
                .filter(line -> line.contains(path))
                .collect(Collectors.toSet());
    }
}
