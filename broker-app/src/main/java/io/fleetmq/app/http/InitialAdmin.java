package io.fleetmq.app.http;

import io.fleetmq.core.health.HealthStatus;
import io.fleetmq.persistence.auth.PasswordHashes;
import io.fleetmq.persistence.security.AdminUsers;
import io.fleetmq.persistence.security.DataAccessException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first admin user: {@code admin}, created when PostgreSQL has no admin user yet, with the
 * configured password or else a generated one that is logged once and written, readable by the
 * owner only, to {@code <data dir>/initial-admin-password}. Several nodes starting at once create
 * it exactly once (the store decides); the node whose call created it is the one that tells.
 */
public final class InitialAdmin {

    public static final String USERNAME = "admin";
    public static final String PASSWORD_FILE = "initial-admin-password";
    private static final Logger log = LoggerFactory.getLogger(InitialAdmin.class);
    /** Letters and digits without the ones people mistake for each other (0/O, 1/l/I). */
    private static final String ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    private static final int GENERATED_LENGTH = 20;

    private final AdminUsers users;
    private final PasswordHashes hashes;
    private final String configuredPassword;
    private final Path dataDir;
    private final AtomicBoolean done = new AtomicBoolean();

    /**
     * @param configuredPassword {@code admin.password} (ADMIN_PASSWORD); empty to generate one
     * @param dataDir            where a generated password is written
     */
    public InitialAdmin(AdminUsers users, PasswordHashes hashes, String configuredPassword, Path dataDir) {
        this.users = users;
        this.hashes = hashes;
        this.configuredPassword = configuredPassword;
        this.dataDir = dataDir;
    }

    /**
     * Creates the first admin user if there is none. Does nothing once it succeeded; if PostgreSQL
     * is unavailable it logs that and returns false, to be called again later.
     */
    public boolean ensure() {
        if (done.get()) {
            return true;
        }
        synchronized (this) {
            if (done.get()) {
                return true;
            }
            try {
                create();
                done.set(true);
                return true;
            } catch (DataAccessException e) {
                log.warn("Cannot check for the first admin user yet, PostgreSQL is unavailable: {};"
                        + " trying again at the next login", HealthStatus.describe(e));
                return false;
            }
        }
    }

    private void create() {
        boolean generated = configuredPassword.isEmpty();
        String password = generated ? generate() : configuredPassword;
        char[] chars = password.toCharArray();
        String hash;
        try {
            hash = hashes.hash(chars);
        } finally {
            java.util.Arrays.fill(chars, '\0');
        }
        if (!users.createFirst(USERNAME, hash)) {
            if (!generated) {
                log.debug("An admin user exists; admin.password (ADMIN_PASSWORD) applies only to the first one");
            }
            return;
        }
        if (!generated) {
            log.info("Created admin user '{}' with the password of admin.password (ADMIN_PASSWORD)", USERNAME);
            return;
        }
        Path file = dataDir.resolve(PASSWORD_FILE);
        boolean written = write(file, password);
        // Shown once, plainly, so that whoever starts the broker can log in; change it afterwards.
        log.warn("Created admin user '{}' with the generated password {} ({}). Set admin.password"
                + " (ADMIN_PASSWORD) to choose it instead", USERNAME, password,
                written ? "also in " + file + ", readable by its owner only" : "it could not be written to " + file);
    }

    private static String generate() {
        SecureRandom random = new SecureRandom();
        StringBuilder sb = new StringBuilder(GENERATED_LENGTH);
        for (int i = 0; i < GENERATED_LENGTH; i++) {
            sb.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
        }
        return sb.toString();
    }

    /** Writes the password to a file that only its owner may read, replacing an older one. */
    private static boolean write(Path file, String password) {
        try {
            Files.createDirectories(file.getParent());
            Files.deleteIfExists(file);
            try {
                // Created with its permissions, so it is never readable by others, not even briefly.
                Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            } catch (UnsupportedOperationException e) {
                Files.createFile(file); // not a POSIX file system: its default permissions apply
            } catch (FileAlreadyExistsException e) {
                throw new IOException("created concurrently by another process", e);
            }
            Files.writeString(file, password + System.lineSeparator(), StandardCharsets.UTF_8);
            return true;
        } catch (IOException e) {
            log.warn("Cannot write {}: {}", file, HealthStatus.describe(e));
            return false;
        }
    }
}
