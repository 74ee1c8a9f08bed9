package io.fleetmq.app;

/** What the process runs, chosen by the first command-line argument. */
public enum Mode {
    /** A single node on embedded Kafka, Redis and PostgreSQL (each replaceable by an external one). */
    STANDALONE,
    /** A cluster node: Kafka, Redis and PostgreSQL must all be external. */
    NODE,
    /** Only the embedded Kafka, Redis and PostgreSQL, for a local cluster or tests to share. */
    SERVICES
}
