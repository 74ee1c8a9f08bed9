package io.fleetmq.app.security.http;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * An identity service on a free loopback port: answers each POST with what {@link #answer} says for
 * its body, records what it received, and can hold answers back until released.
 */
public final class FakeAuthService implements AutoCloseable {

    /** A status and a body (null: none). */
    public record Reply(int status, String body) {
        public static Reply json(String body) {
            return new Reply(200, body);
        }
    }

    /** One request as received. */
    public record Received(String body, Map<String, List<String>> headers) {
    }

    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private final AtomicInteger arrived = new AtomicInteger();
    private volatile Function<String, Reply> answer = body -> Reply.json("{\"result\":\"deny\"}");
    private volatile CountDownLatch hold = new CountDownLatch(0);

    public FakeAuthService() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
        server.setExecutor(threads);
        server.createContext("/auth", exchange -> {
            try (exchange) {
                String body;
                try (InputStream in = exchange.getRequestBody()) {
                    body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
                received.add(new Received(body, Map.copyOf(exchange.getRequestHeaders())));
                arrived.incrementAndGet();
                try {
                    hold.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                Reply reply = answer.apply(body);
                if (reply.body() == null) {
                    exchange.sendResponseHeaders(reply.status(), -1);
                } else {
                    byte[] bytes = reply.body().getBytes(StandardCharsets.UTF_8);
                    exchange.getResponseHeaders().set("Content-Type", "application/json");
                    exchange.sendResponseHeaders(reply.status(), bytes.length);
                    try (OutputStream out = exchange.getResponseBody()) {
                        out.write(bytes);
                    }
                }
            } catch (IOException e) {
                // the broker gave up on this request (a timeout): nothing to answer
            }
        });
        server.start();
    }

    public URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/auth");
    }

    public void answer(Function<String, Reply> answer) {
        this.answer = answer;
    }

    public void answer(Reply reply) {
        this.answer = body -> reply;
    }

    /** Answers wait until {@link #release}. */
    public void hold() {
        hold = new CountDownLatch(1);
    }

    public void release() {
        hold.countDown();
    }

    /** Requests that arrived (answered or not). */
    public int arrived() {
        return arrived.get();
    }

    public List<Received> received() {
        return List.copyOf(received);
    }

    @Override
    public void close() {
        release();
        server.stop(0);
        threads.shutdownNow();
    }
}
