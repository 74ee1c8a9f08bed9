package io.fleetmq.app.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.metrics.Metrics;
import io.fleetmq.core.health.Readiness;
import io.fleetmq.persistence.auth.PasswordHashes;
import io.fleetmq.transport.ListenerBindException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The admin port reports a port in use the way the MQTT listeners do, so start-up can name the setting. */
class AdminHttpBindTest {

    @Test
    void aTakenPortIsAListenerBindExceptionAndAFreeOneIsReported() throws Exception {
        try (Readiness readiness = new Readiness(); Metrics metrics = new Metrics("bind-test");
             ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            AdminApi api = new AdminApi(change -> { }, Duration.ofHours(1), new PasswordHashes(4, 14, 1_000));
            ListenerBindException e = assertThrows(ListenerBindException.class,
                    () -> AdminHttpServer.start("127.0.0.1", taken.getLocalPort(), readiness, metrics, api));
            assertEquals("HTTP", e.listener());
            assertTrue(e.getMessage().contains("cannot bind 127.0.0.1:" + taken.getLocalPort()), e.getMessage());

            try (AdminHttpServer server = AdminHttpServer.start("127.0.0.1", 0, readiness, metrics, api)) {
                assertTrue(server.port() > 0);
                assertEquals("/127.0.0.1:" + server.port(), server.address().toString(),
                        "the form the start-up log line has always had");
            }
        }
    }
}
