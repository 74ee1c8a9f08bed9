package io.fleetmq.bench.fleet;

/**
 * What a run hears from its devices. Called on the device's current event loop; a device has at most one
 * connection at a time, so calls for one device never overlap.
 */
interface FleetEvents {

    /** CONNACK 0 and a granting SUBACK, or CONNACK 0 with the session present: the device is served. */
    void served(FleetClient client, boolean sessionPresent, long nanos);

    /** The handshake ended unserved (already counted); its connection is closed. */
    void failed(FleetClient client, Failure failure, long nanos);

    /** A served connection was closed by the broker or the network (already counted); it is closed. */
    void lost(FleetClient client, String reason, long nanos);
}
