package io.fleetmq.app.support;

import java.util.List;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.opentest4j.TestAbortedException;

/**
 * Adds to a failing test's message what the broker warned of while the test ran (its
 * {@link RecentWarnings}), so the one line a build log shows for the failure says what the broker
 * saw: a CONNECT refused with 0x88 names the stage it was stuck at. Registered for every test of the
 * module (META-INF/services, junit-platform.properties); the original exception is the cause.
 */
public final class FailureContext implements BeforeAllCallback, BeforeEachCallback, TestExecutionExceptionHandler,
        LifecycleMethodExecutionExceptionHandler {

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(FailureContext.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getStore(NS).put("mark", RecentWarnings.mark());
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NS).put("mark", RecentWarnings.mark());
    }

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        throw withContext(context, failure);
    }

    @Override
    public void handleBeforeAllMethodExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        throw withContext(context, failure);
    }

    @Override
    public void handleBeforeEachMethodExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        throw withContext(context, failure);
    }

    @Override
    public void handleAfterEachMethodExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        throw withContext(context, failure);
    }

    @Override
    public void handleAfterAllMethodExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        throw withContext(context, failure);
    }

    static Throwable withContext(ExtensionContext context, Throwable failure) {
        if (failure instanceof TestAbortedException) {
            return failure;
        }
        Long mark = context.getStore(NS).get("mark", Long.class);
        List<String> lines = RecentWarnings.since(mark == null ? 0 : mark);
        if (lines.isEmpty()) {
            return failure;
        }
        // The build log shows the message's first line: the warnings go on it, newest last.
        String joined = String.join(" | ", lines.subList(Math.max(0, lines.size() - 8), lines.size()));
        return new AssertionError(failure.getClass().getSimpleName() + where(context, failure) + ": "
                + String.valueOf(failure.getMessage()).replace('\n', ' ') + " [broker warnings meanwhile: "
                + joined + "]", failure);
    }

    /** Where in the test class the failure was thrown, as " at Name.java:70", or "". */
    private static String where(ExtensionContext context, Throwable failure) {
        String testClass = context.getTestClass().map(Class::getName).orElse(null);
        for (StackTraceElement frame : failure.getStackTrace()) {
            if (frame.getClassName().equals(testClass)) {
                return " at " + frame.getFileName() + ":" + frame.getLineNumber();
            }
        }
        return "";
    }
}
