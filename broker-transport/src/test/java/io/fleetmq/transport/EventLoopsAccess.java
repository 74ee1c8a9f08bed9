package io.fleetmq.transport;

/** Event loops of a chosen transport, for tests outside this package. */
public final class EventLoopsAccess {

    private EventLoopsAccess() {
    }

    /** {@code epoll} false: NIO even where epoll is available. */
    public static EventLoops create(int ioThreads, boolean epoll) {
        return new EventLoops(ioThreads, epoll);
    }
}
