package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.exceptions.Mqtt3ConnAckException;
import com.hivemq.client.mqtt.mqtt3.message.connect.connack.Mqtt3ConnAckReturnCode;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5ConnAckException;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAckReasonCode;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.TestServices;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Persistent APPLICATION sessions each cost a Kafka topic: at most sessions.max-application-sessions
 * (3 here) in the cluster, and a shared subscription's backlog topic goes
 * sessions.application-shared-grace (8 s here) after its last APPLICATION member's session ended.
 */
class ApplicationSessionsTest {

    private static final String PREFIX = "t" + UUID.randomUUID().toString().substring(0, 8) + ".";

    @TempDir
    static Path dataDir;

    private static TestBroker broker;
    private static Admin admin;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of("KAFKA_TOPIC_PREFIX", PREFIX,
                "APPLICATION_CLIENT_ID_PATTERN", "app-.*", "MAX_APPLICATION_SESSIONS", "3",
                "APPLICATION_SHARED_GRACE", "8s"));
        Properties props = new Properties();
        props.put("bootstrap.servers", TestServices.shared().kafkaBootstrapServers());
        admin = Admin.create(props);
    }

    @AfterAll
    static void stop() {
        admin.close();
        broker.close();
    }

    private static Set<String> topics() {
        try {
            return admin.listTopics().names().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A persistent session of {@code id}; tries again while the cluster still counts ended sessions. */
    private static Mqtt5BlockingClient persistent(String id) {
        Mqtt5BlockingClient c = broker.v5(id);
        Await.until(Duration.ofSeconds(30), id + " to be taken", () -> {
            try {
                c.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
                return true;
            } catch (Mqtt5ConnAckException e) {
                return false;
            }
        });
        return c;
    }

    private static void end(Mqtt5BlockingClient c) {
        c.disconnectWith().sessionExpiryInterval(0).send();
    }

    @Test
    @DisplayName("one persistent APPLICATION session beyond the bound: CONNACK 0x97 (3.1.1: return code 3), counted")
    void persistentApplicationSessionsAreBounded() {
        Mqtt5BlockingClient a = persistent("app-bound-a");
        Mqtt5BlockingClient b = persistent("app-bound-b");
        Mqtt5BlockingClient c = persistent("app-bound-c");
        double before = broker.limitExceeded("application_sessions");

        Mqtt5ConnAckException refused = assertThrows(Mqtt5ConnAckException.class,
                () -> broker.v5("app-bound-d").connectWith().sessionExpiryInterval(300).send());
        assertEquals(Mqtt5ConnAckReasonCode.QUOTA_EXCEEDED, refused.getMqttMessage().getReasonCode());
        Mqtt3BlockingClient v3 = broker.v3("app-bound-v3");
        Mqtt3ConnAckException refusedV3 = assertThrows(Mqtt3ConnAckException.class,
                () -> v3.connectWith().cleanSession(false).send());
        assertEquals(Mqtt3ConnAckReturnCode.SERVER_UNAVAILABLE, refusedV3.getMqttMessage().getReturnCode());
        assertEquals(before + 2, broker.limitExceeded("application_sessions"));

        // No topic for a session that ends with its connection, and a client's own session resumes.
        Mqtt5BlockingClient passing = broker.v5("app-bound-e");
        passing.connectWith().sessionExpiryInterval(0).send();
        passing.disconnect();
        a.disconnect();
        assertTrue(a.connectWith().cleanStart(false).sessionExpiryInterval(300).send().isSessionPresent());
        assertEquals(before + 2, broker.limitExceeded("application_sessions"));

        // An ended session makes room.
        end(b);
        Mqtt5BlockingClient d = persistent("app-bound-d");
        end(a);
        end(c);
        end(d);
    }

    @Test
    @DisplayName("a shared backlog topic is deleted after the grace period once its last APPLICATION member's session ended; kept if a member comes back in time")
    void sharedBacklogTopicsGoWithTheirLastMember() throws Exception {
        BrokerTopics names = new BrokerTopics(PREFIX);
        String gone = names.appShared("g1", "sh/one");
        String kept = names.appShared("g2", "sh/two");
        Mqtt5BlockingClient s1 = persistent("app-shared-1");
        s1.subscribeWith().topicFilter("$share/g1/sh/one").qos(MqttQos.AT_LEAST_ONCE).send();
        Mqtt5BlockingClient s2 = persistent("app-shared-2");
        s2.subscribeWith().topicFilter("$share/g2/sh/two").qos(MqttQos.AT_LEAST_ONCE).send();
        Await.until(Duration.ofSeconds(30), "both shared backlog topics",
                () -> topics().containsAll(Set.of(gone, kept)));

        end(s1);
        end(s2);
        // g2 gets a member again well within the grace period; g1 does not.
        Mqtt5BlockingClient s3 = persistent("app-shared-3");
        s3.subscribeWith().topicFilter("$share/g2/sh/two").qos(MqttQos.AT_LEAST_ONCE).send();

        Await.until(Duration.ofSeconds(90), "g1's backlog topic to be deleted", () -> !topics().contains(gone));
        assertTrue(topics().contains(kept), "g2's backlog topic is kept: it has a member again");

        Mqtt5BlockingClient pub = broker.connectedV5("shared-pub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = s3.publishes(MqttGlobalPublishFilter.ALL)) {
            pub.publishWith().topic("sh/two").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {7}).send();
            assertArrayEquals(new byte[] {7}, Received.next(in).getPayloadAsBytes(), "g2 still works");
        }
        pub.disconnect();
        end(s3);
        Await.until(Duration.ofSeconds(90), "g2's backlog topic to go after its last member too",
                () -> !topics().contains(kept));
    }
}
