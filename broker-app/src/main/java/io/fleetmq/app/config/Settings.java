package io.fleetmq.app.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The broker's settings: the shipped {@code fleetmq.yml} declares every setting, its environment
 * variable and its default as {@code key: "${ENV_NAME:default}"}; an operator's file may override
 * any of them; the environment overrides both.
 *
 * <p>The shipped file is the single registry of settings, so a setting cannot exist in code without
 * a documented default and environment variable, and an operator's typo is caught as an unknown key.
 */
public final class Settings {

    public static final String SHIPPED_RESOURCE = "/fleetmq.yml";

    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([A-Z][A-Z0-9_]*):(.*)}", Pattern.DOTALL);
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    /** A declared setting: dotted key, environment variable, shipped default. */
    public record Declared(String key, String env, String defaultValue) {
    }

    private final Map<String, Declared> declared;
    private final Map<String, String> values;

    private Settings(Map<String, Declared> declared, Map<String, String> values) {
        this.declared = declared;
        this.values = values;
    }

    /**
     * Loads the shipped defaults, then {@code file} if given, then the environment.
     *
     * @throws ConfigException on an unreadable file, an unknown key or a non-scalar value
     */
    public static Settings load(Path file, Function<String, String> environment) {
        return load(file, environment, Map.of());
    }

    /**
     * As {@link #load(Path, Function)}, with {@code defaults} (dotted keys to values) in place of
     * the shipped defaults of those keys: the file and the environment still win over them.
     *
     * @throws IllegalArgumentException naming a key of {@code defaults} that is not a setting
     */
    public static Settings load(Path file, Function<String, String> environment, Map<String, String> defaults) {
        Map<String, Declared> declared = shipped();
        Map<String, String> values = new LinkedHashMap<>();
        declared.forEach((key, d) -> values.put(key, d.defaultValue()));
        defaults.forEach((key, value) -> {
            if (!declared.containsKey(key)) {
                throw new IllegalArgumentException("no setting " + key);
            }
            values.put(key, value);
        });
        if (file != null) {
            for (Map.Entry<String, String> e : readFile(file).entrySet()) {
                Declared d = declared.get(e.getKey());
                if (d == null) {
                    throw new ConfigException("unknown setting '" + e.getKey() + "' in " + file);
                }
                values.put(e.getKey(), resolve(e.getValue(), environment));
            }
        }
        for (Declared d : declared.values()) {
            String fromEnv = environment.apply(d.env());
            if (fromEnv != null) {
                values.put(d.key(), fromEnv);
            }
        }
        return new Settings(declared, values);
    }

    /** The settings declared by the shipped file, in file order. */
    public static Map<String, Declared> shipped() {
        try (InputStream in = Settings.class.getResourceAsStream(SHIPPED_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(SHIPPED_RESOURCE + " is missing from the classpath");
            }
            Map<String, Declared> declared = new LinkedHashMap<>();
            for (Map.Entry<String, String> e : flatten(YAML.readTree(in), SHIPPED_RESOURCE).entrySet()) {
                Matcher m = PLACEHOLDER.matcher(e.getValue());
                if (!m.matches()) {
                    throw new IllegalStateException("shipped setting " + e.getKey() + " lacks ${ENV:default}");
                }
                declared.put(e.getKey(), new Declared(e.getKey(), m.group(1), m.group(2)));
            }
            return Collections.unmodifiableMap(declared);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Map<String, String> readFile(Path file) {
        if (!Files.isRegularFile(file)) {
            throw new ConfigException("configuration file " + file + " does not exist");
        }
        try {
            JsonNode root = YAML.readTree(file.toFile());
            if (root == null || root.isMissingNode() || root.isNull()) {
                return Map.of();
            }
            return flatten(root, file.toString());
        } catch (IOException e) {
            throw new ConfigException("cannot read configuration file " + file + ": "
                    + e.getMessage().lines().findFirst().orElse(""), e);
        }
    }

    private static Map<String, String> flatten(JsonNode root, String source) {
        Map<String, String> out = new LinkedHashMap<>();
        flatten("", root, out, source);
        return out;
    }

    private static void flatten(String prefix, JsonNode node, Map<String, String> out, String source) {
        if (node.isObject()) {
            for (Map.Entry<String, JsonNode> field : node.properties()) {
                String key = prefix.isEmpty() ? field.getKey() : prefix + "." + field.getKey();
                flatten(key, field.getValue(), out, source);
            }
        } else if (node.isValueNode()) {
            out.put(prefix, node.isNull() ? "" : node.asText());
        } else {
            throw new ConfigException("setting '" + prefix + "' in " + source + " must be a single value, not a list");
        }
    }

    /** An operator's file may use the same placeholder form as the shipped one. */
    private static String resolve(String value, Function<String, String> environment) {
        Matcher m = PLACEHOLDER.matcher(value);
        if (!m.matches()) {
            return value;
        }
        String fromEnv = environment.apply(m.group(1));
        return fromEnv != null ? fromEnv : m.group(2);
    }

    /**
     * These settings with {@code overrides} (dotted keys to values) in place of theirs: the runtime
     * settings stored through the admin API over the file and the environment.
     *
     * @throws IllegalArgumentException naming a key that is not a setting
     */
    public Settings with(Map<String, String> overrides) {
        Map<String, String> merged = new LinkedHashMap<>(values);
        for (Map.Entry<String, String> e : overrides.entrySet()) {
            declaration(e.getKey());
            merged.put(e.getKey(), e.getValue());
        }
        return new Settings(declared, merged);
    }

    /** The dotted key {@code name} stands for: itself when it is a key, or the key of that environment variable. */
    public java.util.Optional<String> keyOf(String name) {
        if (declared.containsKey(name)) {
            return java.util.Optional.of(name);
        }
        for (Declared d : declared.values()) {
            if (d.env().equals(name)) {
                return java.util.Optional.of(d.key());
            }
        }
        return java.util.Optional.empty();
    }

    /** The environment variable that sets {@code key}. */
    public String env(String key) {
        return declaration(key).env();
    }

    public Set<String> keys() {
        return declared.keySet();
    }

    /** {@code key (ENV)}, the way every error message names a setting. */
    public String describe(String key) {
        return key + " (" + declaration(key).env() + ")";
    }

    public String string(String key) {
        declaration(key);
        return values.get(key).trim();
    }

    public int integer(String key, int min, int max) {
        return (int) longValue(key, min, max);
    }

    public long longValue(String key, long min, long max) {
        String raw = string(key);
        long value;
        try {
            value = Long.parseLong(raw);
        } catch (NumberFormatException e) {
            throw invalid(key, raw, "is not a whole number");
        }
        if (value < min || value > max) {
            throw invalid(key, raw, "is outside " + min + ".." + max);
        }
        return value;
    }

    public int port(String key) {
        return integer(key, 0, 65_535);
    }

    public boolean bool(String key) {
        String raw = string(key).toLowerCase(java.util.Locale.ROOT);
        return switch (raw) {
            case "true", "yes", "on", "1" -> true;
            case "false", "no", "off", "0" -> false;
            default -> throw invalid(key, raw, "is not true or false");
        };
    }

    public Duration duration(String key) {
        String raw = string(key);
        if (raw.strip().equals("0")) {
            return Duration.ZERO; // zero needs no unit
        }
        Matcher m = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)").matcher(raw);
        if (!m.matches()) {
            throw invalid(key, raw, "is not a duration such as 500ms, 10s, 5m, 2h or 7d");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
        };
    }

    public ConfigException invalid(String key, String raw, String why) {
        return new ConfigException("setting " + describe(key) + ": '" + raw + "' " + why);
    }

    private Declared declaration(String key) {
        Declared d = declared.get(key);
        if (d == null) {
            throw new IllegalArgumentException("no such setting: " + key);
        }
        return d;
    }
}
