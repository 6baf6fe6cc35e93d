import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A load generator on the Java client (bench/native_load.py runs it), timed inside the JVM so
 * that start-up is not counted.
 *
 * <pre>
 * PerfDriver produce BOOTSTRAP TOPIC PRODUCERS RECORD_BYTES RECORDS_PER_PRODUCER
 * PerfDriver consume BOOTSTRAP TOPIC RECORDS
 * </pre>
 *
 * produce: PRODUCERS KafkaProducers (acks=all, the client's other defaults), one thread
 * each, each sending its records to partition (its index mod the topic's partitions); the
 * clock stops when every producer has flushed and every send was acknowledged. consume: one
 * KafkaConsumer assigned every partition from the start, until RECORDS have arrived. Prints
 * one line: "records BYTES SECONDS".
 */
public final class PerfDriver {
    private static final long CONSUME_TIMEOUT_MS = 120_000;

    private PerfDriver() {
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "produce" -> produce(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                    Integer.parseInt(args[5]));
            case "consume" -> consume(args[1], args[2], Long.parseLong(args[3]));
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
        }
        System.exit(0);
    }

    private static void produce(String bootstrap, String topic, int producers, int recordBytes, int records)
            throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        List<KafkaProducer<byte[], byte[]>> clients = new ArrayList<>();
        for (int i = 0; i < producers; i++) {
            KafkaProducer<byte[], byte[]> client = new KafkaProducer<>(props);
            client.partitionsFor(topic);  // metadata before the clock starts
            clients.add(client);
        }
        int partitions = clients.get(0).partitionsFor(topic).size();
        byte[] value = new byte[recordBytes];
        AtomicReference<Exception> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        long started = System.nanoTime();
        for (int i = 0; i < producers; i++) {
            KafkaProducer<byte[], byte[]> client = clients.get(i);
            int partition = i % partitions;
            Thread thread = new Thread(() -> {
                for (int n = 0; n < records; n++) {
                    client.send(new ProducerRecord<>(topic, partition, null, value), (metadata, error) -> {
                        if (error != null) {
                            failure.compareAndSet(null, error);
                        }
                    });
                }
                client.flush();
            });
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) {
            thread.join();
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        for (KafkaProducer<byte[], byte[]> client : clients) {
            client.close();
        }
        if (failure.get() != null) {
            throw failure.get();
        }
        System.out.printf("records %d %d %.6f%n", (long) producers * records, (long) producers * records * recordBytes,
                seconds);
    }

    private static void consume(String bootstrap, String topic, long records) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> assigned = new ArrayList<>();
            for (PartitionInfo info : consumer.partitionsFor(topic)) {
                assigned.add(new TopicPartition(topic, info.partition()));
            }
            consumer.assign(assigned);
            consumer.seekToBeginning(assigned);
            long received = 0;
            long bytes = 0;
            long started = System.nanoTime();
            long deadline = System.currentTimeMillis() + CONSUME_TIMEOUT_MS;
            while (received < records) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("consumed " + received + " of " + records + " records");
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(java.time.Duration.ofMillis(500))) {
                    received++;
                    bytes += record.serializedValueSize();
                }
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            System.out.printf("records %d %d %.6f%n", received, bytes, seconds);
        }
    }
}
