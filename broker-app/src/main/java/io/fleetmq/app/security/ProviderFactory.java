package io.fleetmq.app.security;

import io.fleetmq.app.config.ConfigException;
import io.fleetmq.app.security.http.HttpProvider;
import io.fleetmq.app.security.jwt.JwtProvider;
import io.fleetmq.app.security.provider.AuthProvider;
import io.fleetmq.app.security.x509.X509Provider;
import io.fleetmq.persistence.security.Credentials;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * Builds the providers besides basic that a setup lists, at start and again whenever the admin API
 * changes the {@code auth.*} settings.
 */
public final class ProviderFactory {

    private final Credentials credentials;
    private final MeterRegistry meters;
    private final BooleanSupplier databaseAway;
    private final Clock clock;

    public ProviderFactory(Credentials credentials, MeterRegistry meters, BooleanSupplier databaseAway, Clock clock) {
        this.credentials = credentials;
        this.meters = meters;
        this.databaseAway = databaseAway;
        this.clock = clock;
    }

    /**
     * The providers {@code setup} lists besides basic and scram, by name; all or none.
     *
     * @throws ConfigException naming the setting that keeps one from being built (a key file that
     *                         cannot be read, no key for jwt)
     */
    public Map<String, AuthProvider> build(AuthSetup setup) {
        Map<String, AuthProvider> built = new HashMap<>();
        try {
            for (String name : setup.security().providers()) {
                switch (name) {
                    case "basic", "scram" -> { }
                    case "x509" -> built.put(name, new X509Provider(credentials, setup.security().cacheTtl(), databaseAway));
                    case "http" -> built.put(name, new HttpProvider(setup.http(), meters));
                    case "jwt" -> built.put(name, JwtProvider.create(setup.jwt(), clock));
                    default -> throw new ConfigException("setting auth.providers (AUTH_PROVIDERS): the " + name
                            + " provider is not available in this build");
                }
            }
            return built;
        } catch (RuntimeException e) {
            closeAll(built);
            throw e;
        }
    }

    /** Closes providers no longer asked; a failure to close one is not a reason to keep the others open. */
    public static void closeAll(Map<String, AuthProvider> providers) {
        for (AuthProvider p : providers.values()) {
            try {
                p.close();
            } catch (Exception e) {
                org.slf4j.LoggerFactory.getLogger(ProviderFactory.class).debug("Closing provider {}: {}", p.name(),
                        e.toString());
            }
        }
    }
}
