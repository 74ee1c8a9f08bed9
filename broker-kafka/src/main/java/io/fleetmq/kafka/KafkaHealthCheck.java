package io.fleetmq.kafka;

import io.fleetmq.core.health.HealthCheck;
import io.fleetmq.core.health.HealthStatus;
import java.util.Collection;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Node;

/** Kafka is up when the cluster answers a metadata request within the request timeout. */
public final class KafkaHealthCheck implements HealthCheck {

    private final Admin admin;
    private final KafkaSettings settings;

    public KafkaHealthCheck(Admin admin, KafkaSettings settings) {
        this.admin = admin;
        this.settings = settings;
    }

    @Override
    public String name() {
        return "kafka";
    }

    @Override
    public HealthStatus check() {
        try {
            Collection<Node> nodes = admin.describeCluster().nodes()
                    .get(settings.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
            return HealthStatus.up(nodes.size() + " broker(s) at " + settings.bootstrapServers());
        } catch (ExecutionException e) {
            return HealthStatus.down(settings.bootstrapServers() + ": " + HealthStatus.describe(e.getCause()));
        } catch (TimeoutException e) {
            return HealthStatus.down("no answer from " + settings.bootstrapServers() + " within "
                    + settings.requestTimeout().toMillis() + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return HealthStatus.down("interrupted");
        }
    }
}
