package io.fleetmq.app;

import io.fleetmq.app.config.ConfigException;
import io.fleetmq.core.log.Secrets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * Entry point of {@code java -jar fleetmq.jar}. Start-up errors end the process with one line on
 * standard error (exit 2: configuration, exit 1: a dependency or port); SIGTERM stops gracefully.
 * That line never shows a password: connection strings in it are masked.
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("import-mosquitto")) {
            // A client of a running node, not a node: no logging set-up, its own exit codes.
            System.exit(new io.fleetmq.app.mosquitto.MosquittoImport(System::getenv, System.out, System.err)
                    .run(java.util.Arrays.copyOfRange(args, 1, args.length)));
            return;
        }
        // PostgreSQL's driver and a few others log through java.util.logging; send it to slf4j too.
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
        Logger log = LoggerFactory.getLogger(Main.class);

        AutoCloseable running;
        try {
            running = new Launcher(System::getenv, System.out).run(args);
        } catch (ConfigException e) {
            System.err.println("fleetmq: configuration error: " + Secrets.mask(e.getMessage()));
            log.debug("Configuration error", e);
            System.exit(2);
            return;
        } catch (StartupException e) {
            System.err.println("fleetmq: cannot start: " + Secrets.mask(e.getMessage()));
            log.debug("Start-up failure", e);
            System.exit(1);
            return;
        } catch (RuntimeException e) {
            System.err.println("fleetmq: cannot start: " + Secrets.mask(e.toString()));
            log.error("Unexpected start-up failure", e);
            System.exit(1);
            return;
        }
        if (running == null) {
            return;
        }
        java.time.Duration timeout = running instanceof BrokerNode node ? node.config().shutdownTimeout()
                : java.time.Duration.ofSeconds(30);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            log.info("Stopping (signal received)");
            if (!BoundedStop.stop(running, timeout)) {
                Runtime.getRuntime().halt(1); // exit() from a shutdown hook would wait for this hook
            }
        }, "fleetmq-shutdown"));
    }
}
