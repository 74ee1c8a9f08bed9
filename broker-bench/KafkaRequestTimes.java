import com.sun.tools.attach.VirtualMachine;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/*
 * Where a running node's Kafka requests spend their time: the embedded Kafka's request metrics
 * (queue, local, remote and response times of produce and fetch requests) and the node's own
 * producers' and consumers' view of the same round trips. Attaches to the node through the JDK's
 * Attach API and reads its MBeans; a node whose Kafka runs elsewhere shows only its clients.
 * Run as a source file (JDK 11+):
 *
 *   java broker-bench/KafkaRequestTimes.java PID
 */
public final class KafkaRequestTimes {

    private static final String[] REQUESTS = {"Produce", "FetchConsumer", "OffsetCommit", "Heartbeat"};
    private static final String[] PARTS = {"TotalTimeMs", "RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs",
            "ResponseQueueTimeMs", "ResponseSendTimeMs"};
    private static final String[] PRODUCER = {"request-rate", "records-per-request-avg", "requests-in-flight",
            "record-queue-time-avg", "request-latency-avg"};
    private static final String[] CONSUMER = {"fetch-rate", "records-per-request-avg", "fetch-latency-avg"};

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: java KafkaRequestTimes.java PID");
            System.exit(2);
        }
        VirtualMachine vm = VirtualMachine.attach(args[0]);
        String address;
        try {
            address = vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
        try (JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(address))) {
            MBeanServerConnection server = connector.getMBeanServerConnection();
            System.out.println("embedded Kafka, per request (ms): mean / p50 / p99, count");
            for (String request : REQUESTS) {
                for (String part : PARTS) {
                    ObjectName name = new ObjectName("kafka.network:type=RequestMetrics,name=" + part
                            + ",request=" + request);
                    if (!server.isRegistered(name)) {
                        continue;
                    }
                    System.out.printf("  %-14s %-20s %8.2f / %6.2f / %7.2f  %d%n", request, part,
                            number(server, name, "Mean"), number(server, name, "50thPercentile"),
                            number(server, name, "99thPercentile"), (long) number(server, name, "Count"));
                }
            }
            clients(server, "kafka.producer:type=producer-metrics,*", PRODUCER);
            clients(server, "kafka.consumer:type=consumer-fetch-manager-metrics,*", CONSUMER);
        }
    }

    private static void clients(MBeanServerConnection server, String pattern, String[] attributes) throws Exception {
        System.out.println(pattern.substring(0, pattern.indexOf(',')) + ": " + String.join(", ", attributes));
        for (ObjectName name : server.queryNames(new ObjectName(pattern), null)) {
            if (name.getKeyProperty("topic") != null) {
                continue;
            }
            StringBuilder line = new StringBuilder(String.format("  %-40s", name.getKeyProperty("client-id")));
            for (String attribute : attributes) {
                line.append(String.format(" %10.2f", number(server, name, attribute)));
            }
            System.out.println(line);
        }
    }

    private static double number(MBeanServerConnection server, ObjectName name, String attribute) throws Exception {
        Object value = server.getAttribute(name, attribute);
        return value instanceof Number n ? n.doubleValue() : Double.NaN;
    }
}
