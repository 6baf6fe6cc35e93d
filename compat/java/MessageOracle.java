// The outside oracle for kafka-shim's message declarations: kafka-clients' own generated
// message classes (from Kafka's message JSON) encode and decode what a test describes. Reads
// lines from stdin, one command each, and prints one line per command:
//   {"name": "ShareFetchRequest", "version": 1, "data": {camelCase fields, as Kafka's
//    JsonConverters read them}}  ->  the body kafka-clients encodes, in hex;
//   {"name": "ShareFetchRequest", "version": 1, "hex": "..."}  ->  kafka-clients reads the
//    body and encodes what it read again, in hex (a body it cannot read whole is an error).
//   {"apiRanges": true}  ->  [[api key, oldest version, newest stable version], ...] of every
//    API of the release (ApiKeys: what a broker of it advertises without unstable versions).
// A command kafka-clients refuses prints "!" and the reason, so one bad case fails alone.
// It compiles unchanged against kafka-clients 3.9 to 4.3 (compat/java_build.py builds one per
// release): only the Message interface, ApiKeys and the generated classes are used.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;

public final class MessageOracle {
    private static final String PACKAGE = "org.apache.kafka.common.message.";

    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            JsonNode command = mapper.readTree(line);
            if (command.has("apiRanges")) {
                System.out.println(mapper.writeValueAsString(apiRanges()));
                continue;
            }
            String name = command.get("name").asText();
            short version = (short) command.get("version").asInt();
            String answer;
            try {
                Message message = command.has("hex") ? read(name, version, command.get("hex").asText())
                        : fromJson(name, version, command.get("data"));
                answer = hex(encode(message, version));
            } catch (InvocationTargetException e) {
                answer = "!" + e.getCause();
            } catch (RuntimeException e) {
                answer = "!" + e;
            }
            System.out.println(answer);
        }
    }

    private static List<List<Short>> apiRanges() {
        List<List<Short>> ranges = new ArrayList<>();
        for (ApiKeys api : ApiKeys.values()) {
            ranges.add(List.of(api.id, api.oldestVersion(), api.latestVersion(false)));
        }
        return ranges;
    }

    // Messages Kafka renamed, by their newest name: a release from before the rename has the
    // old one (KIP-1142: ListClientMetricsResources became ListConfigResources in 4.1).
    private static final Map<String, String> FORMER_NAMES = Map.of(
            "ListConfigResourcesRequest", "ListClientMetricsResourcesRequest",
            "ListConfigResourcesResponse", "ListClientMetricsResourcesResponse");

    // And their fields renamed with them (newest name -> former name), for the JSON a test sends.
    private static final Map<String, String> FORMER_FIELDS = Map.of(
            "configResources", "clientMetricsResources",
            "resourceName", "name");

    private static JsonNode formerFields(JsonNode node) {
        if (node.isArray()) {
            ArrayNode renamed = JsonNodeFactory.instance.arrayNode();
            node.forEach(item -> renamed.add(formerFields(item)));
            return renamed;
        }
        if (!node.isObject()) {
            return node;
        }
        ObjectNode renamed = JsonNodeFactory.instance.objectNode();
        node.fields().forEachRemaining(field ->
                renamed.set(FORMER_FIELDS.getOrDefault(field.getKey(), field.getKey()), formerFields(field.getValue())));
        return renamed;
    }

    private static boolean renamedIn(String name) {
        try {
            Class.forName(PACKAGE + name + "Data");
            return false;
        } catch (ClassNotFoundException e) {
            return FORMER_NAMES.containsKey(name);
        }
    }

    private static Class<?> messageClass(String name, String suffix) throws ClassNotFoundException {
        try {
            return Class.forName(PACKAGE + name + suffix);
        } catch (ClassNotFoundException e) {
            String former = FORMER_NAMES.get(name);
            if (former == null) {
                throw e;
            }
            return Class.forName(PACKAGE + former + suffix);
        }
    }

    private static Message fromJson(String name, short version, JsonNode data) throws Exception {
        Method read = messageClass(name, "DataJsonConverter").getMethod("read", JsonNode.class, short.class);
        return (Message) read.invoke(null, renamedIn(name) ? formerFields(data) : data, version);
    }

    private static Message read(String name, short version, String body) throws Exception {
        ByteBuffer buffer = ByteBuffer.wrap(unhex(body));
        Message message = (Message) messageClass(name, "Data")
                .getConstructor(Readable.class, short.class)
                .newInstance(new ByteBufferAccessor(buffer), version);
        if (buffer.hasRemaining()) {
            throw new IllegalStateException(buffer.remaining() + " bytes left unread");
        }
        return message;
    }

    // MessageUtil.toByteBufferAccessor's steps (it came after 3.9).
    private static ByteBuffer encode(Message message, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer buffer = ByteBuffer.allocate(message.size(cache, version));
        message.write(new ByteBufferAccessor(buffer), cache, version);
        buffer.flip();
        return buffer;
    }

    private static String hex(ByteBuffer buffer) {
        StringBuilder hex = new StringBuilder();
        while (buffer.hasRemaining()) {
            hex.append(String.format("%02x", buffer.get()));
        }
        return hex.toString();
    }

    private static byte[] unhex(String hex) {
        byte[] bytes = new byte[hex.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return bytes;
    }
}
