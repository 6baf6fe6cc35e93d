"""Feature levels in ApiVersions and UpdateFeatures through the wire schemas (node.id 0): what a
single node of each emulated release reports, Kafka's validation messages, and a change that
really switches what the broker serves."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.update_features import SAFE_DOWNGRADE, UNSAFE_DOWNGRADE, UPGRADE
from kafka_shim.protocol.releases import TV2
from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.config.broker_config import BrokerConfig, apply_kafka_configs
from kafka_shim.storage.faults import FAULTS
from tests.helpers import Harness

API_VERSIONS, UPDATE_FEATURES, CONSUMER_GROUP_HEARTBEAT = 18, 57, 68
PRODUCE, END_TXN = 0, 26
INVALID = ErrorCode.INVALID_UPDATE_VERSION


def api_versions(h: Harness, version: int = 4) -> Any:
    return h.call(API_VERSIONS, version, {"client_software_name": "t", "client_software_version": "1"})


def finalized(h: Harness) -> dict[str, int]:
    return {f.name: f.max_version_level for f in api_versions(h).finalized_features}


def update(
    h: Harness,
    *updates: tuple[str, int, int],
    validate_only: bool = False,
    version: int = 1,
    principal: str = "User:ANONYMOUS",
) -> Any:
    request = {
        "timeout_ms": 1000,
        "feature_updates": [
            {
                "feature": f,
                "max_version_level": level,
                "upgrade_type": kind,
                "allow_downgrade": kind != UPGRADE,
            }
            for f, level, kind in updates
        ],
        "validate_only": validate_only,
    }
    return h.call(UPDATE_FEATURES, version, request, h.context(version, principal))


def results(response: Any) -> dict[str, tuple[int, str | None]]:
    assert response.error_code == ErrorCode.NONE
    return {r.feature: (r.error_code, r.error_message) for r in response.results}


def refusal(response: Any) -> tuple[int, str | None]:
    """A refused request's top-level answer: Kafka's KRaft controller lists no results then."""
    assert response.results == []
    return response.error_code, response.error_message


# What a fresh single-node KRaft cluster of each release reports: the newest production level
# of each feature (server-common's *Version.java LATEST_PRODUCTION at the release's tag; a
# feature whose newest level is 0 is not advertised) and metadata.version's levels (3.9-IV0 =
# 21, 4.0-IV3 = 25, 4.1-IV1 = 27, 4.2-IV1 = 29; KIP-896 dropped those below 3.3-IV3 = 7).
# kraft.version is 0 on a static quorum: not finalized. ELR is on for new 4.1+ clusters.
FEATURES_4 = {"kraft.version": (0, 1), "transaction.version": (0, 2), "group.version": (0, 1)} | {
    "eligible.leader.replicas.version": (0, 1)
}
FEATURES_BY_RELEASE = [
    ("3.9", {"metadata.version": (1, 21), "kraft.version": (0, 1)}, {"metadata.version": 21}),
    (
        "4.0",
        {"metadata.version": (7, 25), **FEATURES_4},
        {"metadata.version": 25, "transaction.version": 2, "group.version": 1},
    ),
    (
        "4.1",
        {"metadata.version": (7, 27), **FEATURES_4, "share.version": (0, 1)},
        {"metadata.version": 27, "transaction.version": 2, "group.version": 1}
        | {"eligible.leader.replicas.version": 1},  # share groups a preview: share.version 0
    ),
    (
        "4.2",
        {"metadata.version": (7, 29), **FEATURES_4, "share.version": (0, 1)},
        {"metadata.version": 29, "transaction.version": 2, "group.version": 1}
        | {"eligible.leader.replicas.version": 1, "share.version": 1},
    ),
]


@pytest.mark.parametrize(("release", "supported", "levels"), FEATURES_BY_RELEASE)
def test_api_versions_reports_the_features_of_the_emulated_release(
    release: str, supported: dict[str, tuple[int, int]], levels: dict[str, int]
) -> None:
    # 3.9's defaults (group.coordinator.rebalance.protocols=classic) leave its transaction and
    # group coordinators as they were; they are no features there.
    response = api_versions(Harness(emulate=release))
    assert {f.name: (f.min_version, f.max_version) for f in response.supported_features} == supported
    assert {f.name: (f.min_version_level, f.max_version_level) for f in response.finalized_features} == {
        name: (level, level) for name, level in levels.items()
    }


def test_before_v4_a_supported_minimum_of_0_reads_as_1() -> None:
    # KAFKA-17011
    v3 = api_versions(Harness(), 3)
    assert {f.name: f.min_version for f in v3.supported_features}["kraft.version"] == 1


def test_features_a_release_lacks_are_refused() -> None:
    h = Harness(emulate="3.9")
    assert refusal(update(h, ("transaction.version", 2, UPGRADE))) == (
        INVALID,
        "Invalid update version 2 for feature transaction.version. "
        "Local controller 0 does not support this feature.",
    )
    assert h.broker.transactions.config.transaction_version == 0


def test_downgrading_transaction_version_switches_the_protocol_served() -> None:
    h = Harness()
    before = api_versions(h)
    assert {k.api_key: k.max_version for k in before.api_keys}[PRODUCE] == 13  # Kafka 4.2's
    assert results(update(h, ("transaction.version", 1, SAFE_DOWNGRADE))) == {
        "transaction.version": (ErrorCode.NONE, None)
    }
    after = api_versions(h)
    assert after.finalized_features_epoch > before.finalized_features_epoch
    ranges = {k.api_key: k.max_version for k in after.api_keys}
    assert (ranges[PRODUCE], ranges[END_TXN]) == (11, 4)
    assert h.broker.transactions.config.transaction_version == 1
    assert h.broker.transaction_log.transaction_version == 1
    # And back up.
    assert results(update(h, ("transaction.version", 2, UPGRADE)))["transaction.version"][0] == ErrorCode.NONE
    assert h.broker.transactions.config.transaction_version == TV2
    assert {k.api_key: k.max_version for k in api_versions(h).api_keys}[PRODUCE] == 13


def test_validate_only_changes_nothing() -> None:
    h = Harness()
    epoch = api_versions(h).finalized_features_epoch
    assert results(update(h, ("transaction.version", 0, SAFE_DOWNGRADE), validate_only=True)) == {
        "transaction.version": (ErrorCode.NONE, None)
    }
    assert finalized(h)["transaction.version"] == 2
    assert api_versions(h).finalized_features_epoch == epoch


REFUSALS = [
    (
        ("transaction.version", 1, UPGRADE),
        "Invalid update version 1 for feature transaction.version. Can't downgrade the version of this "
        "feature without setting the upgrade type to either safe or unsafe downgrade.",
    ),
    (
        ("group.version", 5, UPGRADE),
        "Invalid update version 5 for feature group.version. Local controller 0 only supports versions 0-1",
    ),
    (
        ("no.such.feature", 1, UPGRADE),
        "Invalid update version 1 for feature no.such.feature. "
        "Local controller 0 does not support this feature.",
    ),
    # 4.2-IV1 (29) down to 4.0-IV0 (22) crosses 4.0-IV1, which changed the metadata format
    (
        ("metadata.version", 22, SAFE_DOWNGRADE),
        "Invalid metadata.version 22. Refusing to perform the requested downgrade because it might "
        "delete metadata information.",
    ),
    (
        ("metadata.version", 22, UNSAFE_DOWNGRADE),
        "Invalid metadata.version 22. Unsafe metadata downgrade is not supported in this version.",
    ),
    (
        ("kraft.version", 1, UPGRADE),
        "Invalid update version 1 for feature kraft.version. Changing kraft.version is not supported by "
        "this broker.",
    ),
]


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize(("refused", "message"), REFUSALS)
def test_kafka_validation_messages(refused: tuple[str, int, int], message: str, version: int) -> None:
    """FeatureControlManager's messages; a request with one refused update changes nothing
    (the accepted group.version downgrade beside it is not applied)."""
    h = Harness()
    answer = update(h, ("group.version", 0, SAFE_DOWNGRADE), refused, version=version)
    assert refusal(answer) == (INVALID, message)
    assert finalized(h)["group.version"] == 1


def test_v2_answers_without_results() -> None:
    h = Harness()
    answer = update(h, ("metadata.version", 29, UPGRADE), version=2)
    assert (answer.error_code, answer.error_message, answer.results) == (ErrorCode.NONE, None, [])


def test_v0_allow_downgrade() -> None:
    h = Harness()
    assert results(update(h, ("transaction.version", 1, SAFE_DOWNGRADE), version=0))[
        "transaction.version"
    ] == (
        ErrorCode.NONE,
        None,
    )
    assert refusal(update(h, ("transaction.version", 0, UPGRADE), version=0))[0] == INVALID


def test_group_version_0_turns_the_consumer_protocol_off() -> None:
    h = Harness()
    assert CONSUMER_GROUP_HEARTBEAT in {k.api_key for k in api_versions(h).api_keys}
    assert results(update(h, ("group.version", 0, SAFE_DOWNGRADE)))["group.version"] == (ErrorCode.NONE, None)
    assert "group.version" not in finalized(h)
    assert CONSUMER_GROUP_HEARTBEAT not in {k.api_key for k in api_versions(h).api_keys}
    heartbeat = h.call(
        CONSUMER_GROUP_HEARTBEAT,
        0,
        {
            "group_id": "g",
            "member_id": "m",
            "member_epoch": 0,
            "rebalance_timeout_ms": 1000,
            "subscribed_topic_names": ["t"],
            "topic_partitions": [],
        },
    )
    assert heartbeat.error_code == ErrorCode.UNSUPPORTED_VERSION


def test_authorized_as_kafka_does() -> None:
    h = Harness(authorizer_class_name=STANDARD_AUTHORIZER, super_users="User:admin")
    refused = update(h, ("transaction.version", 1, SAFE_DOWNGRADE), principal="User:alice")
    assert (refused.error_code, list(refused.results)) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [])
    admin = update(h, ("transaction.version", 1, SAFE_DOWNGRADE), principal="User:admin")
    assert results(admin)["transaction.version"][0] == ErrorCode.NONE


def test_levels_survive_a_restart_unless_the_command_line_sets_them(tmp_path: Path) -> None:
    h = Harness(data_dir=tmp_path)
    update(h, ("transaction.version", 1, SAFE_DOWNGRADE))
    h.broker.close()
    again = Harness(data_dir=tmp_path)
    assert finalized(again)["transaction.version"] == 1
    assert again.broker.transactions.config.transaction_version == 1
    again.broker.close()
    explicit = apply_kafka_configs(BrokerConfig(data_dir=tmp_path), {"transaction.version": "2"})
    third = Harness(**{"data_dir": tmp_path, "transaction_version": 2, "explicit": explicit.explicit})
    assert finalized(third)["transaction.version"] == 2
    third.broker.close()


def test_levels_that_cannot_be_written_are_refused_and_nothing_changes(tmp_path: Path) -> None:
    h = Harness(data_dir=tmp_path)
    before = finalized(h)
    FAULTS.arm("file:features.json", errno=errno.ENOSPC)
    try:
        answer = update(h, ("transaction.version", 1, SAFE_DOWNGRADE))
    finally:
        FAULTS.clear()
    assert answer.error_code == ErrorCode.KAFKA_STORAGE_ERROR
    assert finalized(h) == before
