package io.fleetmq.bench.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A plain TCP relay on a free loopback port to a broker port: closing it drops every connection
 * through it at once while the broker behind stays up with its sessions, as a load balancer or a
 * network partition in front of a node would. Two threads per connection; for a few dozen only.
 */
public final class TcpProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    private TcpProxy(ServerSocket server, int target) {
        this.server = server;
        this.target = target;
    }

    public static TcpProxy to(int targetPort) throws IOException {
        TcpProxy proxy = new TcpProxy(new ServerSocket(0, 200, InetAddress.getLoopbackAddress()), targetPort);
        Thread acceptor = new Thread(proxy::accept, "proxy-accept-" + proxy.port());
        acceptor.setDaemon(true);
        acceptor.start();
        return proxy;
    }

    public int port() {
        return server.getLocalPort();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException closedOrRefused) {
                // closed: the loop ends; refused upstream: the client's socket is dropped with the proxy
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[8192];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException closed) {
                // either side went away
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Stops accepting and closes every relayed connection, both sides. */
    @Override
    public void close() {
        closeQuietly(server);
        sockets.forEach(TcpProxy::closeQuietly);
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // already closed
        }
    }
}
