package io.fleetmq.app.http;

import io.fleetmq.persistence.security.AdminTokens;
import io.fleetmq.persistence.security.AdminUsers;
import io.fleetmq.persistence.security.BlockedClients;
import io.fleetmq.persistence.security.Credentials;
import io.fleetmq.persistence.security.RefusedConnections;
import io.fleetmq.persistence.security.RuntimeSettings;
import javax.sql.DataSource;

/** The PostgreSQL stores behind the admin API. */
public record SecurityStores(AdminUsers adminUsers, AdminTokens adminTokens, Credentials credentials,
        BlockedClients blockedClients, RefusedConnections refusedConnections, RuntimeSettings runtimeSettings) {

    public static SecurityStores on(DataSource dataSource) {
        return new SecurityStores(new AdminUsers(dataSource), new AdminTokens(dataSource), new Credentials(dataSource),
                new BlockedClients(dataSource), new RefusedConnections(dataSource), new RuntimeSettings(dataSource));
    }
}
