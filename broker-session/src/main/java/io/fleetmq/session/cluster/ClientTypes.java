package io.fleetmq.session.cluster;

import java.util.regex.Pattern;

/**
 * DEVICE or APPLICATION (DESIGN.md, promise 4). Until credentials say which, a client is an
 * APPLICATION if its client ID matches the configured pattern, else a DEVICE.
 */
public final class ClientTypes {

    public static final String DEVICE = "DEVICE";
    public static final String APPLICATION = "APPLICATION";

    private final Pattern application;

    /** @param applicationPattern a regular expression matched against the whole client ID; null or empty for none */
    public ClientTypes(String applicationPattern) {
        this.application = applicationPattern == null || applicationPattern.isEmpty() ? null
                : Pattern.compile(applicationPattern);
    }

    public String of(String clientId) {
        return application != null && application.matcher(clientId).matches() ? APPLICATION : DEVICE;
    }
}
