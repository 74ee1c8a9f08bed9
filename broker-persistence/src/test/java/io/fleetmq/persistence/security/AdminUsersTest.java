package io.fleetmq.persistence.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Against the embedded PostgreSQL of the test kit, in a schema of its own per test. */
class AdminUsersTest {

    private static final int NODES = 6;

    private SecuritySchema schema;
    private AdminUsers users;

    @BeforeEach
    void open() {
        schema = new SecuritySchema(NODES + 1);
        users = new AdminUsers(schema.dataSource());
    }

    @AfterEach
    void close() {
        schema.close();
    }

    @Test
    void createsTheFirstUserOnlyWhileThereIsNone() {
        assertTrue(users.find("admin").isEmpty());
        assertTrue(users.createFirst("admin", "$2b$10$first"));
        assertFalse(users.createFirst("other", "$2b$10$second"));
        assertFalse(users.createFirst("admin", "$2b$10$third"));

        AdminUsers.AdminUser admin = users.find("admin").orElseThrow();
        assertEquals("admin", admin.username());
        assertEquals("$2b$10$first", admin.passwordHash());
        assertTrue(users.find("other").isEmpty());
        assertFalse(admin.toString().contains("$2b$"), admin.toString());
    }

    @Test
    void nodesStartingAtOnceCreateExactlyOneUser() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(NODES);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Boolean>> results = new ArrayList<>();
            for (int i = 0; i < NODES; i++) {
                String name = "admin-" + i;
                results.add(pool.submit(() -> {
                    start.await();
                    return users.createFirst(name, "$2b$10$hash");
                }));
            }
            start.countDown();
            int created = 0;
            for (Future<Boolean> result : results) {
                created += result.get(30, TimeUnit.SECONDS) ? 1 : 0;
            }
            assertEquals(1, created);
            assertEquals("1", schema.queryString("SELECT count(*) FROM admin_user"));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void anUnknownUserIsNotFound() {
        users.createFirst("admin", "$2b$10$first");
        assertTrue(users.find("Admin").isEmpty());
        assertTrue(users.find(null).isEmpty());
    }
}
