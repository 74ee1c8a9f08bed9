package io.fleetmq.embedded;

/**
 * An embedded service could not be started or stopped. The message is a single line of the form
 * {@code "embedded <Service>: <cause>"} so that it can be shown to an operator as is.
 */
public final class EmbeddedServiceException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public EmbeddedServiceException(String message) {
        super(message);
    }

    public EmbeddedServiceException(String message, Throwable cause) {
        super(message, cause);
    }

    static EmbeddedServiceException of(String service, String problem) {
        return new EmbeddedServiceException("embedded " + service + ": " + oneLine(problem));
    }

    static EmbeddedServiceException of(String service, String problem, Throwable cause) {
        return new EmbeddedServiceException("embedded " + service + ": " + oneLine(problem), cause);
    }

    /**
     * Wraps a failure, keeping an {@link EmbeddedServiceException} raised deeper down (it already names the
     * service and the cause) and otherwise describing the most specific cause in the chain.
     */
    static EmbeddedServiceException wrap(String service, String action, Throwable failure) {
        if (failure instanceof EmbeddedServiceException e) {
            return e;
        }
        return of(service, action + " failed: " + describe(failure), failure);
    }

    /** The deepest cause with a message usually says what actually went wrong (file, port, permission). */
    static String describe(Throwable failure) {
        Throwable best = failure;
        for (Throwable t = failure; t != null && t.getCause() != t; t = t.getCause()) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                best = t;
            }
        }
        String message = best.getMessage();
        return message == null || message.isBlank()
                ? best.getClass().getSimpleName()
                : best.getClass().getSimpleName() + ": " + message;
    }

    private static String oneLine(String text) {
        return text.replaceAll("\\s*[\\r\\n]+\\s*", " ").strip();
    }
}
