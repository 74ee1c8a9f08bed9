package io.fleetmq.app.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.javalin.http.Context;
import java.util.stream.Collectors;

/**
 * JSON in and out of the admin API. Reading is strict, so that a typo in a field name is a 400
 * naming the field rather than a setting silently left out; instants are ISO-8601 strings.
 */
final class ApiJson {

    static final String CONTENT_TYPE = "application/json; charset=utf-8";

    static final ObjectMapper MAPPER = new ObjectMapper()
            .registerModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);

    private ApiJson() {
    }

    /** The request body as {@code type}; a 400 naming the field on anything it cannot take. */
    static <T> T read(Context ctx, Class<T> type) {
        String body = ctx.body();
        if (body.isBlank()) {
            throw ApiException.badRequest("body", "a JSON object is required");
        }
        try {
            T value = MAPPER.readValue(body, type);
            if (value == null) {
                throw ApiException.badRequest("body", "a JSON object is required");
            }
            return value;
        } catch (UnrecognizedPropertyException e) {
            throw ApiException.badRequest(path(e), "unknown field");
        } catch (MismatchedInputException e) {
            String field = path(e);
            throw ApiException.badRequest(field.isEmpty() ? "body" : field,
                    field.isEmpty() ? "must be a JSON object" : "has the wrong type");
        } catch (JsonProcessingException e) {
            // The parser's message quotes the input and its own internals; the position is enough.
            throw ApiException.badRequest("body", "malformed JSON"
                    + (e.getLocation() != null ? " at line " + e.getLocation().getLineNr()
                            + ", column " + e.getLocation().getColumnNr() : ""));
        }
    }

    /** The JSON path of the field a mapping error is about, as {@code a.b[2]}. */
    private static String path(JsonMappingException e) {
        return e.getPath().stream()
                .map(ref -> ref.getFieldName() != null ? "." + ref.getFieldName() : "[" + ref.getIndex() + "]")
                .collect(Collectors.joining())
                .replaceFirst("^\\.", "");
    }

    static void write(Context ctx, int status, Object body) {
        String json;
        try {
            json = MAPPER.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write " + body.getClass().getSimpleName() + " as JSON", e);
        }
        ctx.status(status).contentType(CONTENT_TYPE).header("Cache-Control", "no-store").result(json);
    }
}
