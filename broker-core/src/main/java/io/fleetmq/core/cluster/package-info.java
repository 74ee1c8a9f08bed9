/**
 * What nodes of one broker tell each other through Kafka: node liveness, the shared session state,
 * the connect sequence's events and answers, and hand-offs of messages to the node a subscriber is
 * connected to; and the binary form of all of it ({@link io.fleetmq.core.cluster.ClusterCodec}).
 */
package io.fleetmq.core.cluster;
