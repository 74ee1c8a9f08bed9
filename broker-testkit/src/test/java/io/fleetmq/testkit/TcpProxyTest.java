package io.fleetmq.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TcpProxyTest {

    private ServerSocket echo;
    private TcpProxy proxy;

    @BeforeEach
    void startEcho() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> {
            while (!echo.isClosed()) {
                try {
                    Socket s = echo.accept();
                    Thread c = new Thread(() -> {
                        try (s) {
                            s.getInputStream().transferTo(s.getOutputStream());
                        } catch (IOException ignored) {
                            // peer reset
                        }
                    });
                    c.setDaemon(true);
                    c.start();
                } catch (IOException e) {
                    return;
                }
            }
        });
        t.setDaemon(true);
        t.start();
        proxy = TcpProxy.start("127.0.0.1", echo.getLocalPort());
    }

    @AfterEach
    void stop() throws IOException {
        proxy.close();
        echo.close();
    }

    private Socket connect() throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
        s.setSoTimeout(300);
        return s;
    }

    private static byte[] read(InputStream in, int n) throws IOException {
        byte[] b = in.readNBytes(n);
        assertEquals(n, b.length, "bytes read");
        return b;
    }

    @Test
    void forwardsBothWays() throws IOException {
        try (Socket s = connect()) {
            s.getOutputStream().write(new byte[] {1, 2, 3});
            assertArrayEquals(new byte[] {1, 2, 3}, read(s.getInputStream(), 3));
        }
    }

    @Test
    void aPausedDirectionHoldsBytesUntilResumed() throws IOException {
        try (Socket s = connect()) {
            proxy.pause(TcpProxy.Direction.DOWNSTREAM);
            s.getOutputStream().write(new byte[] {7});
            assertThrows(SocketTimeoutException.class, () -> s.getInputStream().read());
            proxy.resume(TcpProxy.Direction.DOWNSTREAM);
            s.setSoTimeout(5_000);
            assertEquals(7, s.getInputStream().read());
        }
    }

    @Test
    void itTellsHowManyBytesItHoldsInEachDirection() throws IOException {
        try (Socket s = connect()) {
            proxy.pause(TcpProxy.Direction.DOWNSTREAM);
            s.getOutputStream().write(new byte[] {1, 2, 3});
            // The echo answered: its three bytes wait in the proxy, none went the other way.
            Await.until(java.time.Duration.ofSeconds(5), "the echo held and the request forwarded",
                    () -> proxy.held(TcpProxy.Direction.DOWNSTREAM) == 3 && proxy.held(TcpProxy.Direction.UPSTREAM) == 0);
            proxy.resume(TcpProxy.Direction.DOWNSTREAM);
            s.setSoTimeout(5_000);
            assertArrayEquals(new byte[] {1, 2, 3}, read(s.getInputStream(), 3));
            Await.until(java.time.Duration.ofSeconds(5), "nothing held", () -> proxy.held(TcpProxy.Direction.DOWNSTREAM) == 0);
        }
    }

    @Test
    void aPartitionIsSilenceAndHealingResetsWhatLivedThroughIt() throws IOException {
        Socket s = connect();
        proxy.partition();
        s.getOutputStream().write(new byte[] {9});
        assertThrows(SocketTimeoutException.class, () -> s.getInputStream().read());
        proxy.heal();
        s.setSoTimeout(5_000);
        assertThrows(IOException.class, () -> {
            if (s.getInputStream().read() < 0) {
                throw new IOException("closed");
            }
        });
        s.close();
        try (Socket fresh = connect()) {
            fresh.setSoTimeout(5_000);
            fresh.getOutputStream().write(new byte[] {4});
            assertEquals(4, fresh.getInputStream().read());
        }
    }

    @Test
    void aCutResetsConnectionsAndRefusesNewOnesUntilRestored() throws IOException {
        Socket s = connect();
        s.setSoTimeout(5_000);
        proxy.cut();
        assertThrows(IOException.class, () -> {
            if (s.getInputStream().read() < 0) {
                throw new IOException("closed");
            }
        });
        s.close();
        try (Socket refused = connect()) {
            refused.setSoTimeout(5_000);
            assertThrows(IOException.class, () -> {
                refused.getOutputStream().write(1);
                if (refused.getInputStream().read() < 0) {
                    throw new IOException("closed");
                }
            });
        }
        proxy.restore();
        Await.until(Duration.ofSeconds(5), "the proxy to forward again", () -> {
            try (Socket again = connect()) {
                again.setSoTimeout(2_000);
                again.getOutputStream().write(5);
                return again.getInputStream().read() == 5;
            } catch (IOException e) {
                return false;
            }
        });
    }
}
