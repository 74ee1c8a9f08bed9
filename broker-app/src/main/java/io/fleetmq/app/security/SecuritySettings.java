package io.fleetmq.app.security;

import java.time.Duration;
import java.util.List;

/**
 * How the node authenticates and authorizes MQTT clients (section {@code auth} of fleetmq.yml).
 *
 * @param providers          the providers asked at CONNECT, in order ({@code auth.providers})
 * @param allowAnonymous     whether clients that no credential matches may connect: {@code auto} (only
 *                           while every MQTT listener is bound to a loopback address), {@code true}, {@code false}
 * @param anonymousPublish   the publish rules of anonymous clients
 * @param anonymousSubscribe the subscribe rules of anonymous clients
 * @param denyDisconnect     a PUBLISH that is not allowed ends the connection (deny action {@code disconnect})
 *                           instead of being answered and dropped ({@code ignore})
 * @param threads            threads that check passwords and read credentials
 * @param maxPending         CONNECTs that may wait for those threads; beyond, 0x89 Server busy
 * @param maxWait            longest a CONNECT may expect to wait for those threads (0: no bound but
 *                           {@code maxPending}); beyond, 0x89 Server busy
 * @param cacheTtl           how long a credential read from PostgreSQL and a successful password check are reused
 * @param refusedRetention   how long the log of refused connections keeps an entry
 */
public record SecuritySettings(List<String> providers, Anonymous allowAnonymous, List<String> anonymousPublish,
        List<String> anonymousSubscribe, boolean denyDisconnect, int threads, int maxPending, Duration maxWait,
        Duration cacheTtl, Duration refusedRetention) {

    public enum Anonymous { AUTO, TRUE, FALSE }

    /** Providers that can be named in {@code auth.providers}. */
    public static final List<String> PROVIDERS = List.of("basic", "x509", "jwt", "http", "scram");

    public SecuritySettings {
        providers = List.copyOf(providers);
        anonymousPublish = List.copyOf(anonymousPublish);
        anonymousSubscribe = List.copyOf(anonymousSubscribe);
    }

    /**
     * Whether anonymous clients may connect to MQTT listeners bound to {@code bindAddress}: with
     * {@code auto}, only while that address is a loopback one (a name that does not resolve counts as
     * reachable from the network).
     */
    public boolean anonymousAllowed(String bindAddress) {
        return switch (allowAnonymous) {
            case TRUE -> true;
            case FALSE -> false;
            case AUTO -> loopbackOnly(bindAddress);
        };
    }

    /** Whether every address {@code bindAddress} stands for is a loopback address. */
    public static boolean loopbackOnly(String bindAddress) {
        try {
            for (java.net.InetAddress a : java.net.InetAddress.getAllByName(bindAddress)) {
                if (!a.isLoopbackAddress()) {
                    return false;
                }
            }
            return true;
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    public static SecuritySettings defaults() {
        return new SecuritySettings(List.of("basic"), Anonymous.AUTO, List.of("#"), List.of("#"), false,
                Math.max(2, Runtime.getRuntime().availableProcessors()), 20_000, Duration.ofSeconds(5),
                Duration.ofSeconds(60),
                Duration.ofDays(7));
    }
}
