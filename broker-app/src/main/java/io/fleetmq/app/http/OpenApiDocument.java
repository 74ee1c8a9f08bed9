package io.fleetmq.app.http;

import io.swagger.v3.core.converter.AnnotatedType;
import io.swagger.v3.core.converter.ModelConverters;
import io.swagger.v3.core.converter.ResolvedSchema;
import io.swagger.v3.core.util.Json;
import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.Paths;
import io.swagger.v3.oas.models.headers.Header;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.media.BooleanSchema;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.IntegerSchema;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.parameters.Parameter;
import io.swagger.v3.oas.models.parameters.RequestBody;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import io.swagger.v3.oas.models.security.SecurityRequirement;
import io.swagger.v3.oas.models.security.SecurityScheme;
import java.util.List;
import java.util.Map;

/**
 * The OpenAPI 3 description of the admin API, derived from the {@link RouteTable} that registers
 * its routes; the JSON schemas of bodies come from the body records themselves (swagger-core's
 * {@link ModelConverters}).
 */
final class OpenApiDocument {

    static final String BEARER = "bearer";
    private static final String JSON = "application/json";

    private OpenApiDocument() {
    }

    /** The document as JSON text; built once at start-up, the table does not change afterwards. */
    static String json(RouteTable table) {
        return Json.pretty(build(table));
    }

    static OpenAPI build(RouteTable table) {
        Components components = new Components().addSecuritySchemes(BEARER, new SecurityScheme()
                .type(SecurityScheme.Type.HTTP).scheme("bearer")
                .description("A token from POST /api/v1/auth/login, sent as 'Authorization: Bearer <token>'"));
        Paths paths = new Paths();
        for (RouteTable.Route route : table.routes()) {
            // A parameter that spans several segments (<name>, Javalin's form) is {name} in OpenAPI.
            PathItem item = paths.computeIfAbsent(route.path().replaceAll("<([^>/]+)>", "{$1}"), p -> new PathItem());
            Operation op = operation(route, components);
            switch (route.method()) {
                case GET -> item.setGet(op);
                case POST -> item.setPost(op);
                case PUT -> item.setPut(op);
                case DELETE -> item.setDelete(op);
            }
        }
        return new OpenAPI()
                .info(new Info().title("FleetMQ admin API").version("v1")
                        .description("Credentials, blocked clients and refused connections of a FleetMQ cluster. "
                                + "Every operation but login and this document needs a bearer token; errors are "
                                + "{\"error\", \"message\"} objects whose message names the field at fault."))
                .paths(paths)
                .components(components);
    }

    private static Operation operation(RouteTable.Route route, Components components) {
        Operation op = new Operation().operationId(route.operationId()).summary(route.summary());
        if (!route.tag().isEmpty()) {
            op.addTagsItem(route.tag());
        }
        for (RouteTable.Param p : route.params()) {
            op.addParametersItem(new Parameter().name(p.name())
                    .in(p.in() == RouteTable.In.PATH ? "path" : "query")
                    .required(p.required())
                    .description(p.description())
                    .schema(parameterSchema(p.type(), p.allowed())));
        }
        if (route.requestBody() != null) {
            op.requestBody(new RequestBody().required(true).content(json(route.requestBody(), components)));
        }
        ApiResponses responses = new ApiResponses();
        for (RouteTable.Reply reply : route.replies()) {
            ApiResponse response = new ApiResponse().description(reply.description());
            if (reply.body() != null) {
                response.content(json(reply.body(), components));
            }
            if (reply.status() == 201) {
                response.addHeaderObject("Location", new Header().description("the URL of the new entity")
                        .schema(new StringSchema()));
            }
            if (reply.status() == 401) {
                response.addHeaderObject("WWW-Authenticate", new Header().schema(new StringSchema()));
            }
            responses.addApiResponse(String.valueOf(reply.status()), response);
        }
        op.responses(responses);
        if (!route.open()) {
            op.addSecurityItem(new SecurityRequirement().addList(BEARER));
        }
        return op;
    }

    /** Content of a JSON body of {@code type}, as a reference to its schema, which is added to the components. */
    private static Content json(Class<?> type, Components components) {
        ResolvedSchema resolved = ModelConverters.getInstance()
                .resolveAsResolvedSchema(new AnnotatedType(type).resolveAsRef(true));
        @SuppressWarnings("rawtypes")
        Map<String, Schema> referenced = resolved.referencedSchemas;
        if (referenced != null) {
            referenced.forEach(components::addSchemas);
        }
        return new Content().addMediaType(JSON, new MediaType().schema(resolved.schema));
    }

    private static Schema<?> parameterSchema(Class<?> type, List<String> allowed) {
        if (type == Integer.class) {
            return new IntegerSchema();
        }
        if (type == Boolean.class) {
            return new BooleanSchema();
        }
        StringSchema schema = new StringSchema();
        if (!allowed.isEmpty()) {
            schema.setEnum(allowed);
        }
        return schema;
    }
}
