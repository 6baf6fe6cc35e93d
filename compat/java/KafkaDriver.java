// Java kafka-clients driver: `java -cp <classes>:<jars> KafkaDriver '<command json>'`.
// Speaks the command/observation schema defined in compat/schema.py (keep in step with it).

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public final class KafkaDriver {
    /** Every ABORT_EVERY-th transaction of ``transact`` is aborted on purpose, then retried. */
    private static final int ABORT_EVERY = 3;
    private static final int TRANSACTION_RECORDS = 10;
    /** What ``fence`` writes, in order (compat/schema.py's FENCE_VALUES). */
    private static final String[] FENCE_VALUES = {"before", "zombie", "after", "late"};
    private static final int DEFAULT_MAX_POLL_RECORDS = 500;  // Kafka's max.poll.records default
    private final Command command;
    /** A swarm member's label ({member, group}) added to its observations; empty otherwise. */
    private final Map<String, Object> label;

    private KafkaDriver(Command command) {
        this(command, Map.of());
    }

    private KafkaDriver(Command command, Map<String, Object> label) {
        this.command = command;
        this.label = label;
    }

    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: KafkaDriver '<command json>'");
            System.exit(2);
        }
        Command command = new Command(FlatJson.parse(args[0]));
        emit("ready", Map.of("op", command.op));
        try {
            new KafkaDriver(command).dispatch();
        } catch (Exception e) {
            e.printStackTrace();
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            emit("error", Map.of("message", cause.getClass().getSimpleName() + ": " + cause.getMessage()));
            System.exit(1);
        }
        System.exit(0);
    }

    private void dispatch() throws Exception {
        switch (command.op) {
            case "create_topic" -> createTopic();
            case "produce" -> produce();
            case "consume" -> consume();
            case "offsets" -> offsets();
            case "member" -> member();
            case "swarm" -> swarm();
            case "admin" -> admin();
            case "acls" -> acls();
            case "quotas" -> quotas();
            case "features" -> features();
            case "transact" -> transact();
            case "fence" -> fence();
            case "create_user" -> createUser();
            case "cluster_admin" -> clusterAdmin();
            default -> throw new IllegalArgumentException("unknown op " + command.op);
        }
    }

    private Properties base() {
        Properties props = new Properties();
        props.put("bootstrap.servers", command.bootstrap);
        props.put("client.id", command.clientId);
        secure(props, command.security);
        return props;
    }

    /** command.security (librdkafka's names, see compat/schema.py) as the Java client's configs. */
    private static void secure(Properties props, Map<String, Object> security) {
        if (security.isEmpty()) {
            return;
        }
        props.put("security.protocol", ((String) security.get("security.protocol")).toUpperCase());
        String mechanism = (String) security.get("sasl.mechanism");
        if (mechanism != null) {
            String module = mechanism.equals("PLAIN")
                ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                : "org.apache.kafka.common.security.scram.ScramLoginModule";
            props.put("sasl.mechanism", mechanism);
            props.put("sasl.jaas.config", module + " required username=" + FlatJson.quote((String) security.get("sasl.username"))
                + " password=" + FlatJson.quote((String) security.get("sasl.password")) + ";");
        }
        if (security.containsKey("ssl.ca.location")) {
            props.put("ssl.truststore.type", "PEM");
            props.put("ssl.truststore.location", security.get("ssl.ca.location"));
        }
        if (security.containsKey("ssl.keystore.location")) {
            props.put("ssl.keystore.type", "PEM");
            props.put("ssl.keystore.location", security.get("ssl.keystore.location"));
        }
    }

    private void createUser() throws Exception {
        try (Admin admin = Admin.create(base())) {
            ScramCredentialInfo info = new ScramCredentialInfo(ScramMechanism.fromMechanismName(command.mechanism), 4096);
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(command.user, info, command.password)))
                .all().get((long) (command.timeoutS * 1000), TimeUnit.MILLISECONDS);
        }
        emit("user_created", Map.of("user", command.user));
    }

    /** What Kafka4Apis provides: kafka-clients 4.0's APIs, absent from a kafka-clients 3.9 build. */
    interface Kafka4 {
        void subscribePattern(KafkaConsumer<?, ?> consumer, String pattern, ConsumerRebalanceListener listener);

        List<String> groupIds(Admin admin, long timeoutMs) throws Exception;

        String groupState(ConsumerGroupDescription description);
    }

    private static Kafka4 kafka4() {
        try {
            return (Kafka4) Class.forName("Kafka4Apis").getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new UnsupportedOperationException("this step needs kafka-clients 4.0 or newer", e);
        }
    }

    private KafkaConsumer<String, String> groupConsumer() {
        return groupConsumer(command.isolation, DEFAULT_MAX_POLL_RECORDS);
    }

    private KafkaConsumer<String, String> groupConsumer(String isolation, int maxPollRecords) {
        Properties props = base();
        props.put("isolation.level", isolation);
        props.put("max.poll.records", String.valueOf(maxPollRecords));
        props.put("group.id", command.group);
        props.put("auto.offset.reset", "earliest");
        props.put("enable.auto.commit", "false");
        if (command.groupProtocol.equals("consumer")) {
            // KIP-848: the broker assigns and times sessions; the client refuses the classic settings.
            props.put("group.protocol", "consumer");
            props.put("group.remote.assignor", command.assignor);
        } else {
            props.put("session.timeout.ms", String.valueOf(command.sessionTimeoutMs));
            props.put("partition.assignment.strategy", switch (command.assignor) {
                case "range" -> RangeAssignor.class.getName();
                case "roundrobin" -> RoundRobinAssignor.class.getName();
                case "cooperative-sticky" -> CooperativeStickyAssignor.class.getName();
                default -> throw new IllegalArgumentException("unknown assignor " + command.assignor);
            });
        }
        if (command.groupInstanceId != null) {
            props.put("group.instance.id", command.groupInstanceId);
        }
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    private void createTopic() throws Exception {
        try (Admin admin = Admin.create(base())) {
            admin.createTopics(List.of(new NewTopic(command.topic, command.partitions, (short) 1)))
                .all().get(timeoutMs(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
        }
        emit("created", Map.of("topic", command.topic));
    }

    private void produce() throws Exception {
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(base(), new StringSerializer(), new StringSerializer())) {
            List<Future<RecordMetadata>> deliveries = new ArrayList<>();
            for (int i = 0; i < command.count; i++) {
                deliveries.add(producer.send(new ProducerRecord<>(
                    command.topic, "key-" + (i % command.keyCount), String.valueOf(i))));
            }
            producer.flush();
            for (Future<RecordMetadata> delivery : deliveries) {
                delivery.get(timeoutMs(), TimeUnit.MILLISECONDS);
            }
        }
        emit("produced", Map.of("count", command.count));
    }

    private void consume() {
        try (KafkaConsumer<String, String> consumer = groupConsumer()) {
            emit("subscribing", Map.of("group", command.group));
            consumer.subscribe(List.of(command.topic));
            int received = 0;
            long deadline = System.nanoTime() + timeoutMs() * 1_000_000L;
            while (received < command.count && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    received++;
                    // Not Map.of: a null key or value is reported, and Map.of refuses nulls.
                    Map<String, Object> message = new HashMap<>();
                    message.put("partition", record.partition());
                    message.put("offset", record.offset());
                    message.put("key", record.key());
                    message.put("value", record.value());
                    emit("message", message);
                }
            }
            consumer.commitSync();
            Map<Integer, Long> positions = new TreeMap<>();
            for (TopicPartition tp : consumer.assignment()) {
                positions.put(tp.partition(), consumer.position(tp));
            }
            emit("committed", Map.of("offsets", positions));
        }
    }

    /** The consume-transform-produce loop of compat/schema.py's ``transact``. */
    private void transact() {
        Properties producerProps = base();
        producerProps.put("transactional.id", command.transactionalId);
        try (KafkaConsumer<String, String> consumer = groupConsumer("read_committed", TRANSACTION_RECORDS);
             KafkaProducer<String, String> producer =
                 new KafkaProducer<>(producerProps, new StringSerializer(), new StringSerializer())) {
            producer.initTransactions();
            consumer.subscribe(List.of(command.topic));
            int committed = 0;
            int aborted = 0;
            int transactions = 0;
            long deadline = System.nanoTime() + timeoutMs() * 1_000_000L;
            while (committed < command.count && System.nanoTime() < deadline) {
                List<ConsumerRecord<String, String>> records = new ArrayList<>();
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
                if (records.isEmpty()) {
                    continue;
                }
                transactions++;
                boolean[] attempts = transactions % ABORT_EVERY == 0 ? new boolean[] {false, true} : new boolean[] {true};
                for (boolean commit : attempts) {
                    producer.beginTransaction();
                    for (ConsumerRecord<String, String> record : records) {
                        producer.send(new ProducerRecord<>(command.output, record.key(), record.value()));
                    }
                    if (commit) {
                        Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
                        for (TopicPartition tp : consumer.assignment()) {
                            positions.put(tp, new OffsetAndMetadata(consumer.position(tp)));
                        }
                        producer.sendOffsetsToTransaction(positions, consumer.groupMetadata());
                        producer.commitTransaction();
                        committed += records.size();
                    } else {
                        producer.flush();  // an abort drops what was not sent yet: the copies must reach the log
                        producer.abortTransaction();
                        aborted += records.size();
                    }
                    emit("transaction", Map.of("outcome", commit ? "commit" : "abort", "records", records.size()));
                }
            }
            emit("transacted", Map.of("committed", committed, "aborted", aborted));
        }
    }

    /** compat/schema.py's ``fence``: a second producer of one transactional id fences the first. */
    private void fence() {
        Properties props = base();
        props.put("transactional.id", command.transactionalId);
        KafkaProducer<String, String> zombie = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
        try (KafkaProducer<String, String> successor =
                 new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            zombie.initTransactions();
            zombie.beginTransaction();
            zombie.send(new ProducerRecord<>(command.output, FENCE_VALUES[0]));
            zombie.commitTransaction();
            zombie.beginTransaction();
            zombie.send(new ProducerRecord<>(command.output, FENCE_VALUES[1]));
            zombie.flush();
            successor.initTransactions();
            successor.beginTransaction();
            successor.send(new ProducerRecord<>(command.output, FENCE_VALUES[2]));
            successor.commitTransaction();
            try {
                zombie.send(new ProducerRecord<>(command.output, FENCE_VALUES[3]));
                zombie.commitTransaction();
            } catch (KafkaException e) {
                emit("fenced", Map.of("error", e.getClass().getSimpleName() + ": " + e.getMessage()));
                return;
            }
            throw new IllegalStateException("the fenced producer committed");
        } finally {
            zombie.close(Duration.ofSeconds(5));
        }
    }

    private void offsets() throws Exception {
        try (Admin admin = Admin.create(base())) {
            Map<TopicPartition, OffsetSpec> latestSpec = new HashMap<>();
            for (int p = 0; p < command.partitions; p++) {
                latestSpec.put(new TopicPartition(command.topic, p), OffsetSpec.latest());
            }
            Map<Integer, Long> latest = new TreeMap<>();
            admin.listOffsets(latestSpec).all().get(timeoutMs(), TimeUnit.MILLISECONDS)
                .forEach((tp, info) -> latest.put(tp.partition(), info.offset()));
            Map<Integer, Long> committed = new TreeMap<>();
            Map<TopicPartition, OffsetAndMetadata> groupOffsets = admin.listConsumerGroupOffsets(command.group)
                .partitionsToOffsetAndMetadata().get(timeoutMs(), TimeUnit.MILLISECONDS);
            groupOffsets.forEach((tp, offset) -> {
                if (offset != null && tp.topic().equals(command.topic)) {
                    committed.put(tp.partition(), offset.offset());
                }
            });
            emit("offsets", Map.of("committed", committed, "latest", latest));
        }
    }

    private void member() throws InterruptedException {
        List<KafkaDriver> one = List.of(this);
        runMembers(one);
        emit("closed", Map.of());
    }

    /** Many members in this JVM, one thread each: groups "{group}-{i}" of `members` members. */
    private void swarm() throws InterruptedException {
        List<KafkaDriver> members = new ArrayList<>();
        for (int i = 0; i < command.groups; i++) {
            String group = command.group + "-" + i;
            for (int j = 0; j < command.members; j++) {
                members.add(new KafkaDriver(command.forMember(group, group + "-" + j),
                    Map.of("member", i + "/" + j, "group", group)));
            }
        }
        runMembers(members);
    }

    /** Runs each member's poll loop on its own thread until stdin says close (or ends). */
    private static void runMembers(List<KafkaDriver> members) throws InterruptedException {
        AtomicBoolean stop = new AtomicBoolean(false);
        List<KafkaConsumer<String, String>> consumers = new CopyOnWriteArrayList<>();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        Thread watcher = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null && !line.trim().equals("close")) {
                    // other lines are ignored
                }
            } catch (Exception ignored) {
                // EOF or a broken pipe both mean: close
            }
            stop.set(true);
            consumers.forEach(KafkaConsumer::wakeup);
        }, "stdin-close");
        watcher.setDaemon(true);
        watcher.start();
        List<Thread> threads = new ArrayList<>();
        for (KafkaDriver member : members) {
            Thread thread = new Thread(() -> {
                try {
                    member.pollUntil(stop, consumers);
                } catch (Throwable e) {
                    failures.add(e);
                    stop.set(true);
                    consumers.forEach(KafkaConsumer::wakeup);
                }
            }, "member-" + member.label.getOrDefault("member", "0"));
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("a member failed: " + failures.get(0), failures.get(0));
        }
    }

    private void pollUntil(AtomicBoolean stop, List<KafkaConsumer<String, String>> consumers) {
        KafkaConsumer<String, String> consumer = groupConsumer();
        consumers.add(consumer);
        TreeSet<Integer> owned = new TreeSet<>();
        ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
            // For eager assignors these callbacks carry whole sets, for cooperative ones increments;
            // keeping a set and applying add/remove covers both.
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                boolean changed = false;
                for (TopicPartition tp : partitions) {
                    changed |= owned.remove(tp.partition());
                }
                if (changed) {
                    reportAssignment(consumer, owned);
                }
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                for (TopicPartition tp : partitions) {
                    owned.add(tp.partition());
                }
                reportAssignment(consumer, owned);
            }
        };
        emit("subscribing", labelled(Map.of("group", command.group)));
        if (command.topicPattern != null) {
            kafka4().subscribePattern(consumer, command.topicPattern, listener);
        } else {
            consumer.subscribe(List.of(command.topic), listener);
        }
        try {
            while (!stop.get()) {
                try {
                    consumer.poll(Duration.ofMillis(100));
                } catch (WakeupException e) {
                    // the stdin watcher asked us to close
                }
            }
        } finally {
            consumer.close();
        }
        if (!label.isEmpty()) {
            emit("closed", label);
        }
    }

    /** The admin steps of compat/schema.py ADMIN_STEPS, with the Java Admin client. */
    private void admin() throws Exception {
        String topic = command.topic;
        String extra = topic + "-extra";
        List<String> groups = List.of(command.group, command.otherGroup);
        try (Admin admin = Admin.create(base())) {
            Map<String, AdminStep> steps = new java.util.LinkedHashMap<>();
            steps.put("create_topics", () -> {
                admin.createTopics(List.of(new NewTopic(topic, command.partitions, (short) 1),
                    new NewTopic(extra, command.partitions, (short) 1))).all().get(timeoutMs(), TimeUnit.MILLISECONDS);
                return null;
            });
            steps.put("delete_topics", () -> {
                admin.deleteTopics(List.of(extra)).all().get(timeoutMs(), TimeUnit.MILLISECONDS);
                return null;
            });
            steps.put("list_topics", () -> {
                TreeSet<String> names = new TreeSet<>(admin.listTopics().names().get(timeoutMs(), TimeUnit.MILLISECONDS));
                names.retainAll(List.of(topic, extra));
                return new ArrayList<>(names);
            });
            steps.put("alter_offsets", () -> {
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (int p = 0; p < command.partitions; p++) {
                    offsets.put(new TopicPartition(topic, p), new OffsetAndMetadata(p + 1));
                }
                admin.alterConsumerGroupOffsets(command.group, offsets).all().get(timeoutMs(), TimeUnit.MILLISECONDS);
                return null;
            });
            steps.put("list_offsets", () -> {
                Map<Integer, Long> committed = new TreeMap<>();
                admin.listConsumerGroupOffsets(command.group).partitionsToOffsetAndMetadata()
                    .get(timeoutMs(), TimeUnit.MILLISECONDS).forEach((tp, offset) -> {
                        if (offset != null && tp.topic().equals(topic)) {
                            committed.put(tp.partition(), offset.offset());
                        }
                    });
                return committed;
            });
            AdminStep listGroups = () -> {
                TreeSet<String> names = new TreeSet<>(kafka4().groupIds(admin, timeoutMs()));
                names.retainAll(groups);
                return new ArrayList<>(names);
            };
            steps.put("list_groups", listGroups);
            steps.put("describe_groups", () -> {
                Map<String, Object> described = new TreeMap<>();
                admin.describeConsumerGroups(groups).all().get(timeoutMs(), TimeUnit.MILLISECONDS)
                    .forEach((name, info) -> described.put(name, Map.of(
                        "state", kafka4().groupState(info).replace("_", ""), "members", info.members().size())));
                return described;
            });
            steps.put("delete_live_group", () -> {
                admin.deleteConsumerGroups(List.of(command.otherGroup)).all().get(timeoutMs(), TimeUnit.MILLISECONDS);
                return null;
            });
            steps.put("delete_group", () -> {
                admin.deleteConsumerGroups(List.of(command.group)).all().get(timeoutMs(), TimeUnit.MILLISECONDS);
                return null;
            });
            steps.put("list_groups_after", listGroups);
            runSteps("admin_step", steps);
        }
    }

    /** The steps of `cluster_admin` (compat/schema.py) on `topic`, then a consumer of `group`
     * resuming from an offset committed with its leader epoch. */
    private void clusterAdmin() throws Exception {
        String topic = command.topic;
        TopicPartition first = new TopicPartition(topic, 0);
        List<String> logDirs = new ArrayList<>();
        try (Admin admin = Admin.create(base())) {
            Map<String, AdminStep> steps = new java.util.LinkedHashMap<>();
            steps.put("create_topics", () -> {
                admin.createTopics(List.of(new NewTopic(topic, command.partitions, (short) 1)))
                    .all().get(timeoutMs(), TimeUnit.MILLISECONDS);
                return null;
            });
            steps.put("describe_topics", () -> {
                // Two partitions a response: the client follows DescribeTopicPartitions' cursor.
                DescribeTopicsOptions paged = new DescribeTopicsOptions().partitionSizeLimitPerResponse(2);
                Map<Integer, Integer> leaders = new TreeMap<>();
                admin.describeTopics(List.of(topic), paged).allTopicNames().get(timeoutMs(), TimeUnit.MILLISECONDS)
                    .get(topic).partitions().forEach(p -> leaders.put(p.partition(), p.leader().id()));
                return leaders;
            });
            steps.put("describe_log_dirs", () -> {
                Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(0)).allDescriptions()
                    .get(timeoutMs(), TimeUnit.MILLISECONDS).get(0);
                logDirs.addAll(new TreeSet<>(dirs.keySet()));
                return logDirs;
            });
            steps.put("elect_leaders", () -> {
                Map<Integer, Object> results = new TreeMap<>();
                admin.electLeaders(ElectionType.PREFERRED, Set.of(first)).partitions()
                    .get(timeoutMs(), TimeUnit.MILLISECONDS).forEach((tp, failure) ->
                        results.put(tp.partition(), failure.map(e -> Errors.forException(e).name()).orElse(null)));
                return results;
            });
            steps.put("alter_reassignments", () -> {
                admin.alterPartitionReassignments(Map.of(first, Optional.of(new NewPartitionReassignment(List.of(0)))))
                    .all().get(timeoutMs(), TimeUnit.MILLISECONDS);
                return null;
            });
            steps.put("alter_reassignments_elsewhere", () -> {
                admin.alterPartitionReassignments(Map.of(first, Optional.of(new NewPartitionReassignment(List.of(1)))))
                    .all().get(timeoutMs(), TimeUnit.MILLISECONDS);
                return null;
            });
            steps.put("list_reassignments", () ->
                admin.listPartitionReassignments().reassignments().get(timeoutMs(), TimeUnit.MILLISECONDS).size());
            steps.put("alter_replica_log_dirs", () -> {
                admin.alterReplicaLogDirs(Map.of(new TopicPartitionReplica(topic, 0, 0), logDirs.get(0)))
                    .all().get(timeoutMs(), TimeUnit.MILLISECONDS);
                return null;
            });
            steps.put("alter_replica_log_dirs_elsewhere", () -> {
                admin.alterReplicaLogDirs(Map.of(new TopicPartitionReplica(topic, 0, 0), "/no/such/dir"))
                    .all().get(timeoutMs(), TimeUnit.MILLISECONDS);
                return null;
            });
            steps.put("consume_committed", () -> {
                for (int i = 0; i < 3; i++) {
                    produceTo(first, "v" + i);
                }
                // Committed with leader epoch 0, as Metadata advertises it: the consumer resuming
                // there validates the position (OffsetForLeaderEpoch) before it fetches.
                admin.alterConsumerGroupOffsets(command.group, Map.of(first, new OffsetAndMetadata(1, Optional.of(0), "")))
                    .all().get(timeoutMs(), TimeUnit.MILLISECONDS);
                return consumeAssigned(first);
            });
            runSteps("admin_step", steps);
        }
    }

    private void produceTo(TopicPartition partition, String value) throws Exception {
        Properties props = base();
        props.put("key.serializer", StringSerializer.class.getName());
        props.put("value.serializer", StringSerializer.class.getName());
        props.put("max.block.ms", String.valueOf(timeoutMs()));
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            producer.send(new ProducerRecord<>(partition.topic(), partition.partition(), "k", value))
                .get(timeoutMs(), TimeUnit.MILLISECONDS);
        }
    }

    /** The first record value a consumer of `group` assigned `partition` reads from its committed offset. */
    private Object consumeAssigned(TopicPartition partition) {
        Properties props = base();
        props.put("group.id", command.group);
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            consumer.assign(List.of(partition));
            long deadline = System.currentTimeMillis() + timeoutMs();
            while (System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    return record.value();
                }
            }
            return null;
        }
    }

    /** The ACL steps of `acls` (compat/schema.py): this client is User:ANONYMOUS on PLAINTEXT. */
    private void acls() throws Exception {
        String allowed = command.topic;
        String denied = command.topic + "-denied";
        String me = "User:ANONYMOUS";
        List<AclBinding> bindings = List.of(
            acl(ResourceType.TOPIC, allowed, PatternType.LITERAL, me, AclOperation.WRITE),
            acl(ResourceType.TOPIC, allowed, PatternType.LITERAL, me, AclOperation.READ),
            acl(ResourceType.GROUP, command.group, PatternType.LITERAL, me, AclOperation.READ),
            acl(ResourceType.TOPIC, denied, PatternType.LITERAL, "User:bob", AclOperation.WRITE),
            acl(ResourceType.GROUP, command.otherGroup, PatternType.LITERAL, "User:bob", AclOperation.READ),
            acl(ResourceType.TOPIC, command.topic + "-", PatternType.PREFIXED, "User:bob", AclOperation.DESCRIBE));
        AclBindingFilter everything = AclBindingFilter.ANY;
        AclBindingFilter bobs = new AclBindingFilter(ResourcePatternFilter.ANY,
            new AccessControlEntryFilter("User:bob", null, AclOperation.ANY, AclPermissionType.ANY));
        try (Admin admin = Admin.create(base())) {
            Map<String, AdminStep> steps = new java.util.LinkedHashMap<>();
            steps.put("create_topics", () -> {
                admin.createTopics(List.of(new NewTopic(allowed, 1, (short) 1), new NewTopic(denied, 1, (short) 1)))
                    .all().get(timeoutMs(), TimeUnit.MILLISECONDS);
                return null;
            });
            steps.put("create_acls", () -> {
                admin.createAcls(bindings).all().get(timeoutMs(), TimeUnit.MILLISECONDS);
                return bindings.size();
            });
            AdminStep describe = () -> describedAcls(admin.describeAcls(everything).values()
                .get(timeoutMs(), TimeUnit.MILLISECONDS));
            steps.put("describe_acls", describe);
            steps.put("produce_allowed", () -> produceOne(allowed));
            steps.put("produce_denied", () -> produceOne(denied));
            steps.put("consume_allowed", () -> consumeOne(command.group, allowed));
            steps.put("consume_denied", () -> consumeOne(command.otherGroup, allowed));
            steps.put("delete_acls", () -> describedAcls(admin.deleteAcls(List.of(bobs)).all()
                .get(timeoutMs(), TimeUnit.MILLISECONDS)));
            steps.put("describe_acls_after", describe);
            runSteps("acl_step", steps);
        }
    }

    /** Each step in order, one event each: its result, or the Kafka error it failed with
     * (an ``admin_step`` also says ``unsupported``: null). An exception that is not a broker
     * error fails the driver. */
    private static void runSteps(String event, Map<String, AdminStep> steps) throws Exception {
        for (Map.Entry<String, AdminStep> step : steps.entrySet()) {
            Map<String, Object> fields = new HashMap<>();
            fields.put("step", step.getKey());
            if (event.equals("admin_step")) {
                fields.put("unsupported", null);
            }
            long started = System.nanoTime();
            try {
                fields.put("result", step.getValue().run());
                fields.put("error", null);
            } catch (ExecutionException | KafkaException e) {
                Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
                Errors error = Errors.forException(cause);
                if (error == Errors.UNKNOWN_SERVER_ERROR && !(cause instanceof org.apache.kafka.common.errors.UnknownServerException)) {
                    throw e;  // not a broker error: the driver fails
                }
                fields.put("result", null);
                fields.put("error", error.name());
            }
            fields.put("seconds", (System.nanoTime() - started) / 1e9);
            emit(event, fields);
        }
    }

    /** producer_byte_rate = count on client-id client_id, read back; an invalid value refused. */
    private void quotas() throws Exception {
        ClientQuotaEntity client = new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, command.clientId));
        ClientQuotaEntity someUser = new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, "someone"));
        try (Admin admin = Admin.create(base())) {
            Map<String, AdminStep> steps = new java.util.LinkedHashMap<>();
            steps.put("alter", () -> alterQuota(admin, client, "producer_byte_rate", (double) command.count));
            steps.put("describe", () -> describedQuotas(admin, ClientQuotaFilter.containsOnly(
                List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.CLIENT_ID, command.clientId)))));
            steps.put("alter_invalid", () -> alterQuota(admin, someUser, "producer_byte_rate", 1.5));
            steps.put("describe_default_user", () -> describedQuotas(admin, ClientQuotaFilter.containsOnly(
                List.of(ClientQuotaFilterComponent.ofDefaultEntity(ClientQuotaEntity.USER)))));
            runSteps("quota_step", steps);
        }
    }

    private Object alterQuota(Admin admin, ClientQuotaEntity entity, String key, double value) throws Exception {
        admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity, List.of(
            new ClientQuotaAlteration.Op(key, value))))).all().get(timeoutMs(), TimeUnit.MILLISECONDS);
        return null;
    }

    private Object describedQuotas(Admin admin, ClientQuotaFilter filter) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        admin.describeClientQuotas(filter).entities().get(timeoutMs(), TimeUnit.MILLISECONDS).forEach(
            (entity, values) -> out.put(new TreeMap<>(entity.entries()).toString().replaceAll("[{}]", ""),
                new TreeMap<>(values)));
        return out;
    }

    /** describeFeatures, then updateFeatures of feature `topic` to level `count` in its steps. */
    private void features() throws Exception {
        String feature = command.topic;
        short level = (short) command.count;
        try (Admin admin = Admin.create(base())) {
            Map<String, AdminStep> steps = new java.util.LinkedHashMap<>();
            steps.put("describe", () -> describedFeatures(admin));
            steps.put("upgrade_to_lower", () -> updateFeature(admin, feature, level,
                FeatureUpdate.UpgradeType.UPGRADE, false));
            steps.put("validate_only", () -> updateFeature(admin, feature, level,
                FeatureUpdate.UpgradeType.SAFE_DOWNGRADE, true));
            steps.put("describe_unchanged", () -> describedFeatures(admin));
            steps.put("safe_downgrade", () -> updateFeature(admin, feature, level,
                FeatureUpdate.UpgradeType.SAFE_DOWNGRADE, false));
            steps.put("describe_changed", () -> describedFeatures(admin));
            steps.put("unsupported_level", () -> updateFeature(admin, feature, (short) 99,
                FeatureUpdate.UpgradeType.UPGRADE, false));
            runSteps("feature_step", steps);
        }
    }

    private Object updateFeature(Admin admin, String feature, short level, FeatureUpdate.UpgradeType type,
                                 boolean validateOnly) throws Exception {
        admin.updateFeatures(Map.of(feature, new FeatureUpdate(level, type)),
            new UpdateFeaturesOptions().validateOnly(validateOnly)).all().get(timeoutMs(), TimeUnit.MILLISECONDS);
        return null;
    }

    private Object describedFeatures(Admin admin) throws Exception {
        FeatureMetadata metadata = admin.describeFeatures().featureMetadata().get(timeoutMs(), TimeUnit.MILLISECONDS);
        Map<String, Object> finalized = new TreeMap<>();
        metadata.finalizedFeatures().forEach((name, range) -> finalized.put(name,
            List.of((int) range.minVersionLevel(), (int) range.maxVersionLevel())));
        Map<String, Object> supported = new TreeMap<>();
        metadata.supportedFeatures().forEach((name, range) -> supported.put(name,
            List.of((int) range.minVersion(), (int) range.maxVersion())));
        Map<String, Object> out = new TreeMap<>();
        out.put("finalized", finalized);
        out.put("supported", supported);
        out.put("epoch", metadata.finalizedFeaturesEpoch().orElse(-1L));
        return out;
    }

    private static AclBinding acl(ResourceType type, String name, PatternType pattern, String principal,
                                  AclOperation operation) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
            new AccessControlEntry(principal, "*", operation, AclPermissionType.ALLOW));
    }

    /** Bindings as sorted "TYPE:PATTERN:name:principal:OPERATION:PERMISSION" lines. */
    private static List<String> describedAcls(Collection<AclBinding> bindings) {
        TreeSet<String> lines = new TreeSet<>();
        for (AclBinding b : bindings) {
            lines.add(String.join(":", b.pattern().resourceType().name(), b.pattern().patternType().name(),
                b.pattern().name(), b.entry().principal(), b.entry().operation().name(),
                b.entry().permissionType().name()));
        }
        return new ArrayList<>(lines);
    }

    private Object produceOne(String topic) throws Exception {
        Properties props = base();
        props.put("key.serializer", StringSerializer.class.getName());
        props.put("value.serializer", StringSerializer.class.getName());
        props.put("max.block.ms", String.valueOf(timeoutMs()));
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            return producer.send(new ProducerRecord<>(topic, "k", "v")).get(timeoutMs(), TimeUnit.MILLISECONDS).offset();
        }
    }

    private Object consumeOne(String group, String topic) {
        Properties props = base();
        props.put("group.id", group);
        props.put("auto.offset.reset", "earliest");
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + timeoutMs();
            while (System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    return record.value();
                }
            }
            return null;
        }
    }

    @FunctionalInterface
    private interface AdminStep {
        Object run() throws Exception;
    }

    private Map<String, Object> labelled(Map<String, ?> fields) {
        Map<String, Object> all = new HashMap<>(label);
        all.putAll(fields);
        return all;
    }

    private void reportAssignment(KafkaConsumer<String, String> consumer, TreeSet<Integer> owned) {
        Map<String, Object> fields = new HashMap<>(label);
        fields.put("partitions", new ArrayList<>(owned));
        fields.put("generation", consumer.groupMetadata().generationId());
        emit("assignment", fields);
    }

    private long timeoutMs() {
        return (long) (command.timeoutS * 1000);
    }

    static synchronized void emit(String event, Map<String, ?> fields) {
        StringBuilder out = new StringBuilder("{\"event\":").append(FlatJson.quote(event));
        out.append(",\"ts\":").append(System.currentTimeMillis() / 1000.0);
        fields.forEach((name, value) -> out.append(',').append(FlatJson.quote(name)).append(':')
            .append(FlatJson.write(value)));
        System.out.println(out.append('}'));
        System.out.flush();
    }

    /** The command fields this driver uses (see compat/schema.py). */
    private static final class Command {
        final String op;
        final String bootstrap;
        final String topic;
        final int partitions;
        final int count;
        final int keyCount;
        final String group;
        final double timeoutS;
        final String assignor;
        final int sessionTimeoutMs;
        final String groupInstanceId;
        final String clientId;
        final String otherGroup;
        final int groups;
        final int members;
        final String groupProtocol;
        final String topicPattern;
        final String isolation;
        final String output;
        final String transactionalId;
        final Map<String, Object> security;
        final String user;
        final String password;
        final String mechanism;
        private final Map<String, Object> json;

        Command(Map<String, Object> json) {
            this.json = json;
            op = (String) json.get("op");
            bootstrap = (String) json.get("bootstrap");
            topic = (String) json.get("topic");
            partitions = ((Number) json.getOrDefault("partitions", 3)).intValue();
            count = ((Number) json.getOrDefault("count", 0)).intValue();
            keyCount = ((Number) json.getOrDefault("key_count", 50)).intValue();
            group = (String) json.getOrDefault("group", "");
            timeoutS = ((Number) json.getOrDefault("timeout_s", 30)).doubleValue();
            assignor = (String) json.getOrDefault("assignor", "range");
            sessionTimeoutMs = ((Number) json.getOrDefault("session_timeout_ms", 6000)).intValue();
            groupInstanceId = (String) json.get("group_instance_id");
            clientId = (String) json.getOrDefault("client_id", "compat");
            otherGroup = (String) json.getOrDefault("other_group", "");
            groups = ((Number) json.getOrDefault("groups", 1)).intValue();
            members = ((Number) json.getOrDefault("members", 1)).intValue();
            groupProtocol = (String) json.getOrDefault("group_protocol", "classic");
            topicPattern = (String) json.get("topic_pattern");
            isolation = (String) json.getOrDefault("isolation", "read_uncommitted");
            output = (String) json.getOrDefault("output", "");
            transactionalId = (String) json.getOrDefault("transactional_id", "");
            @SuppressWarnings("unchecked")
            Map<String, Object> given = (Map<String, Object>) json.getOrDefault("security", Map.of());
            security = given;
            user = (String) json.getOrDefault("user", "");
            password = (String) json.getOrDefault("password", "");
            mechanism = (String) json.getOrDefault("mechanism", "SCRAM-SHA-256");
        }

        /** This command as one swarm member's: its own group and client id. */
        Command forMember(String group, String clientId) {
            Map<String, Object> copy = new HashMap<>(json);
            copy.put("group", group);
            copy.put("client_id", clientId);
            return new Command(copy);
        }
    }
}
