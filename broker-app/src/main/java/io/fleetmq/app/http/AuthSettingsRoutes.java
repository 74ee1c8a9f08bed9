package io.fleetmq.app.http;

import io.fleetmq.app.config.ConfigException;
import io.fleetmq.app.config.Settings;
import io.fleetmq.app.security.AuthSetup;
import io.fleetmq.core.security.SecurityChange;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code /api/v1/auth/settings}: the provider order and every provider's settings ({@code auth.*}),
 * changed at runtime. Overrides are checked as a node applies them (the same errors as at start,
 * naming the setting), stored in PostgreSQL and announced; every node then builds its providers
 * anew. Secrets are taken but never shown.
 */
final class AuthSettingsRoutes {

    static final String PATH = AdminApi.PREFIX + "/auth/settings";

    /** What the routes need of the node. */
    interface Control {
        /** The node's configuration: file, environment and defaults. */
        Settings base();

        /**
         * Builds the providers {@code setup} lists as a node would, and closes them again.
         *
         * @throws ConfigException naming the setting that keeps one from being built
         */
        void check(AuthSetup setup);
    }

    private final AdminApi api;

    AuthSettingsRoutes(AdminApi api) {
        this.api = api;
    }

    void addTo(RouteTable table) {
        table.get(PATH).id("getAuthSettings").tag("auth settings")
                .summary("The authentication settings every node applies, overrides marked; secrets are not shown")
                .reply(200, "the settings", ApiModels.AuthSettingsView.class)
                .handle(this::get);
        table.put(PATH).id("changeAuthSettings").tag("auth settings")
                .summary("Override auth.* settings (provider order, JWT keys, HTTP provider, anonymous policy) on every"
                        + " node without a restart; null puts one back to its configured value")
                .body(ApiModels.AuthSettingsRequest.class)
                .reply(200, "stored and announced; nodes apply it within a second", ApiModels.AuthSettingsView.class)
                .handle(this::change);
        table.delete(PATH).id("resetAuthSettings").tag("auth settings")
                .summary("Drop every override: all nodes go back to their configured authentication settings")
                .reply(200, "stored and announced", ApiModels.AuthSettingsView.class)
                .handle(this::reset);
    }

    private Control control() {
        Control c = api.authSettingsControl();
        if (c == null) {
            throw ApiException.unavailable("the node is starting; try again shortly");
        }
        return c;
    }

    private void get(Context ctx) {
        Control control = control();
        Map<String, String> stored = api.stores().runtimeSettings().all(AuthSetup.PREFIX);
        ApiJson.write(ctx, 200, view(control.base(), stored, setupOrConfigured(control.base(), stored)));
    }

    private void change(Context ctx) {
        Control control = control();
        ApiModels.AuthSettingsRequest request = ApiJson.read(ctx, ApiModels.AuthSettingsRequest.class);
        if (request.settings() == null || request.settings().isEmpty()) {
            throw ApiException.badRequest("settings", "is required: an object of settings to change");
        }
        Settings base = control.base();
        Map<String, String> merged = new TreeMap<>(api.stores().runtimeSettings().all(AuthSetup.PREFIX));
        for (Map.Entry<String, String> e : request.settings().entrySet()) {
            String key = base.keyOf(e.getKey()).orElseThrow(() -> ApiException.badRequest(
                    "settings." + AdminApi.abbreviate(e.getKey()), "is not a setting"));
            if (!AuthSetup.changeable(key)) {
                throw ApiException.badRequest("settings." + e.getKey(), key.startsWith(AuthSetup.PREFIX)
                        ? "is read only when a node starts: set it in the configuration"
                        : "is not an authentication setting (auth.*): set it in the configuration");
            }
            if (e.getValue() == null) {
                merged.remove(key);
            } else {
                merged.put(key, e.getValue());
            }
        }
        AuthSetup setup;
        try {
            setup = AuthSetup.of(base, merged);
            control.check(setup);
        } catch (ConfigException | IllegalArgumentException e) {
            throw ApiException.badRequest(e.getMessage());
        }
        store(merged);
        ApiJson.write(ctx, 200, view(base, merged, setup));
    }

    private void reset(Context ctx) {
        Control control = control();
        store(Map.of());
        ApiJson.write(ctx, 200, view(control.base(), Map.of(), setupOrConfigured(control.base(), Map.of())));
    }

    private void store(Map<String, String> overrides) {
        api.stores().runtimeSettings().replace(AuthSetup.PREFIX, overrides);
        api.announce(new SecurityChange(SecurityChange.Kind.SETTINGS, "auth", false, false));
    }

    /** The setup the stored overrides make; the configuration's when they no longer make a valid one. */
    private static AuthSetup setupOrConfigured(Settings base, Map<String, String> stored) {
        try {
            return AuthSetup.of(base, stored);
        } catch (ConfigException | IllegalArgumentException e) {
            return AuthSetup.of(base, Map.of());
        }
    }

    private static ApiModels.AuthSettingsView view(Settings base, Map<String, String> stored, AuthSetup setup) {
        Settings effective = base.with(stored);
        List<ApiModels.AuthSettingView> settings = new ArrayList<>();
        for (String key : base.keys()) {
            if (!key.startsWith(AuthSetup.PREFIX)) {
                continue;
            }
            String value = effective.string(key);
            boolean secret = AuthSetup.SECRETS.contains(key);
            settings.add(new ApiModels.AuthSettingView(key, base.env(key), secret ? null : value, secret,
                    !value.isEmpty(), stored.containsKey(key) ? "admin" : "configuration", AuthSetup.changeable(key)));
        }
        return new ApiModels.AuthSettingsView(setup.security().providers(), settings);
    }
}
