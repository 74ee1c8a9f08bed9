package io.fleetmq.persistence.sql;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.fleetmq.core.health.HealthCheck;
import io.fleetmq.core.health.HealthStatus;
import io.fleetmq.core.log.Secrets;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker's PostgreSQL database: a connection pool, with the schema migrated to the version
 * this build expects before anything else uses it. Several nodes may start at once; Flyway's lock
 * lets exactly one of them apply a migration.
 */
public final class Database implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Database.class);

    private final DatabaseSettings settings;
    private final HikariDataSource dataSource;

    private Database(DatabaseSettings settings, HikariDataSource dataSource) {
        this.settings = settings;
        this.dataSource = dataSource;
    }

    /**
     * Connects and migrates.
     *
     * @throws IllegalStateException with a one-line reason if the database is unreachable or the
     *                               migration fails
     */
    public static Database open(DatabaseSettings settings) {
        return open(settings, null);
    }

    /**
     * As {@link #open(DatabaseSettings)}, with the pool's meters ({@code hikaricp_connections_*},
     * tag {@code pool="fleetmq-db"}) in {@code meters} when it is not null.
     */
    public static Database open(DatabaseSettings settings, io.micrometer.core.instrument.MeterRegistry meters) {
        HikariConfig config = new HikariConfig();
        if (meters != null) {
            config.setMetricsTrackerFactory(new com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory(meters));
        }
        config.setPoolName("fleetmq-db");
        config.setJdbcUrl(settings.url());
        config.setUsername(settings.user());
        config.setPassword(settings.password());
        config.setMaximumPoolSize(settings.maxPoolSize());
        config.setMinimumIdle(1);
        config.setConnectionTimeout(Math.max(250, settings.connectTimeout().toMillis()));
        config.setValidationTimeout(Math.max(250, Math.min(5_000, settings.connectTimeout().toMillis())));
        // Fail on the first attempt so an unreachable database is a clear start-up error, not a hang.
        config.setInitializationFailTimeout(1);
        HikariDataSource dataSource;
        try {
            dataSource = new HikariDataSource(config);
        } catch (RuntimeException e) {
            throw new IllegalStateException(Secrets.mask("cannot connect to PostgreSQL at " + settings.url() + ": "
                    + HealthStatus.describe(e)), e);
        }
        try {
            MigrateResult result = Flyway.configure()
                    .dataSource(dataSource)
                    .locations("classpath:db/migration")
                    .load()
                    .migrate();
            log.debug("Database schema at version {} ({} migrations applied now)",
                    result.targetSchemaVersion, result.migrationsExecuted);
        } catch (RuntimeException e) {
            dataSource.close();
            throw new IllegalStateException(Secrets.mask("cannot migrate the database schema at " + settings.url() + ": "
                    + HealthStatus.describe(e)), e);
        }
        return new Database(settings, dataSource);
    }

    public DataSource dataSource() {
        return dataSource;
    }

    public HealthCheck healthCheck() {
        return new HealthCheck() {
            @Override
            public String name() {
                return "postgres";
            }

            @Override
            public HealthStatus check() {
                try (Connection c = dataSource.getConnection()) {
                    int seconds = (int) Math.max(1, settings.connectTimeout().toSeconds());
                    return c.isValid(seconds)
                            ? HealthStatus.up("connected to " + settings.url())
                            : HealthStatus.down("connection to " + settings.url() + " is not valid");
                } catch (SQLException | RuntimeException e) {
                    return HealthStatus.down(e);
                }
            }
        };
    }

    @Override
    public void close() {
        dataSource.close();
    }
}
