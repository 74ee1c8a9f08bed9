package io.fleetmq.bench.client;

import io.fleetmq.bench.report.ErrorKind;

/** Where a connection reports what went wrong; every call is one counted error. */
@FunctionalInterface
public interface ErrorSink {

    void error(ErrorKind kind, String message);
}
