/**
 * {@code fleetmq-bench}: an MQTT load generator that drives any broker over real TCP sockets, so that
 * FleetMQ and Eclipse Mosquitto are measured by the same client on the same machine.
 *
 * <p><b>Why a Netty client and not a client library.</b> The clients are raw Netty channels with
 * Netty's MQTT codec (the codec our broker uses too) rather than the HiveMQ MQTT client. A load
 * generator must own its flow control and its clock: here each publisher's in-flight window and
 * pacing are a few lines of plain code on its event loop, the send timestamp is taken right before
 * the write, and a few threads carry hundreds of connections with no per-message futures or
 * reactive streams in between. A library would queue, retry and reconnect on our behalf, which is
 * right for applications and wrong for a tool whose job is to count what the broker did.
 *
 * <p>Packages: {@code cli} (options and usage), {@code scenario} (fan-in, fan-out, p2p topologies),
 * {@code client} (one MQTT connection, payload stamp, event loops), {@code run} (publishers,
 * subscribers, counters, the run's timeline and the soak time series), {@code connect} (the
 * handshake loop), {@code fleet} (idle and storm: many long-lived devices, their ramp and
 * reconnects), {@code probe} (the broker's memory from Prometheus text and {@code /proc}, the
 * generator's own), {@code report} (tables and JSON lines).
 */
package io.fleetmq.bench;
