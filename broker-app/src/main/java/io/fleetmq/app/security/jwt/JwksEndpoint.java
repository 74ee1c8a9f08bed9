package io.fleetmq.app.security.jwt;

import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JWK set an issuer publishes at a URL, kept in memory. Fetched on a thread of its own at start
 * and every refresh interval; a token signed with a key ID the set does not hold (a rotated key)
 * may cause a fetch on the auth thread that checks it, at most one per minimum interval across all
 * threads, so a stream of made-up key IDs cannot hammer the issuer. A failed fetch keeps the keys
 * fetched before.
 */
final class JwksEndpoint implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(JwksEndpoint.class);

    /** A JWK set is a few kilobytes; anything far larger is not one. */
    static final int MAX_BYTES = 1 << 20;

    private final URI url;
    private final Duration timeout;
    private final long minIntervalNanos;
    private final LongSupplier nanoTime;
    private final HttpClient http;
    private final ScheduledExecutorService refresher;
    private final Object fetchLock = new Object();
    /** The usable keys of the latest set fetched; null until a fetch succeeded. */
    private volatile List<JWK> keys;
    /** Whether the latest fetch failed. */
    private volatile boolean unreachable;
    /** When the latest fetch started (guarded by fetchLock); Long.MIN_VALUE: never. */
    private long lastAttempt = Long.MIN_VALUE;

    JwksEndpoint(URI url, Duration timeout, Duration refresh, Duration minInterval, LongSupplier nanoTime) {
        this.url = url;
        this.timeout = timeout;
        this.minIntervalNanos = minInterval.toNanos();
        this.nanoTime = nanoTime;
        this.http = HttpClient.newBuilder().connectTimeout(timeout).followRedirects(HttpClient.Redirect.NORMAL)
                .build();
        this.refresher = Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("fleetmq-jwks", true));
        refresher.scheduleWithFixedDelay(this::scheduledFetch, 0, refresh.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The keys held now; null when no fetch has succeeded yet. */
    List<JWK> keys() {
        return keys;
    }

    /** Whether the latest fetch failed (the keys held, if any, may be stale). */
    boolean unreachable() {
        return unreachable;
    }

    /**
     * Fetches the set now, unless a fetch started less than the minimum interval ago (then what that
     * fetch brought is the answer); callers arriving during a fetch wait for it rather than fetch again.
     *
     * @return the keys held afterwards; null when none was ever fetched
     */
    List<JWK> refetch() {
        synchronized (fetchLock) {
            long now = nanoTime.getAsLong();
            if (lastAttempt == Long.MIN_VALUE || now - lastAttempt >= minIntervalNanos) {
                fetch(now);
            }
        }
        return keys;
    }

    private void scheduledFetch() {
        synchronized (fetchLock) {
            fetch(nanoTime.getAsLong());
        }
    }

    /** One fetch, under fetchLock. */
    private void fetch(long now) {
        lastAttempt = now;
        try {
            List<JWK> fetched = KeyFiles.usable(JWKSet.parse(download()));
            if (fetched.isEmpty()) {
                log.warn("The JWK set at {} holds no RSA or EC signature key", url);
            }
            if (unreachable) {
                log.info("The JWK set at {} can be fetched again ({} keys)", url, fetched.size());
            }
            keys = fetched;
            unreachable = false;
        } catch (IOException | ParseException | RuntimeException e) {
            if (!unreachable) {
                log.warn("Cannot fetch the JWK set at {}: {}; {}", url, e.getMessage(), keys == null
                        ? "tokens signed with its keys are answered 0x88 Server unavailable until it can be"
                        : "the keys fetched before are kept");
            } else {
                log.debug("Cannot fetch the JWK set at {}: {}", url, e.getMessage());
            }
            unreachable = true;
        }
    }

    /** The set's text, within the timeout from connecting to the last byte. */
    private String download() throws IOException {
        HttpRequest request = HttpRequest.newBuilder(url).timeout(timeout).header("Accept", "application/json")
                .GET().build();
        CompletableFuture<String> body = http.sendAsync(request, HttpResponse.BodyHandlers.ofInputStream())
                .thenApply(JwksEndpoint::bounded);
        try {
            return body.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            body.cancel(true);
            throw new IOException("no answer within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            body.cancel(true);
            throw new IOException("interrupted");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() instanceof UncheckedIOException u ? u.getCause() : e.getCause();
            throw new IOException(cause.getMessage() == null ? cause.toString() : cause.getMessage(), cause);
        }
    }

    private static String bounded(HttpResponse<InputStream> response) {
        try (InputStream in = response.body()) {
            if (response.statusCode() != 200) {
                throw new IOException("HTTP status " + response.statusCode());
            }
            byte[] bytes = in.readNBytes(MAX_BYTES + 1);
            if (bytes.length > MAX_BYTES) {
                throw new IOException("the answer is larger than " + MAX_BYTES + " bytes");
            }
            return new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        refresher.shutdownNow();
    }
}
