package io.fleetmq.bench.fleet;

import io.fleetmq.bench.report.FailureKind;

/**
 * Why one handshake ended without the device being served.
 *
 * @param kind   the category the report counts
 * @param code   the CONNACK or SUBACK code for refusals; -1 otherwise
 * @param reason what the table lists it under: the same text for the same cause, so that thousands of
 *               failures fold into a few lines (no client IDs, no port numbers)
 * @param detail extra words for the samples, such as the exception; empty for none
 */
record Failure(FailureKind kind, int code, String reason, String detail) {

    static Failure of(FailureKind kind, String reason) {
        return new Failure(kind, -1, reason, "");
    }
}
