/**
 * Client actors and the MQTT session state machine: CONNECT sequencing, take-over, QoS 0/1/2
 * flows, in-flight windows, topic aliases, wills, session and message expiry, subscriptions and
 * delivery. Depends on broker-core, broker-kafka and broker-persistence; knows nothing of Netty.
 *
 * <p>One {@link io.fleetmq.session.SessionActor} per client ID dispatches, on its mailbox's one
 * thread, between the concerns that own the session's state: {@code ConnectWaits} (CONNECTs
 * waiting for authentication and the connect sequence), {@code Connection}, {@code InboundFlow}
 * and {@code InboundQos2} (what the client publishes), {@code OutboundFlow} (what it is sent,
 * within its window), {@code Subscriptions}, {@code SessionLifetime} (will and expiry),
 * {@code DeviceQueueReader} and {@code AppBacklogReader} (the stores of persistent sessions, behind
 * {@link io.fleetmq.session.DeviceQueueStore} and {@link io.fleetmq.session.AppBacklogStore}),
 * {@code DeliveryInbox} (deliveries from the router) and {@code PacketGate} (packets that wait).
 * {@link io.fleetmq.session.SessionGuard} is where authentication and authorization plug in.
 */
package io.fleetmq.session;
