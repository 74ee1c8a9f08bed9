package io.fleetmq.app.support;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Calls of a node's admin API, as an operator's script makes them: JSON bodies and a bearer token. */
public final class AdminHttp {

    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private AdminHttp() {
    }

    /** Logs in as {@code user} and returns the bearer token; fails the test if the login is refused. */
    public static String login(int port, String user, String password) {
        HttpResponse<String> login = send(port, null, "POST", "/api/v1/auth/login",
                "{\"username\":\"" + user + "\",\"password\":\"" + password + "\"}");
        if (login.statusCode() != 200) {
            throw new AssertionError("login of " + user + " answered " + login.statusCode() + ": " + login.body());
        }
        try {
            String token = new ObjectMapper().readTree(login.body()).path("token").asText("");
            if (token.isEmpty()) {
                throw new AssertionError("login answered no token: " + login.body());
            }
            return token;
        } catch (IOException e) {
            throw new AssertionError("login answered no JSON: " + login.body(), e);
        }
    }

    /** {@code method path} on the admin port with a JSON {@code body} (null: none) and {@code token} (null: none). */
    public static HttpResponse<String> send(int port, String token, String method, String path, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json");
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        try {
            return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
