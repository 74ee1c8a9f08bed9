package io.fleetmq.core.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.fleetmq.core.health.HealthStatus;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/** What {@code /health/ready} shows never holds a password, whoever wrote the detail. */
class HealthDetailMaskingTest {

    @Test
    void detailsAndDriverMessagesAreMasked() {
        assertEquals("connected to redis://app:****@cache:6379",
                HealthStatus.up("connected to redis://app:pw@cache:6379").detail());
        HealthStatus down = HealthStatus.down(new IllegalStateException("pool failed",
                new SQLException("cannot open jdbc:postgresql://db/fleetmq?user=x&password=hunter2")));
        assertFalse(down.detail().contains("hunter2"), down.detail());
        assertEquals("cannot open jdbc:postgresql://db/fleetmq?user=x&password=****", down.detail());
    }
}
