package io.fleetmq.bench.support;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A Prometheus text endpoint on a free loopback port that reports a JVM heap growing by 1 MiB per
 * scrape from 100 MiB (in two pools) and a constant 8 MiB of direct buffers, in Micrometer's names:
 * a test can then tell exactly which scrapes a run took.
 */
public final class FakeMetrics implements AutoCloseable {

    public static final long HEAP_START = 100L << 20;
    public static final long HEAP_STEP = 1L << 20;
    public static final long DIRECT = 8L << 20;

    private final HttpServer server;
    private final AtomicInteger scrapes = new AtomicInteger();

    public FakeMetrics() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/metrics", exchange -> {
            long heap = HEAP_START + scrapes.getAndIncrement() * HEAP_STEP;
            byte[] body = String.join("\n",
                    "# TYPE jvm_memory_used_bytes gauge",
                    "jvm_memory_used_bytes{area=\"heap\",id=\"G1 Eden Space\"} " + (heap - (10L << 20)),
                    "jvm_memory_used_bytes{area=\"heap\",id=\"G1 Old Gen\"} " + (10L << 20),
                    "jvm_memory_used_bytes{area=\"nonheap\",id=\"Metaspace\"} 5.0E7",
                    "jvm_buffer_memory_used_bytes{id=\"direct\"} " + DIRECT,
                    "").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "text/plain; version=0.0.4");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
    }

    public URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/metrics");
    }

    public int scrapes() {
        return scrapes.get();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
