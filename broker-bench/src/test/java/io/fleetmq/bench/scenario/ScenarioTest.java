package io.fleetmq.bench.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class ScenarioTest {

    @Test
    void fanInIsManyPublishersOnOwnTopicsAndOneWildcardSubscriber() {
        Topology t = Scenario.FAN_IN.topology(3, "abc123");
        assertEquals(List.of("fleetmq-bench/abc123/fan-in/0", "fleetmq-bench/abc123/fan-in/1",
                "fleetmq-bench/abc123/fan-in/2"), t.publishers().stream().map(Topology.Publisher::topic).toList());
        assertEquals(List.of("fleetmq-bench/abc123/fan-in/+"),
                t.subscribers().stream().map(Topology.Subscriber::filter).toList());
        assertEquals(1, t.deliveriesPerPublish());
    }

    @Test
    void fanOutIsOnePublisherAndEverySubscriberOnItsTopic() {
        Topology t = Scenario.FAN_OUT.topology(4, "abc123");
        assertEquals(1, t.publishers().size());
        assertEquals(4, t.subscribers().size());
        String topic = t.publishers().get(0).topic();
        assertTrue(t.subscribers().stream().allMatch(s -> s.filter().equals(topic)));
        assertEquals(4, t.deliveriesPerPublish(), "each publish reaches every subscriber");
    }

    @Test
    void p2pPairsEachPublisherWithTheSubscriberOfItsTopicAlone() {
        Topology t = Scenario.P2P.topology(5, "abc123");
        assertEquals(5, t.publishers().size());
        assertEquals(5, t.subscribers().size());
        for (int i = 0; i < 5; i++) {
            assertEquals(i, t.publishers().get(i).id());
            assertEquals(t.publishers().get(i).topic(), t.subscribers().get(i).filter());
        }
        assertEquals(5, new HashSet<>(t.publishers().stream().map(Topology.Publisher::topic).toList()).size());
        assertEquals(1, t.deliveriesPerPublish());
    }

    @Test
    void clientIdsAreUniqueAndWithinWhatEveryServerMustAccept_MQTT_3_1_3_5() {
        for (Scenario scenario : List.of(Scenario.FAN_IN, Scenario.FAN_OUT, Scenario.P2P)) {
            Topology t = scenario.topology(100_000, "ffffff");
            List<String> ids = Stream.concat(t.publishers().stream().map(Topology.Publisher::clientId),
                    t.subscribers().stream().map(Topology.Subscriber::clientId)).toList();
            Set<String> unique = new HashSet<>(ids);
            assertEquals(ids.size(), unique.size(), scenario.label());
            assertTrue(ids.stream().allMatch(id -> id.matches("[0-9a-zA-Z]{1,23}")), scenario.label());
        }
    }

    @Test
    void connectorsHaveOneIdEachWithinWhatEveryServerMustAcceptAndNoTopology_MQTT_3_1_3_5() {
        List<String> ids = Scenario.connectorIds(100_000, "ffffff");
        assertEquals(100_000, new HashSet<>(ids).size());
        assertEquals("bffffffc0", ids.get(0));
        assertTrue(ids.stream().allMatch(id -> id.matches("[0-9a-zA-Z]{1,23}")));
        assertEquals(Scenario.CONNECT, Scenario.parse("connect"));
        assertThrows(IllegalStateException.class, () -> Scenario.CONNECT.topology(1, "abc123"));
        assertThrows(IllegalArgumentException.class, () -> Scenario.connectorIds(0, "abc123"));
    }

    @Test
    void labelsParseBackAndStrangersAreRefused() {
        for (Scenario scenario : Scenario.values()) {
            assertEquals(scenario, Scenario.parse(scenario.label()));
        }
        assertEquals(Scenario.FAN_OUT, Scenario.parse(" Fan-Out "));
        assertThrows(IllegalArgumentException.class, () -> Scenario.parse("fanout"));
        assertThrows(IllegalArgumentException.class, () -> Scenario.P2P.topology(0, "abc123"));
    }
}
