// What Kafka's admin tools do over the Java Admin client, for the APIs kafka-metadata-quorum.sh,
// kafka-delegation-tokens.sh and kafka-configs.sh --entity-type broker-loggers use (their
// scripts are not installed; kafka-clients' Admin is what they call). One command, as JSON in
// argv[0]: {"bootstrap": "host:port", "user": "alice", "password": "..."}; it logs in with
// SCRAM-SHA-256, then prints one JSON line per step: the step's result or the Kafka error it
// failed with. Steps: describe the quorum; create a token (renewer bob), renew it, describe it;
// log in with the token (ScramLoginModule tokenauth="true") and list topics as its owner, then
// ask for a token over that login (refused); describe the broker's loggers, set one, read it
// back, delete it; expire the token and describe again.

import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.DescribeDelegationTokenOptions;
import org.apache.kafka.clients.admin.ExpireDelegationTokenOptions;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.RenewDelegationTokenOptions;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.DelegationToken;
import org.apache.kafka.common.security.token.delegation.TokenInformation;

public final class AdminToolsDriver {
    private static final long TIMEOUT_MS = 15_000;
    private static final String SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule";

    interface Step {
        Object run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        Map<String, Object> command = FlatJson.parse(args[0]);
        String bootstrap = (String) command.get("bootstrap");
        String user = (String) command.get("user");
        String password = (String) command.get("password");
        try (Admin admin = Admin.create(login(bootstrap, user, password, false))) {
            run(admin, bootstrap);
        }
        System.exit(0);
    }

    private static void run(Admin admin, String bootstrap) throws Exception {
        step("describe_quorum", () -> quorum(admin.describeMetadataQuorum().quorumInfo().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)));
        CreateDelegationTokenOptions create = new CreateDelegationTokenOptions()
            .renewers(List.of(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "bob")));
        DelegationToken[] token = new DelegationToken[1];
        step("create_token", () -> {
            token[0] = admin.createDelegationToken(create).delegationToken().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            return token(token[0].tokenInfo());
        });
        if (token[0] == null) {
            return;
        }
        byte[] hmac = token[0].hmac();
        step("renew_token", () -> admin.renewDelegationToken(hmac, new RenewDelegationTokenOptions().renewTimePeriodMs(60_000))
            .expiryTimestamp().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
        step("describe_tokens", () -> tokens(admin.describeDelegationToken(new DescribeDelegationTokenOptions())
            .delegationTokens().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)));
        String tokenPassword = Base64.getEncoder().encodeToString(hmac);
        try (Admin asToken = Admin.create(login(bootstrap, token[0].tokenInfo().tokenId(), tokenPassword, true))) {
            step("token_login_lists_topics", () -> new ArrayList<>(asToken.listTopics().names().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)));
            step("token_login_creates_token", () -> token(asToken.createDelegationToken().delegationToken()
                .get(TIMEOUT_MS, TimeUnit.MILLISECONDS).tokenInfo()));
        }
        loggers(admin);
        step("expire_token", () -> admin.expireDelegationToken(hmac, new ExpireDelegationTokenOptions().expiryTimePeriodMs(-1))
            .expiryTimestamp().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
        step("describe_after_expire", () -> tokens(admin.describeDelegationToken().delegationTokens()
            .get(TIMEOUT_MS, TimeUnit.MILLISECONDS)));
    }

    private static void loggers(Admin admin) throws Exception {
        ConfigResource loggers = new ConfigResource(ConfigResource.Type.BROKER_LOGGER, "0");
        String name = "kafka.server.KafkaApis";
        step("describe_loggers", () -> entries(admin, loggers));
        step("set_logger", () -> alter(admin, loggers, new AlterConfigOp(new ConfigEntry(name, "DEBUG"), AlterConfigOp.OpType.SET)));
        step("described_after_set", () -> entries(admin, loggers).get(name));
        step("delete_logger", () -> alter(admin, loggers, new AlterConfigOp(new ConfigEntry(name, ""), AlterConfigOp.OpType.DELETE)));
        step("described_after_delete", () -> entries(admin, loggers).get(name));
        step("set_unknown_logger", () -> alter(admin, loggers,
            new AlterConfigOp(new ConfigEntry("kafka.no.such.Logger", "INFO"), AlterConfigOp.OpType.SET)));
    }

    private static Map<String, String> entries(Admin admin, ConfigResource resource) throws Exception {
        Config config = admin.describeConfigs(List.of(resource)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).get(resource);
        Map<String, String> levels = new LinkedHashMap<>();
        for (ConfigEntry entry : config.entries()) {
            levels.put(entry.name(), entry.value() + " " + entry.source());
        }
        return levels;
    }

    private static Object alter(Admin admin, ConfigResource resource, AlterConfigOp op) throws Exception {
        admin.incrementalAlterConfigs(Map.of(resource, List.of(op))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        return "ok";
    }

    private static Properties login(String bootstrap, String user, String password, boolean token) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("security.protocol", "SASL_PLAINTEXT");
        props.put("sasl.mechanism", "SCRAM-SHA-256");
        props.put("sasl.jaas.config", SCRAM + " required username=" + FlatJson.quote(user) + " password="
            + FlatJson.quote(password) + (token ? " tokenauth=\"true\"" : "") + ";");
        props.put("request.timeout.ms", String.valueOf(TIMEOUT_MS));
        props.put("default.api.timeout.ms", String.valueOf(TIMEOUT_MS));
        return props;
    }

    private static Map<String, Object> quorum(QuorumInfo info) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("leader_id", info.leaderId());
        out.put("leader_epoch", info.leaderEpoch());
        out.put("high_watermark", info.highWatermark());
        List<Object> voters = new ArrayList<>();
        for (QuorumInfo.ReplicaState voter : info.voters()) {
            voters.add(List.of(voter.replicaId(), voter.logEndOffset()));
        }
        out.put("voters", voters);
        out.put("observers", info.observers().size());
        List<Object> nodes = new ArrayList<>();
        for (QuorumInfo.Node node : info.nodes().values()) {
            nodes.add(List.of(node.nodeId(), node.endpoints().size()));
        }
        out.put("nodes", nodes);
        return out;
    }

    private static Map<String, Object> token(TokenInformation info) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("token_id", info.tokenId());
        out.put("owner", info.ownerAsString());
        out.put("requester", info.tokenRequester().toString());
        List<Object> renewers = new ArrayList<>(info.renewersAsString());
        out.put("renewers", renewers);
        out.put("lifetime_ms", info.maxTimestamp() - info.issueTimestamp());
        out.put("expires_in_ms", info.expiryTimestamp() - info.issueTimestamp());
        return out;
    }

    private static List<Object> tokens(Collection<DelegationToken> tokens) {
        List<Object> out = new ArrayList<>();
        for (DelegationToken token : tokens) {
            out.add(token(token.tokenInfo()));
        }
        return out;
    }

    private static void step(String name, Step step) throws Exception {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("step", name);
        try {
            fields.put("result", step.run());
            fields.put("error", null);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (!(cause instanceof ApiException)) {
                throw e;
            }
            fields.put("result", null);
            fields.put("error", Errors.forException(cause).name());
        }
        StringBuilder out = new StringBuilder("{");
        fields.forEach((key, value) -> out.append(out.length() > 1 ? "," : "").append(FlatJson.quote(key)).append(':')
            .append(FlatJson.write(value)));
        System.out.println(out.append('}'));
        System.out.flush();
    }
}
