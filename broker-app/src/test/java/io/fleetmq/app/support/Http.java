package io.fleetmq.app.support;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Plain HTTP GETs against a node's admin port. */
public final class Http {

    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private Http() {
    }

    /** The response, or null if nothing answers on the port. */
    public static HttpResponse<String> get(int port, String path) {
        return send(port, path, "GET");
    }

    public static HttpResponse<String> send(int port, String path, String method) {
        try {
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(Duration.ofSeconds(20))
                    .method(method, HttpRequest.BodyPublishers.noBody())
                    .build();
            return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public static boolean isReady(int port) {
        HttpResponse<String> r = get(port, "/health/ready");
        return r != null && r.statusCode() == 200;
    }
}
