package io.fleetmq.core.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class SecretsTest {

    @Test
    void masksThePasswordOfAUrlsUserInfoButKeepsTheUser() {
        assertEquals("cannot connect to redis://app:****@cache:6379/0: refused",
                Secrets.mask("cannot connect to redis://app:s3cr3t!@cache:6379/0: refused"));
        assertEquals("rediss-cluster://:****@a:7000,b:7001", Secrets.mask("rediss-cluster://:pw@a:7000,b:7001"));
        assertEquals("redis://user@host:6379", Secrets.mask("redis://user@host:6379"));
    }

    @Test
    void masksPasswordParametersOfJdbcUrls() {
        assertEquals("jdbc:postgresql://db:5432/fleetmq?user=fleetmq&password=****&ssl=true",
                Secrets.mask("jdbc:postgresql://db:5432/fleetmq?user=fleetmq&password=hunter2&ssl=true"));
        assertEquals("jdbc:postgresql://fleetmq:****@db/fleetmq", Secrets.mask("jdbc:postgresql://fleetmq:x@db/fleetmq"));
        assertEquals("PASSWORD=****", Secrets.mask("PASSWORD=abc"));
    }

    @Test
    void leavesTextWithoutSecretsAlone() {
        String plain = "connected to jdbc:postgresql://db:5432/fleetmq; Kafka at kafka:9092";
        assertEquals(plain, Secrets.mask(plain));
        assertEquals("", Secrets.mask(""));
        assertNull(Secrets.mask(null));
    }
}
