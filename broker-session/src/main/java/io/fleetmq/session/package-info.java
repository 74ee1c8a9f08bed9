/**
 * Client actors and the MQTT session state machine: CONNECT sequencing, take-over, QoS 0/1/2
 * flows, in-flight windows, topic aliases, wills, session and message expiry, subscriptions and
 * delivery. Depends on broker-core, broker-kafka and broker-persistence; knows nothing of Netty.
 */
package io.fleetmq.session;
