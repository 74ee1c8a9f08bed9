package io.fleetmq.app.http;

import io.fleetmq.core.security.Credential;
import io.fleetmq.core.security.SecurityChange;
import io.fleetmq.core.security.TopicRules;
import io.fleetmq.core.security.scram.ScramAlgorithm;
import io.fleetmq.core.security.scram.ScramKeys;
import io.fleetmq.persistence.auth.PasswordCheck;
import io.fleetmq.persistence.security.Credentials;
import io.javalin.http.Context;
import java.util.List;
import java.util.Objects;

/** {@code /api/v1/credentials}: the MQTT clients' credentials and their topic rules. */
final class CredentialRoutes {

    static final String PATH = AdminApi.PREFIX + "/credentials";
    private static final List<String> CLIENT_TYPES = List.of("DEVICE", "APPLICATION");

    private final AdminApi api;

    CredentialRoutes(AdminApi api) {
        this.api = api;
    }

    void addTo(RouteTable table) {
        table.post(PATH).id("createCredential").tag("credentials")
                .summary("Create a credential")
                .body(ApiModels.CredentialRequest.class)
                .reply(201, "created", ApiModels.CreatedId.class)
                .reply(409, "a credential with this user name and client ID (x509: this certCommonName) exists",
                        ApiModels.ErrorBody.class)
                .handle(this::create);
        table.get(PATH).id("listCredentials").tag("credentials")
                .summary("List credentials, ordered by user name, then client ID")
                .paged()
                .query("username", String.class, "only this user name")
                .query("clientId", String.class, "only this client ID")
                .query("clientType", String.class, "only this client type", CLIENT_TYPES.toArray(String[]::new))
                .query("text", String.class, "part of the user name, client ID or certificate common name")
                .reply(200, "one page", ApiModels.CredentialPage.class)
                .handle(this::list);
        table.get(PATH + "/{id}").id("getCredential").tag("credentials")
                .summary("Read a credential")
                .reply(200, "the credential", ApiModels.CredentialView.class)
                .handle(this::get);
        table.put(PATH + "/{id}").id("replaceCredential").tag("credentials")
                .summary("Replace a credential (an omitted password keeps the current one); clients connected"
                        + " with it authenticate again when its password, user name, client ID, certificate common"
                        + " name or type changed")
                .body(ApiModels.CredentialRequest.class)
                .reply(200, "the new state", ApiModels.CredentialView.class)
                .reply(409, "another credential has this user name and client ID (x509: this certCommonName)",
                        ApiModels.ErrorBody.class)
                .handle(this::replace);
        table.delete(PATH + "/{id}").id("deleteCredential").tag("credentials")
                .summary("Delete a credential; clients connected with it are disconnected")
                .reply(204, "deleted")
                .handle(this::delete);
    }

    private void create(Context ctx) {
        ApiModels.CredentialRequest request = ApiJson.read(ctx, ApiModels.CredentialRequest.class);
        validate(request, false);
        checkHash(request);
        Credential created = api.stores().credentials().create(input(request));
        api.announce(new SecurityChange(SecurityChange.Kind.CREDENTIAL, created.id(), false, false));
        ctx.header("Location", PATH + "/" + created.id());
        ApiJson.write(ctx, 201, new ApiModels.CreatedId(created.id()));
    }

    private void list(Context ctx) {
        Paging paging = Paging.of(ctx);
        Credentials.Filter filter = new Credentials.Filter(Paging.filter(ctx, "username"),
                Paging.filter(ctx, "clientId"), Paging.filter(ctx, "clientType", CLIENT_TYPES),
                Paging.filter(ctx, "text"));
        ApiJson.write(ctx, 200, ApiModels.CredentialPage.of(
                api.stores().credentials().list(filter, paging.page(), paging.pageSize())));
    }

    private void get(Context ctx) {
        ApiJson.write(ctx, 200, ApiModels.CredentialView.of(find(ctx)));
    }

    private void replace(Context ctx) {
        String id = AdminApi.id(ctx, "credential");
        ApiModels.CredentialRequest request = ApiJson.read(ctx, ApiModels.CredentialRequest.class);
        validate(request, true);
        checkHash(request);
        Credentials store = api.stores().credentials();
        Credential before = store.get(id).orElseThrow(() -> notFound(id));
        if (request.password() == null && request.passwordHash() == null && !request.type().equals(before.type())
                && !Credential.X509.equals(request.type())) {
            // (An x509 credential has no password: the certificate is its proof.)
            throw ApiException.badRequest("password", "is required when the type changes");
        }
        if (request.password() == null && Credential.SCRAM.equals(before.type()) && before.scram() != null
                && !before.scram().algorithm().apiName().equals(request.algorithm())) {
            // The stored keys were derived with the old algorithm; the new one needs the password.
            throw ApiException.badRequest("password", "is required when the algorithm changes");
        }
        Credentials.Input input = input(request);
        Credential after = store.update(id, input).orElseThrow(() -> notFound(id));
        // Clients connected with the old values must prove themselves again; a change of rules
        // alone applies to them as they are.
        boolean accessChanged = input.passwordHash() != null || input.scram() != null
                || !Objects.equals(before.type(), after.type())
                || !Objects.equals(before.username(), after.username())
                || !Objects.equals(before.clientId(), after.clientId())
                || !Objects.equals(before.clientType(), after.clientType())
                || !Objects.equals(before.certCommonName(), after.certCommonName())
                || before.certCommonNameRegex() != after.certCommonNameRegex();
        api.announce(new SecurityChange(SecurityChange.Kind.CREDENTIAL, id, false, accessChanged));
        ApiJson.write(ctx, 200, ApiModels.CredentialView.of(after));
    }

    private void delete(Context ctx) {
        String id = AdminApi.id(ctx, "credential");
        if (!api.stores().credentials().delete(id)) {
            throw notFound(id);
        }
        api.announce(new SecurityChange(SecurityChange.Kind.CREDENTIAL, id, true, true));
        ctx.status(204);
    }

    private Credential find(Context ctx) {
        String id = AdminApi.id(ctx, "credential");
        return api.stores().credentials().get(id).orElseThrow(() -> notFound(id));
    }

    private static ApiException notFound(String id) {
        return ApiException.notFound("no credential with id '" + id + "'");
    }

    /** Checks every field, naming the first one at fault. */
    private static void validate(ApiModels.CredentialRequest r, boolean update) {
        if (r.type() == null) {
            throw ApiException.badRequest("type", "is required (basic, scram or x509)");
        }
        if (r.passwordHash() != null) {
            if (!Credential.BASIC.equals(r.type())) {
                throw ApiException.badRequest("passwordHash", "is only for basic credentials");
            }
            if (r.password() != null) {
                throw ApiException.badRequest("passwordHash", "give either password or passwordHash, not both");
            }
        }
        if (Credential.X509.equals(r.type())) {
            if (r.algorithm() != null) {
                throw ApiException.badRequest("algorithm", "is only for scram credentials; omit it");
            }
            validateX509(r);
            return;
        }
        if (!Credential.BASIC.equals(r.type()) && !Credential.SCRAM.equals(r.type())) {
            throw ApiException.badRequest("type", "must be basic, scram or x509");
        }
        if (r.certCommonName() != null) {
            throw ApiException.badRequest("certCommonName", "is only for credentials of type x509");
        }
        if (r.certCommonNameRegex() != null) {
            throw ApiException.badRequest("certCommonNameRegex", "is only for credentials of type x509");
        }
        if (Credential.SCRAM.equals(r.type())) {
            validateScram(r, update);
        } else if (r.algorithm() != null) {
            throw ApiException.badRequest("algorithm", "is only for scram credentials; omit it");
        }
        if ("".equals(r.username())) {
            throw ApiException.badRequest("username", "must not be empty; omit it to match any user name");
        }
        if ("".equals(r.clientId())) {
            throw ApiException.badRequest("clientId", "must not be empty; omit it to match any client ID");
        }
        if (r.username() == null && r.clientId() == null) {
            throw ApiException.badRequest("username", "at least one of username and clientId is required");
        }
        if (r.clientType() != null && !CLIENT_TYPES.contains(r.clientType())) {
            throw ApiException.badRequest("clientType", "must be DEVICE, APPLICATION or null");
        }
        if ("".equals(r.password())) {
            throw ApiException.badRequest("password", update
                    ? "must not be empty; omit it to keep the current password"
                    : "must not be empty; omit it for a credential without password");
        }
        rules("publish", r.publish());
        rules("subscribe", r.subscribe());
    }

    /**
     * Refuses a {@code passwordHash} that no client could ever match: not one of the accepted formats,
     * damaged, or above the configured cost limits. The answer names the format problem, never the value.
     */
    private void checkHash(ApiModels.CredentialRequest r) {
        if (r.passwordHash() == null) {
            return;
        }
        PasswordCheck check = api.hashes().check(new byte[] {0}, r.passwordHash());
        if (check.outcome() == PasswordCheck.Outcome.MALFORMED || check.outcome() == PasswordCheck.Outcome.TOO_COSTLY) {
            throw ApiException.badRequest("passwordHash", check.reason());
        }
    }

    /** An x509 credential: a certificate name, no user name, client ID or password. */
    private static void validateX509(ApiModels.CredentialRequest r) {
        if (r.certCommonName() == null || r.certCommonName().isEmpty()) {
            throw ApiException.badRequest("certCommonName", "is required for a credential of type x509");
        }
        if (Boolean.TRUE.equals(r.certCommonNameRegex())) {
            try {
                java.util.regex.Pattern.compile(r.certCommonName());
            } catch (java.util.regex.PatternSyntaxException e) {
                throw ApiException.badRequest("certCommonName", "is not a valid regular expression: "
                        + e.getDescription() + " near index " + e.getIndex());
            }
        }
        if (r.password() != null) {
            throw ApiException.badRequest("password", "is not allowed for a credential of type x509: the client"
                    + " certificate is its proof");
        }
        if (r.username() != null) {
            throw ApiException.badRequest("username", "is not allowed for a credential of type x509");
        }
        if (r.clientId() != null) {
            throw ApiException.badRequest("clientId", "is not allowed for a credential of type x509");
        }
        if (r.clientType() != null && !CLIENT_TYPES.contains(r.clientType())) {
            throw ApiException.badRequest("clientType", "must be DEVICE, APPLICATION or null");
        }
        rules("publish", r.publish());
        rules("subscribe", r.subscribe());
    }

    /** SCRAM: a user name, no client ID, an algorithm, and a password to derive the keys from. */
    private static void validateScram(ApiModels.CredentialRequest r, boolean update) {
        if (r.username() == null) {
            throw ApiException.badRequest("username", "is required for a scram credential");
        }
        if (r.clientId() != null) {
            throw ApiException.badRequest("clientId", "is not used by scram credentials; omit it");
        }
        if (r.algorithm() == null) {
            throw ApiException.badRequest("algorithm", "is required for a scram credential (SHA-256 or SHA-512)");
        }
        if (ScramAlgorithm.ofApiName(r.algorithm()) == null) {
            throw ApiException.badRequest("algorithm", "must be SHA-256 or SHA-512");
        }
        if (r.password() == null && !update) {
            throw ApiException.badRequest("password", "is required for a scram credential");
        }
    }

    private static void rules(String field, List<String> filters) {
        if (filters == null) {
            return;
        }
        for (int i = 0; i < filters.size(); i++) {
            String filter = filters.get(i);
            if (filter == null) {
                throw ApiException.badRequest(field + "[" + i + "]", "must not be null");
            }
            String reason = TopicRules.validate(filter);
            if (reason != null) {
                throw ApiException.badRequest(field + "[" + i + "]", reason);
            }
        }
    }

    private Credentials.Input input(ApiModels.CredentialRequest r) {
        List<String> publish = r.publish() == null ? List.of() : r.publish();
        List<String> subscribe = r.subscribe() == null ? List.of() : r.subscribe();
        if (Credential.SCRAM.equals(r.type())) {
            return new Credentials.Input(r.type(), r.username(), null, null, r.clientType(), publish, subscribe,
                    scramKeys(ScramAlgorithm.ofApiName(r.algorithm()), r.password()));
        }
        if (Credential.X509.equals(r.type())) {
            return new Credentials.Input(r.type(), null, null, null, r.clientType(), publish, subscribe,
                    r.certCommonName(), Boolean.TRUE.equals(r.certCommonNameRegex()));
        }
        String hash = r.passwordHash() != null ? r.passwordHash() : hash(r.password());
        return new Credentials.Input(r.type(), r.username(), r.clientId(), hash, r.clientType(),
                publish, subscribe);
    }

    /** The stored form of a SCRAM password, derived on arrival; the password itself is not kept. Null keeps. */
    private static ScramKeys scramKeys(ScramAlgorithm algorithm, String password) {
        if (password == null) {
            return null;
        }
        char[] chars = password.toCharArray();
        try {
            return ScramKeys.derive(algorithm, chars);
        } finally {
            java.util.Arrays.fill(chars, '\0');
        }
    }

    private String hash(String password) {
        if (password == null) {
            return null;
        }
        char[] chars = password.toCharArray();
        try {
            return api.hashes().hash(chars);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("password", e.getMessage().replaceFirst("^password ", ""));
        } finally {
            java.util.Arrays.fill(chars, '\0');
        }
    }
}
