package io.fleetmq.app.support;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The broker's latest warnings and errors logged in this JVM (named in logback-test.xml), kept so
 * that a failing test can say what the broker complained of meanwhile: see {@link FailureContext}.
 */
public final class RecentWarnings extends AppenderBase<ILoggingEvent> {

    private static final int KEPT = 40;
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneOffset.UTC);
    private static final ArrayDeque<String> LINES = new ArrayDeque<>();
    private static long written;

    @Override
    protected void append(ILoggingEvent event) {
        if (!event.getLevel().isGreaterOrEqual(Level.WARN) || !event.getLoggerName().startsWith("io.fleetmq")) {
            return;
        }
        String logger = event.getLoggerName().substring(event.getLoggerName().lastIndexOf('.') + 1);
        String line = TIME.format(Instant.ofEpochMilli(event.getTimeStamp())) + " " + event.getLevel() + " "
                + logger + ": " + event.getFormattedMessage().replace('\n', ' ');
        synchronized (LINES) {
            if (LINES.size() == KEPT) {
                LINES.removeFirst();
            }
            LINES.addLast(line.length() > 400 ? line.substring(0, 400) + "..." : line);
            written++;
        }
    }

    /** How many lines have been written so far: a mark to ask {@link #since} about later. */
    static long mark() {
        synchronized (LINES) {
            return written;
        }
    }

    /** The lines written after {@code mark}, oldest first (at most the last {@value #KEPT}). */
    static List<String> since(long mark) {
        synchronized (LINES) {
            int newer = (int) Math.min(LINES.size(), written - mark);
            List<String> all = new ArrayList<>(LINES);
            return all.subList(all.size() - newer, all.size());
        }
    }
}
