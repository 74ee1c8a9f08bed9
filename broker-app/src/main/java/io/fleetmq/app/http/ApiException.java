package io.fleetmq.app.http;

import java.util.Map;

/**
 * An answer other than success, thrown by a handler and written as {@code {"error", "message"}}
 * with its status. The message is for the caller: it names the field or the thing that was wrong
 * and never carries internals such as a stack trace or an SQL error.
 */
final class ApiException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int status;
    private final String error;
    private final transient Map<String, String> headers;

    ApiException(int status, String error, String message, Map<String, String> headers) {
        super(message, null, false, false);
        this.status = status;
        this.error = error;
        this.headers = Map.copyOf(headers);
    }

    ApiException(int status, String error, String message) {
        this(status, error, message, Map.of());
    }

    /** 400 naming the field: {@code "<field>: <reason>"}. */
    static ApiException badRequest(String field, String reason) {
        return new ApiException(400, "bad_request", field + ": " + reason);
    }

    /** 400 with a reason that already names its field. */
    static ApiException badRequest(String reasonNamingField) {
        return new ApiException(400, "bad_request", reasonNamingField);
    }

    static ApiException notFound(String message) {
        return new ApiException(404, "not_found", message);
    }

    static ApiException conflict(String message) {
        return new ApiException(409, "conflict", message);
    }

    static ApiException unavailable(String message) {
        return new ApiException(503, "unavailable", message);
    }

    int status() {
        return status;
    }

    String error() {
        return error;
    }

    Map<String, String> headers() {
        return headers;
    }
}
