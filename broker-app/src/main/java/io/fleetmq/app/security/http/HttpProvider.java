package io.fleetmq.app.security.http;

import io.fleetmq.app.security.provider.AuthProvider;
import io.fleetmq.app.security.provider.AuthRequest;
import io.fleetmq.app.security.provider.AuthResult;
import io.fleetmq.app.security.provider.Identity;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CONNECTs decided by the operator's own service ({@code http}): each is POSTed as JSON to
 * {@code auth.http.url}, which answers allow (with the client's rules), deny or ignore. A service
 * that does not answer properly is "down": the CONNECT is refused with 0x88 (fail closed) or passed
 * on (fail open). Bounded: a timeout per request, a number of requests in flight, a short cache.
 */
public final class HttpProvider implements AuthProvider {

    private static final Logger log = LoggerFactory.getLogger(HttpProvider.class);

    /** The most of an answer that is read; a decision is a few hundred bytes. */
    static final int MAX_ANSWER_BYTES = 64 * 1024;

    /** Why a request was counted, as {@code fleetmq_auth_http_requests_total{outcome}}. */
    enum Outcome {
        ALLOW, DENY, IGNORE,
        /** an allow the broker cannot apply, refused as a deny */
        INVALID,
        /** another status, a malformed body */
        ERROR,
        TIMEOUT,
        /** no connection (refused, unknown host, reset) */
        UNREACHABLE,
        /** not sent: the bound of requests in flight was reached */
        BUSY;

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private final HttpAuthSettings settings;
    private final Clock clock;
    private final ExecutorService executor;
    private final HttpClient client;
    private final Semaphore inFlight;
    private final AnswerCache cache;
    private final Map<Outcome, Counter> requests = new HashMap<>();
    private final Counter cacheHits;
    private final Timer latency;
    private final AtomicBoolean invalidLogged = new AtomicBoolean();
    private final AtomicBoolean serviceDown = new AtomicBoolean();

    public HttpProvider(HttpAuthSettings settings, MeterRegistry meters) {
        this(settings, meters, Clock.systemUTC());
    }

    HttpProvider(HttpAuthSettings settings, MeterRegistry meters, Clock clock) {
        if (settings.url() == null) {
            throw new IllegalArgumentException("auth.http.url is not set");
        }
        this.settings = settings;
        this.clock = clock;
        this.executor = Executors.newCachedThreadPool(new DefaultThreadFactory("fleetmq-auth-http", true));
        this.client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1) // no h2c upgrade dance with plain-http services
                .connectTimeout(settings.timeout())
                .followRedirects(HttpClient.Redirect.NEVER)
                .executor(executor)
                .build();
        this.inFlight = new Semaphore(settings.maxConcurrent());
        this.cache = new AnswerCache(settings.cacheTtl(), System::nanoTime, clock);
        for (Outcome o : Outcome.values()) {
            requests.put(o, Counter.builder("fleetmq.auth.http.requests").tag("outcome", o.label())
                    .description("CONNECTs the http provider asked its service about, by outcome")
                    .register(meters));
        }
        this.cacheHits = Counter.builder("fleetmq.auth.http.cache.hits")
                .description("CONNECTs the http provider answered from its cache of recent answers")
                .register(meters);
        this.latency = Timer.builder("fleetmq.auth.http.latency")
                .description("Time from sending a CONNECT to the http provider's service until its answer or failure")
                .register(meters);
    }

    @Override
    public String name() {
        return "http";
    }

    @Override
    public AuthResult quick(AuthRequest r) {
        if (!cache.enabled()) {
            return null;
        }
        byte[] body = ConnectDocument.of(r);
        if (body == null) {
            return AuthResult.NOT_MINE;
        }
        return cached(cache.key(body));
    }

    @Override
    public AuthResult authenticate(AuthRequest r) {
        byte[] body = ConnectDocument.of(r);
        if (body == null) {
            // Not a password this provider can convey: another provider may know it.
            log.debug("{}: password is not UTF-8, not asking the HTTP service", r.clientId());
            return AuthResult.NOT_MINE;
        }
        String key = null;
        if (cache.enabled()) {
            key = cache.key(body);
            AuthResult hit = cached(key);
            if (hit != null) {
                return hit;
            }
        }
        if (!inFlight.tryAcquire()) {
            requests.get(Outcome.BUSY).increment();
            log.debug("{}: {} requests to the HTTP service in flight already", r.clientId(), settings.maxConcurrent());
            return down();
        }
        long t0 = System.nanoTime();
        CompletableFuture<HttpResponse<byte[]>> sent;
        try {
            sent = client.sendAsync(request(body), info -> new LimitedBody(MAX_ANSWER_BYTES));
        } catch (RuntimeException e) {
            inFlight.release();
            return failed(r, Outcome.UNREACHABLE, e.toString(), t0);
        }
        // The permit is held until the exchange ends (or is cancelled below on a timeout).
        sent.whenComplete((response, error) -> inFlight.release());
        HttpResponse<byte[]> response;
        try {
            response = sent.get(settings.timeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            sent.cancel(true);
            return failed(r, Outcome.TIMEOUT, "no answer within " + settings.timeout(), t0);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            sent.cancel(true);
            return failed(r, Outcome.TIMEOUT, "interrupted", t0);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof HttpTimeoutException) {
                return failed(r, Outcome.TIMEOUT, cause.toString(), t0);
            }
            if (cause instanceof LimitedBody.TooLarge) {
                return failed(r, Outcome.ERROR, cause.getMessage(), t0);
            }
            return failed(r, Outcome.UNREACHABLE, cause instanceof IOException ? cause.toString() : String.valueOf(cause), t0);
        }
        latency.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        HttpAnswer answer = HttpAnswer.read(response.statusCode(), response.body(), clock.instant());
        if (answer instanceof HttpAnswer.Malformed m) {
            return failed(r, Outcome.ERROR, m.why(), -1);
        }
        serviceUp();
        AuthResult result = decide(r, answer);
        if (key != null) {
            cache.put(key, result);
        }
        return result;
    }

    private AuthResult decide(AuthRequest r, HttpAnswer answer) {
        if (answer instanceof HttpAnswer.Allow a) {
            requests.get(Outcome.ALLOW).increment();
            return new AuthResult.Allowed(new Identity("http", null, r.username(), r.commonName(), a.clientType(),
                    a.publish(), a.subscribe(), a.expiresAt()));
        }
        if (answer instanceof HttpAnswer.Ignore) {
            requests.get(Outcome.IGNORE).increment();
            return AuthResult.NOT_MINE;
        }
        if (answer instanceof HttpAnswer.Invalid invalid) {
            requests.get(Outcome.INVALID).increment();
            // The service is misconfigured, not the client: say so once, loudly; then quietly.
            if (invalidLogged.compareAndSet(false, true)) {
                log.warn("The HTTP auth service allowed client {} with an answer the broker cannot apply, so it is "
                        + "refused as denied (this is logged once; counted in fleetmq_auth_http_requests_total"
                        + "{{outcome=\"invalid\"}}): {}", r.clientId(), invalid.why());
            } else {
                log.debug("{}: invalid allow answer refused: {}", r.clientId(), invalid.why());
            }
            return AuthResult.badCredentials();
        }
        requests.get(Outcome.DENY).increment();
        return AuthResult.badCredentials();
    }

    private AuthResult cached(String key) {
        AuthResult hit = cache.get(key);
        if (hit != null) {
            cacheHits.increment();
        }
        return hit;
    }

    private HttpRequest request(byte[] body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(settings.url())
                .timeout(settings.timeout())
                .header("Content-Type", "application/json")
                .header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        for (HttpAuthSettings.Header h : settings.headers()) {
            b.setHeader(h.name(), h.value());
        }
        return b.build();
    }

    /** The service did not answer properly: counted, and the fail policy decides. */
    private AuthResult failed(AuthRequest r, Outcome outcome, String why, long t0) {
        if (t0 >= 0) {
            latency.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        }
        requests.get(outcome).increment();
        if (serviceDown.compareAndSet(false, true)) {
            log.warn("The HTTP auth service at {} does not answer properly ({}): CONNECTs it would decide are {} "
                    + "until it does", settings.url(), why, settings.failOpen()
                    ? "passed on to the next provider (auth.http.fail=open)"
                    : "refused with 0x88 Server unavailable (auth.http.fail=closed)");
        } else {
            log.debug("{}: HTTP auth service: {}", r.clientId(), why);
        }
        return down();
    }

    private void serviceUp() {
        if (serviceDown.compareAndSet(true, false)) {
            log.info("The HTTP auth service at {} answers again", settings.url());
        }
    }

    private AuthResult down() {
        return settings.failOpen() ? AuthResult.NOT_MINE : AuthResult.unavailable();
    }

    /** Answers remembered now. */
    int cacheSize() {
        return cache.size();
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }

    @Override
    public String toString() {
        return "HttpProvider[" + settings.url() + "]";
    }
}
