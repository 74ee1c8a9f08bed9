package io.fleetmq.embedded;

import org.apache.kafka.common.utils.internals.Exit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka ends the whole JVM ({@code Exit.exit}/{@code Exit.halt}) on faults it considers fatal, and that includes
 * failures while starting (a controller port taken between our check and its bind, an unusable log dir). In a
 * process that embeds Kafka next to other work, such a failure must surface as an exception instead. While any
 * embedded Kafka is starting or stopping, exit requests therefore throw {@link ExitRequested}; at any other time
 * they keep Kafka's behaviour (a fatal fault of a running broker still ends the process) after logging why.
 */
final class KafkaExitGuard {

    private static final Logger log = LoggerFactory.getLogger(KafkaExitGuard.class);

    private static int transitions;
    private static boolean installed;

    private KafkaExitGuard() {
    }

    static synchronized void enter() {
        if (!installed) {
            Exit.setExitProcedure(KafkaExitGuard::exit);
            Exit.setHaltProcedure(KafkaExitGuard::halt);
            installed = true;
        }
        transitions++;
    }

    static synchronized void leave() {
        transitions--;
    }

    private static synchronized boolean inTransition() {
        return transitions > 0;
    }

    private static void exit(int code, String message) {
        if (inTransition()) {
            throw new ExitRequested("exit", code, message);
        }
        log.error("embedded Kafka requested JVM exit with code {}: {}", code, message);
        System.exit(code);
    }

    private static void halt(int code, String message) {
        if (inTransition()) {
            throw new ExitRequested("halt", code, message);
        }
        log.error("embedded Kafka requested JVM halt with code {}: {}", code, message);
        Runtime.getRuntime().halt(code);
    }

    /** Thrown in place of ending the JVM; Kafka has already logged the fault that led to it. */
    static final class ExitRequested extends RuntimeException {

        private static final long serialVersionUID = 1L;

        ExitRequested(String kind, int code, String message) {
            super("Kafka hit a fatal error and asked to " + kind + " the JVM (code " + code + ")"
                    + (message == null ? "; see its log" : ": " + message));
        }
    }
}
