package io.fleetmq.app.http;

import io.fleetmq.core.security.SecurityChange;
import io.fleetmq.persistence.security.AdminTokens;
import io.fleetmq.persistence.security.AdminUsers;
import io.javalin.http.Context;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Login, logout and the bearer check in front of every other operation. Tokens live in PostgreSQL
 * (as hashes), so a token from one node works on every node and a logout ends it everywhere.
 * Password checks take a tenth of a second of CPU; they run on the admin port's worker threads,
 * never on its selector threads.
 */
final class AuthRoutes {

    static final String LOGIN = AdminApi.PREFIX + "/auth/login";
    static final String LOGOUT = AdminApi.PREFIX + "/auth/logout";
    private static final String HOLDER = "fleetmq.admin";
    private static final String TOKEN = "fleetmq.token";
    private static final String BEARER_PREFIX = "Bearer ";

    private final AdminApi api;
    /**
     * A hash no password matches, checked for unknown user names so that a login for a user that
     * does not exist takes as long as one with a wrong password.
     */
    private final String decoyHash;

    AuthRoutes(AdminApi api) {
        this.api = api;
        byte[] random = new byte[32];
        new SecureRandom().nextBytes(random);
        this.decoyHash = api.hashes().hash(HexFormat.of().formatHex(random).toCharArray());
    }

    void addTo(RouteTable table) {
        table.post(LOGIN).id("login").tag("auth").open()
                .summary("Log in as an admin user; returns a bearer token")
                .body(ApiModels.LoginRequest.class)
                .reply(200, "logged in", ApiModels.LoginResponse.class)
                .reply(401, "wrong user name or password", ApiModels.ErrorBody.class)
                .handle(this::login);
        table.post(LOGOUT).id("logout").tag("auth")
                .summary("Revoke the bearer token of this request")
                .reply(204, "the token no longer works")
                .handle(this::logout);
    }

    private void login(Context ctx) {
        ApiModels.LoginRequest request = ApiJson.read(ctx, ApiModels.LoginRequest.class);
        if (request.username() == null || request.username().isEmpty()) {
            throw ApiException.badRequest("username", "is required");
        }
        if (request.password() == null) {
            throw ApiException.badRequest("password", "is required");
        }
        SecurityStores stores = api.stores();
        InitialAdmin initial = api.initialAdmin();
        if (initial != null) {
            initial.ensure(); // PostgreSQL may have been down when the node started
        }
        Optional<AdminUsers.AdminUser> user = stores.adminUsers().find(request.username());
        char[] password = request.password().toCharArray();
        boolean matched = api.hashes().verify(password, user.map(AdminUsers.AdminUser::passwordHash).orElse(decoyHash));
        java.util.Arrays.fill(password, '\0');
        if (user.isEmpty() || !matched) {
            // Neither the message nor the time taken tells whether the user exists.
            throw new ApiException(401, "unauthorized", "wrong user name or password");
        }
        AdminTokens.Issued issued = stores.adminTokens().issue(user.get().id(), api.tokenTtl());
        ApiJson.write(ctx, 200, new ApiModels.LoginResponse(issued.token(), issued.expiresAt()));
    }

    private void logout(Context ctx) {
        String token = ctx.attribute(TOKEN);
        api.stores().adminTokens().revoke(token);
        api.announce(new SecurityChange(SecurityChange.Kind.ADMIN_TOKEN, tokenId(token), true, true));
        ctx.status(204);
    }

    /**
     * The bearer check, run before every {@code /api/} request except the {@code openPaths}: a
     * missing, unknown, expired or revoked token is a 401 with {@code WWW-Authenticate: Bearer}.
     */
    void requireToken(Context ctx, Set<String> openPaths) {
        String path = ctx.path();
        if (path.length() > 1 && path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        if (openPaths.contains(path)) {
            return;
        }
        String header = ctx.header("Authorization");
        if (header == null || !header.regionMatches(true, 0, BEARER_PREFIX, 0, BEARER_PREFIX.length())
                || header.substring(BEARER_PREFIX.length()).isBlank()) {
            throw new ApiException(401, "unauthorized",
                    "a bearer token is required (Authorization: Bearer <token> from POST " + LOGIN + ")",
                    Map.of("WWW-Authenticate", "Bearer realm=\"fleetmq\""));
        }
        String token = header.substring(BEARER_PREFIX.length()).trim();
        AdminTokens.Holder holder = api.stores().adminTokens().validate(token, api.clock().instant())
                .orElseThrow(() -> new ApiException(401, "unauthorized", "the token is unknown, expired or revoked",
                        Map.of("WWW-Authenticate", "Bearer realm=\"fleetmq\", error=\"invalid_token\"")));
        ctx.attribute(HOLDER, holder);
        ctx.attribute(TOKEN, token);
    }

    /** How a token is named in announcements and logs: its SHA-256, never the token itself. */
    static String tokenId(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
