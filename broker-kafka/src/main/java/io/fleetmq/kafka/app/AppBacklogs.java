package io.fleetmq.kafka.app;

import io.fleetmq.kafka.KafkaClients;
import java.util.List;
import java.util.function.Consumer;

/** Opens the backlog of a connected persistent APPLICATION client. */
public final class AppBacklogs {

    private final KafkaClients clients;
    private final AppTopics topics;

    public AppBacklogs(KafkaClients clients, AppTopics topics) {
        this.clients = clients;
        this.topics = topics;
    }

    /**
     * @param sink      receives the records, on the backlog's thread
     * @param newSession the session has just been created: what the topic held before belongs to an
     *                   earlier session of the client ID and is skipped
     */
    public AppBacklog open(String clientId, Consumer<List<AppBacklog.Record>> sink, boolean newSession) {
        AppBacklog backlog = new AppBacklog(clients, topics.topic(clientId), topics.group(clientId), sink,
                newSession ? System.currentTimeMillis() - 1_000 : -1);
        backlog.start();
        return backlog;
    }
}
