package io.fleetmq.app.mqtt;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** A raw WebSocket upgrade of {@code /mqtt}, for tests of what the listener accepts. */
final class WebSocketUpgrade {

    static final String SWITCHING = "HTTP/1.1 101 Switching Protocols";

    private WebSocketUpgrade() {
    }

    /** The status line of the answer to an upgrade with this {@code Origin} and sub-protocol list (null: none). */
    static String statusLine(int port, String origin, String protocols) throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(5_000);
            StringBuilder request = new StringBuilder("GET /mqtt HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n");
            if (origin != null) {
                request.append("Origin: ").append(origin).append("\r\n");
            }
            if (protocols != null) {
                request.append("Sec-WebSocket-Protocol: ").append(protocols).append("\r\n");
            }
            s.getOutputStream().write(request.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII));
            return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII)).readLine();
        }
    }
}
