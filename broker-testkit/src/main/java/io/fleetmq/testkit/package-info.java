/**
 * Test support shared by all modules: {@link io.fleetmq.testkit.TestServices} (Kafka, Redis and PostgreSQL, embedded
 * or from the environment), {@link io.fleetmq.testkit.FreePorts} and {@link io.fleetmq.testkit.Await}.
 *
 * <p>Depend on this module in test scope. It brings no slf4j binding; a module's tests should add logback-classic
 * and a {@code logback-test.xml} that keeps the services' loggers at WARN (see {@code io.fleetmq.embedded}).
 */
package io.fleetmq.testkit;
