// KIP-932 share groups through kafka-clients' KafkaShareConsumer and Admin:
// `java -cp <classes>:<jars> ShareDriver '<command json>'`, one JSON event a line on stdout
// (KafkaDriver.emit), as the other drivers.
//
// op "consume": `members` share consumers (explicit acknowledgement) of `group` on `topic`,
// each on its own thread. A record's value says how it is acknowledged: "release-once..."
// RELEASE on its first delivery, ACCEPT after; "reject..." REJECT; "release-always..." RELEASE
// every time (the delivery-count limit archives it); anything else ACCEPT. Each record handled
// takes `handle_ms`; a poll acquires about `max_poll_records` (whole batches). Member `stall_member` (if >= 0) polls once, holds what it got without
// acknowledging for `stall_ms`, then closes. With `exit_after` > 0 the whole process exits
// without closing anything once that many records were accepted and one more poll acquired
// records (a crash with records in flight). It stops when `expect` records were accepted or
// rejected and nothing came for `quiet_ms`, or after `timeout_s`.
//
// op "share_member" (the compat matrix's, compat/schema.py): one explicit member of `group` on
// `topic` that releases at its first delivery a record whose value is a multiple of
// SHARE_RELEASE_EVERY and accepts the rest, commits after each poll, emits "share_delivery"
// {value, count, ack} per record, and on a "close" line on stdin (or EOF) closes and emits "closed".
//
// op "admin": `actions`, comma-separated, in order: describe, offsets, list, reset (alter the
// group's partition 0 start offset to `offset`), delete_offsets, delete_group, each emitting
// what the Admin client answered.

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

public final class ShareDriver {
    private final Map<String, Object> command;
    private final AtomicInteger finished = new AtomicInteger();
    private final AtomicInteger accepted = new AtomicInteger();
    private final AtomicLong lastDelivery = new AtomicLong(System.currentTimeMillis());
    private final Set<Long> seen = ConcurrentHashMap.newKeySet();

    private ShareDriver(Map<String, Object> command) {
        this.command = command;
    }

    public static void main(String[] args) throws Exception {
        Map<String, Object> command = FlatJson.parse(args[0]);
        KafkaDriver.emit("ready", Map.of("op", command.get("op")));
        ShareDriver driver = new ShareDriver(command);
        try {
            switch ((String) command.get("op")) {
                case "consume" -> driver.consume();
                case "admin" -> driver.admin();
                case "share_member" -> driver.shareMember();
                default -> throw new IllegalArgumentException("unknown op " + command.get("op"));
            }
        } catch (Exception e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            KafkaDriver.emit("error", Map.of("message", cause.getClass().getSimpleName() + ": " + cause.getMessage()));
            System.exit(1);
        }
        System.exit(0);
    }

    private String text(String name) {
        return (String) command.get(name);
    }

    private long number(String name, long otherwise) {
        Object value = command.get(name);
        return value == null ? otherwise : ((Number) value).longValue();
    }

    private Properties props(boolean implicit) {
        Properties props = new Properties();
        props.put("bootstrap.servers", text("bootstrap"));
        props.put("group.id", text("group"));
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        props.put("share.acknowledgement.mode", implicit ? "implicit" : "explicit");
        props.put("max.poll.records", String.valueOf(number("max_poll_records", 500)));
        if (command.get("fetch_max_bytes") != null) {
            props.put("fetch.max.bytes", String.valueOf(number("fetch_max_bytes", 0)));
        }
        return props;
    }

    private List<String> subscription() {
        String names = command.get("subscribe") != null ? text("subscribe") : text("topic");
        return List.of(names.split(","));
    }

    private static void acked(int member, Map<TopicIdPartition, Set<Long>> offsets, Exception error) {
        Map<String, Object> byPartition = new TreeMap<>();
        offsets.forEach((tp, acked) -> byPartition.put(tp.topicPartition().toString(), new ArrayList<>(acked)));
        Map<String, Object> fields = new TreeMap<>();
        fields.put("member", member);
        fields.put("offsets", byPartition);
        fields.put("error", error == null ? "" : error.getClass().getSimpleName() + ": " + error.getMessage());
        KafkaDriver.emit("acked", fields);
    }

    private void consume() throws InterruptedException {
        int members = (int) number("members", 1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < members; i++) {
            int member = i;
            Thread thread = new Thread(() -> runMember(member), "member-" + i);
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        KafkaDriver.emit("done", Map.of("finished", finished.get()));
    }

    private boolean over(long deadline) {
        long expect = number("expect", Long.MAX_VALUE);
        long quiet = number("quiet_ms", 500);
        boolean settled = finished.get() >= expect && System.currentTimeMillis() - lastDelivery.get() > quiet;
        return settled || System.currentTimeMillis() > deadline;
    }

    private void runMember(int member) {
        long deadline = System.currentTimeMillis() + number("timeout_s", 30) * 1000;
        long exitAfter = number("exit_after", 0);
        boolean implicit = member < number("implicit_members", 0);
        boolean commitOnClose = Boolean.TRUE.equals(command.get("commit_on_close"));
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props(implicit))) {
            consumer.setAcknowledgementCommitCallback((offsets, error) -> acked(member, offsets, error));
            consumer.subscribe(subscription());
            boolean stalling = member == number("stall_member", -1);
            while (!over(deadline)) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(100));
                if (!records.isEmpty()) {
                    KafkaDriver.emit("poll", Map.of("member", member, "count", records.count()));
                }
                if (exitAfter > 0 && accepted.get() >= exitAfter && !records.isEmpty()) {
                    KafkaDriver.emit("crash", Map.of("member", member, "in_flight", records.count()));
                    Runtime.getRuntime().halt(0);  // no close, no acknowledgement: records stay acquired
                }
                for (ConsumerRecord<String, String> record : records) {
                    lastDelivery.set(System.currentTimeMillis());
                    int count = record.deliveryCount().map(Short::intValue).orElse(-1);
                    AcknowledgeType ack = stalling ? null
                        : implicit ? AcknowledgeType.ACCEPT : acknowledgement(record.value(), count);
                    Map<String, Object> fields = new TreeMap<>();
                    fields.put("member", member);
                    fields.put("partition", record.partition());
                    fields.put("offset", record.offset());
                    fields.put("value", record.value());
                    fields.put("count", count);
                    fields.put("ack", ack == null ? "none" : ack.toString());
                    KafkaDriver.emit("delivery", fields);
                    if (ack == null) {
                        continue;
                    }
                    Thread.sleep(number("handle_ms", 0));
                    if (!implicit) {
                        consumer.acknowledge(record, ack);
                    }
                    if (ack == AcknowledgeType.ACCEPT || ack == AcknowledgeType.REJECT) {
                        finished.incrementAndGet();
                    }
                    if (ack == AcknowledgeType.ACCEPT) {
                        accepted.incrementAndGet();
                    }
                }
                if (stalling && !records.isEmpty()) {
                    Thread.sleep(number("stall_ms", 0));
                    KafkaDriver.emit("stalled", Map.of("member", member, "held", records.count()));
                    return;  // closes: its locks have long expired
                }
                if (!commitOnClose) {
                    consumer.commitSync();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // compat/schema.py SHARE_RELEASE_EVERY
    private static final int SHARE_RELEASE_EVERY = 10;

    private void shareMember() throws Exception {
        AtomicInteger closing = new AtomicInteger();
        Thread watcher = new Thread(() -> {
            try (var lines = new java.io.BufferedReader(new java.io.InputStreamReader(System.in))) {
                String line;
                while ((line = lines.readLine()) != null && !line.strip().equals("close")) {
                    // wait for "close" or EOF
                }
            } catch (java.io.IOException e) {
                // stdin gone: close as for EOF
            }
            closing.set(1);
        }, "stdin-close");
        watcher.setDaemon(true);
        watcher.start();
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props(false))) {
            consumer.subscribe(List.of(text("topic")));
            while (closing.get() == 0) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    int count = record.deliveryCount().map(Short::intValue).orElse(0);
                    String value = record.value();
                    boolean release = value.chars().allMatch(Character::isDigit) && !value.isEmpty()
                        && Long.parseLong(value) % SHARE_RELEASE_EVERY == 0 && count <= 1;
                    consumer.acknowledge(record, release ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT);
                    KafkaDriver.emit("share_delivery", Map.of(
                        "value", value, "count", count, "ack", release ? "release" : "accept"));
                }
                consumer.commitSync();
            }
        }
        KafkaDriver.emit("closed", Map.of());
    }

    private static AcknowledgeType acknowledgement(String value, int count) {
        if (value.startsWith("release-once")) {
            return count <= 1 ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT;
        }
        if (value.startsWith("reject")) {
            return AcknowledgeType.REJECT;
        }
        if (value.startsWith("release-always")) {
            return AcknowledgeType.RELEASE;
        }
        return AcknowledgeType.ACCEPT;
    }

    private void admin() throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", text("bootstrap"));
        String group = text("group");
        TopicPartition partition = new TopicPartition(text("topic"), 0);
        try (Admin admin = Admin.create(props)) {
            for (String action : text("actions").split(",")) {
                switch (action) {
                    case "describe" -> {
                        ShareGroupDescription d = admin.describeShareGroups(List.of(group)).all().get().get(group);
                        List<Object> members = new ArrayList<>();
                        d.members().forEach(m -> members.add(Map.of(
                            "member_id", m.consumerId(),
                            "partitions", m.assignment().topicPartitions().size())));
                        KafkaDriver.emit("described", Map.of(
                            "state", d.groupState().toString(), "members", members,
                            "epoch", d.groupEpoch()));
                    }
                    case "offsets" -> {
                        var offsets = admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                            .partitionsToOffsetInfo(group).get();
                        Map<String, Object> found = new TreeMap<>();
                        offsets.forEach((tp, o) -> found.put(tp.toString(), o == null ? Map.of() : Map.of(
                            "start", o.startOffset(), "lag", o.lag().orElse(-1L))));
                        KafkaDriver.emit("offsets", Map.of("offsets", found));
                    }
                    case "list" -> {
                        List<Object> groups = new ArrayList<>();
                        for (GroupListing g : admin.listGroups(ListGroupsOptions.forShareGroups()).all().get()) {
                            groups.add(Map.of("group", g.groupId(), "type", g.type().map(Object::toString).orElse("")));
                        }
                        KafkaDriver.emit("listed", Map.of("groups", groups));
                    }
                    case "reset" -> {
                        admin.alterShareGroupOffsets(group, Map.of(partition, number("offset", 0))).all().get();
                        KafkaDriver.emit("reset", Map.of("offset", number("offset", 0)));
                    }
                    case "delete_offsets" -> {
                        admin.deleteShareGroupOffsets(group, Set.of(text("topic"))).all().get();
                        KafkaDriver.emit("offsets_deleted", Map.of());
                    }
                    case "delete_group" -> {
                        admin.deleteShareGroups(List.of(group)).all().get();
                        KafkaDriver.emit("group_deleted", Map.of());
                    }
                    default -> throw new IllegalArgumentException("unknown action " + action);
                }
            }
        }
    }
}
