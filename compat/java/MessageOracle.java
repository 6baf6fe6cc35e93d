// The outside oracle for kafka-shim's message declarations: kafka-clients' own generated
// message classes (from Kafka's message JSON) encode what a test describes. Reads lines of
// {"name": "ShareFetchRequest", "version": 1, "data": {camelCase fields, as Kafka's
// JsonConverters read them}} from stdin and prints each one's encoded body in hex.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.MessageUtil;

public final class MessageOracle {
    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            JsonNode command = mapper.readTree(line);
            String name = command.get("name").asText();
            short version = (short) command.get("version").asInt();
            Class<?> converter = Class.forName("org.apache.kafka.common.message." + name + "DataJsonConverter");
            Method read = converter.getMethod("read", JsonNode.class, short.class);
            Message message = (Message) read.invoke(null, command.get("data"), version);
            ByteBuffer buffer = MessageUtil.toByteBufferAccessor(message, version).buffer();
            StringBuilder hex = new StringBuilder();
            while (buffer.hasRemaining()) {
                hex.append(String.format("%02x", buffer.get()));
            }
            System.out.println(hex);
        }
    }
}
