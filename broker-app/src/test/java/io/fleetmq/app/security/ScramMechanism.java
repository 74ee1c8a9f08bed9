package io.fleetmq.app.security;

import com.hivemq.client.mqtt.datatypes.MqttUtf8String;
import com.hivemq.client.mqtt.mqtt5.Mqtt5ClientConfig;
import com.hivemq.client.mqtt.mqtt5.auth.Mqtt5EnhancedAuthMechanism;
import com.hivemq.client.mqtt.mqtt5.message.auth.Mqtt5Auth;
import com.hivemq.client.mqtt.mqtt5.message.auth.Mqtt5AuthBuilder;
import com.hivemq.client.mqtt.mqtt5.message.auth.Mqtt5EnhancedAuth;
import com.hivemq.client.mqtt.mqtt5.message.auth.Mqtt5EnhancedAuthBuilder;
import com.hivemq.client.mqtt.mqtt5.message.connect.Mqtt5Connect;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAck;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5Disconnect;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * SCRAM as the HiveMQ MQTT client's enhanced authentication, the way an application would plug it
 * in: client-first in CONNECT (or AUTH 0x19), client-final on the broker's AUTH 0x18, and the
 * server's signature checked on CONNACK / AUTH 0x00 (the client refuses a broker that cannot prove
 * it holds the credential).
 */
final class ScramMechanism implements Mqtt5EnhancedAuthMechanism {

    private final String hash;
    private final String username;
    private final String password;
    private ScramClient exchange;
    final AtomicInteger serverVerified = new AtomicInteger();

    ScramMechanism(String hash, String username, String password) {
        this.hash = hash;
        this.username = username;
        this.password = password;
    }

    @Override
    public MqttUtf8String getMethod() {
        return MqttUtf8String.of("SCRAM-" + hash);
    }

    @Override
    public int getTimeout() {
        return 30;
    }

    @Override
    public CompletableFuture<Void> onAuth(Mqtt5ClientConfig config, Mqtt5Connect connect, Mqtt5EnhancedAuthBuilder auth) {
        exchange = new ScramClient(hash, username, password);
        auth.data(exchange.clientFirst());
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Void> onReAuth(Mqtt5ClientConfig config, Mqtt5AuthBuilder auth) {
        exchange = new ScramClient(hash, username, password);
        auth.data(exchange.clientFirst());
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Boolean> onContinue(Mqtt5ClientConfig config, Mqtt5Auth auth, Mqtt5AuthBuilder answer) {
        try {
            answer.data(exchange.clientFinal(bytes(auth.getData())));
            return CompletableFuture.completedFuture(true);
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public CompletableFuture<Boolean> onAuthSuccess(Mqtt5ClientConfig config, Mqtt5ConnAck connAck) {
        return verified(connAck.getEnhancedAuth().flatMap(Mqtt5EnhancedAuth::getData));
    }

    @Override
    public CompletableFuture<Boolean> onReAuthSuccess(Mqtt5ClientConfig config, Mqtt5Auth auth) {
        return verified(auth.getData());
    }

    private CompletableFuture<Boolean> verified(Optional<ByteBuffer> serverFinal) {
        try {
            boolean ok = serverFinal.isPresent() && exchange.serverVerified(bytes(serverFinal));
            if (ok) {
                serverVerified.incrementAndGet();
            }
            return CompletableFuture.completedFuture(ok);
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static byte[] bytes(Optional<ByteBuffer> data) {
        ByteBuffer b = data.orElseThrow().duplicate();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    @Override
    public void onAuthRejected(Mqtt5ClientConfig config, Mqtt5ConnAck connAck) {
    }

    @Override
    public void onReAuthRejected(Mqtt5ClientConfig config, Mqtt5Disconnect disconnect) {
    }

    @Override
    public void onAuthError(Mqtt5ClientConfig config, Throwable cause) {
    }

    @Override
    public void onReAuthError(Mqtt5ClientConfig config, Throwable cause) {
    }
}
