package io.fleetmq.embedded;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.embedded.core.ExecutableProvider;
import redis.embedded.model.OsArchitecture;

/**
 * Which {@code redis-server} binary the embedded Redis runs:
 * <ul>
 *   <li>{@code auto}: {@code redis-server} from the {@code PATH} when there is one (kept up to date by the
 *       system's package manager), otherwise the bundled one;</li>
 *   <li>{@code bundled}: the Redis 6.2 binary in {@code com.github.codemonstur:embedded-redis} for this platform;</li>
 *   <li>{@code system}: {@code redis-server} from the {@code PATH}, failing if there is none;</li>
 *   <li>anything else: the path of a {@code redis-server} binary (a Valkey server works as well).</li>
 * </ul>
 * The embedded Redis is configured so that it stops on SIGTERM whichever of them runs.
 */
public final class RedisBinary {

    public static final RedisBinary AUTO = new RedisBinary("auto", null);
    public static final RedisBinary BUNDLED = new RedisBinary("bundled", null);
    public static final RedisBinary SYSTEM = new RedisBinary("system", null);

    private static final Logger log = LoggerFactory.getLogger(RedisBinary.class);
    /** {@code redis-server --version} prints {@code Redis server v=7.0.15 sha=...}; Valkey prints its own name. */
    private static final Pattern VERSION = Pattern.compile("\\bv=(\\d+)\\.(\\d+)");
    private static final int VERSION_TIMEOUT_SECONDS = 10;
    private static final String ON_PATH = "redis-server";

    private static File bundled;

    private final String choice;
    private final Path path;
    private File executable;
    private int majorVersion = -1;

    private RedisBinary(String choice, Path path) {
        this.choice = choice;
        this.path = path;
    }

    /**
     * Parses a choice: {@code auto} (also for blank), {@code bundled}, {@code system}, or the path of an
     * executable file.
     *
     * @throws IllegalArgumentException saying what is accepted, if {@code value} is none of these
     */
    public static RedisBinary of(String value) {
        String trimmed = value == null ? "" : value.strip();
        switch (trimmed.toLowerCase(Locale.ROOT)) {
            case "", "auto":
                return AUTO;
            case "bundled":
                return BUNDLED;
            case "system":
                return SYSTEM;
            default:
                break;
        }
        Path file;
        try {
            file = Path.of(trimmed).toAbsolutePath();
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("is neither auto, bundled, system nor a path", e);
        }
        if (!Files.isRegularFile(file) || !Files.isExecutable(file)) {
            throw new IllegalArgumentException("is neither auto, bundled, system nor an executable file");
        }
        return new RedisBinary(trimmed, file);
    }

    /** The file to run; extracts the bundled binary on first use. */
    public synchronized File executable() {
        if (executable != null && executable.canExecute()) {
            return executable;
        }
        majorVersion = -1;
        try {
            executable = switch (choice) {
                case "auto" -> {
                    File found = onPath();
                    yield found != null ? found : bundledBinary();
                }
                case "bundled" -> bundledBinary();
                case "system" -> {
                    File found = onPath();
                    if (found == null) {
                        throw new FileNotFoundException("no redis-server on the PATH (" + System.getenv("PATH")
                                + "); install it (apt-get install redis-server) or choose the bundled binary");
                    }
                    yield found;
                }
                default -> path.toFile();
            };
        } catch (IOException e) {
            throw EmbeddedServiceException.wrap(EmbeddedRedisServer.SERVICE, "finding redis-server (" + choice + ")", e);
        }
        return executable;
    }

    /**
     * The major version {@code --version} reports, or {@code 0} if it cannot be told; options that older servers
     * reject are only written for the versions that know them.
     */
    public synchronized int majorVersion() {
        if (majorVersion < 0) {
            majorVersion = readMajorVersion(executable());
        }
        return majorVersion;
    }

    /** Whether {@code redis-server} is on the PATH, for tests that must run with it. */
    public static boolean onSystemPath() {
        return onPath() != null;
    }

    @Override
    public String toString() {
        return choice;
    }

    private static File onPath() {
        try {
            return ExecutableProvider.newExecutableInPath(ON_PATH).get();
        } catch (IOException notOnPath) {
            return null;
        }
    }

    private static int readMajorVersion(File file) {
        try {
            Process process = new ProcessBuilder(file.getAbsolutePath(), "--version").redirectErrorStream(true).start();
            byte[] output;
            try (InputStream in = process.getInputStream()) {
                output = in.readNBytes(4_096);
            }
            if (!process.waitFor(VERSION_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
            Matcher matcher = VERSION.matcher(new String(output, StandardCharsets.UTF_8));
            if (matcher.find()) {
                return Integer.parseInt(matcher.group(1));
            }
            log.debug("{} --version did not say which version it is", file);
        } catch (IOException e) {
            log.debug("{} --version failed: {}", file, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /**
     * Extracts the binary bundled for this platform into a directory named after its digest and reuses it from
     * then on, also in later JVMs: the library's own provider copies the ~10 MB file into a new temporary
     * directory per start, which a killed JVM never removes.
     */
    private static synchronized File bundledBinary() throws IOException {
        if (bundled != null && bundled.canExecute()) {
            return bundled;
        }
        String resource = ExecutableProvider.newProvidedVersionsMap().get(OsArchitecture.detectOSandArchitecture());
        if (resource == null) {
            throw new FileNotFoundException("no bundled redis-server for " + OsArchitecture.detectOSandArchitecture());
        }
        byte[] content;
        try (InputStream in = ExecutableProvider.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new FileNotFoundException("bundled redis-server " + resource + " is missing");
            }
            content = in.readAllBytes();
        }
        String digest;
        try {
            digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content)).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
        String fileName = resource.substring(resource.lastIndexOf('/') + 1);
        // Per user: another user's directory of the same name could not be written to.
        Path dir = Path.of(System.getProperty("java.io.tmpdir"),
                "fleetmq-redis-" + System.getProperty("user.name"), digest);
        Path target = dir.resolve(fileName);
        if (!Files.isExecutable(target) || Files.size(target) != content.length) {
            Files.createDirectories(dir);
            // Written aside and moved into place, so a concurrent JVM never runs a half-written file.
            Path partial = Files.createTempFile(dir, fileName, ".partial");
            try {
                Files.write(partial, content);
                if (!partial.toFile().setExecutable(true)) {
                    throw new IOException("cannot make " + partial + " executable");
                }
                Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } finally {
                Files.deleteIfExists(partial);
            }
        }
        bundled = target.toFile();
        return bundled;
    }
}
