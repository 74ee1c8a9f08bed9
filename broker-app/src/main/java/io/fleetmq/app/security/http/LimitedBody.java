package io.fleetmq.app.security.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * A response body read into memory up to a bound: a service that answers with more than an answer
 * (an error page, a stream) costs the node at most {@code max} bytes, and the answer fails.
 */
final class LimitedBody implements HttpResponse.BodySubscriber<byte[]> {

    /** Thrown when the body exceeds the bound. */
    static final class TooLarge extends IOException {
        private static final long serialVersionUID = 1L;

        TooLarge(int max) {
            super("answer larger than " + max + " bytes");
        }
    }

    private final int max;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final CompletableFuture<byte[]> body = new CompletableFuture<>();
    private Flow.Subscription subscription;

    LimitedBody(int max) {
        this.max = max;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        s.request(1);
    }

    @Override
    public void onNext(List<ByteBuffer> items) {
        if (body.isDone()) {
            return;
        }
        for (ByteBuffer b : items) {
            if (out.size() + b.remaining() > max) {
                subscription.cancel();
                body.completeExceptionally(new TooLarge(max));
                return;
            }
            byte[] chunk = new byte[b.remaining()];
            b.get(chunk);
            out.write(chunk, 0, chunk.length);
        }
        subscription.request(1);
    }

    @Override
    public void onError(Throwable t) {
        body.completeExceptionally(t);
    }

    @Override
    public void onComplete() {
        body.complete(out.toByteArray());
    }

    @Override
    public CompletionStage<byte[]> getBody() {
        return body;
    }
}
