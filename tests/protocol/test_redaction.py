"""What recordings hide (protocol.redaction), read from the declarations: the schema's
`sensitive` fields and the config keys' types, as Kafka's request logger decides."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.messages import APIS
from kafka_shim.protocol.redaction import HIDDEN, holds_sensitive, redacted
from kafka_shim.protocol.settings import config_value_hidden

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP, UNKNOWN = 2, 4, 8, 16, 32, 99


@pytest.mark.parametrize(
    ("resource_type", "name", "hidden"),
    [
        (BROKER, "ssl.key.password", True),  # PASSWORD in Kafka's ConfigDef
        (BROKER, "sasl.jaas.config", True),
        (BROKER, "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config", True),  # its key's
        (BROKER, "listener.name.sasl_ssl.ssl.keystore.password", True),
        (BROKER, "listener.name.sasl_ssl.ssl.client.auth", False),
        (BROKER, "log.cleaner.threads", False),
        (BROKER, "no.such.key", True),  # a type Kafka cannot tell: hidden to be safe
        (TOPIC, "retention.ms", False),
        (TOPIC, "ssl.key.password", True),  # not a topic config: unknown, hidden
        (BROKER_LOGGER, "kafka.server.ReplicaManager", False),
        (CLIENT_METRICS, "metrics", False),
        (GROUP, "share.session.timeout.ms", False),
        (UNKNOWN, "anything", True),
    ],
)
def test_config_values_hidden_as_kafkas_request_logger_hides_them(
    resource_type: int, name: str, hidden: bool
) -> None:
    assert config_value_hidden(resource_type, name) is hidden


def test_only_messages_declaring_sensitive_fields_are_touched() -> None:
    sensitive = {api.name for api in APIS.values() if holds_sensitive(api.request)}
    assert sensitive == {
        "SaslAuthenticate",
        "AlterUserScramCredentials",
        "AlterConfigs",
        "IncrementalAlterConfigs",
        "CreateTopics",
        "RenewDelegationToken",  # a token's HMAC is its password
        "ExpireDelegationToken",
    }
    answers = {api.name for api in APIS.values() if holds_sensitive(api.response)}
    assert {"SaslAuthenticate", "CreateDelegationToken", "DescribeDelegationToken"} <= answers
    produce = APIS[0].request.parse(APIS[0].request.build({"acks": -1, "topic_data": []}, 9), 9)
    assert redacted(APIS[0].request, produce) is produce


def test_a_body_is_copied_where_hidden_and_the_handlers_copy_is_unchanged() -> None:
    alter = APIS[44].request  # IncrementalAlterConfigs
    body = {
        "resources": [
            {
                "resource_type": BROKER,
                "resource_name": "0",
                "configs": [
                    {"name": "ssl.key.password", "config_operation": 0, "value": "secret"},
                    {"name": "log.cleaner.threads", "config_operation": 0, "value": "2"},
                    {"name": "sasl.jaas.config", "config_operation": 3, "value": None},
                ],
            },
            {"resource_type": TOPIC, "resource_name": "t", "configs": []},
        ],
        "validate_only": False,
    }
    parsed = alter.parse(alter.build(body, 1), 1)
    hidden = redacted(alter, parsed)
    values = [c["value"] for c in hidden["resources"][0]["configs"]]
    assert values == [HIDDEN, "2", None]
    assert parsed["resources"][0]["configs"][0]["value"] == "secret"
    assert hidden["resources"][1] is parsed["resources"][1]  # nothing hidden: not copied
