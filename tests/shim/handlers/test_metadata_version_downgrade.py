"""`kafka-features.sh downgrade --metadata 3.8-IV0 --dry-run` (UpdateFeatures, validate_only)
as Kafka's FeatureControlManager answers it: a downgrade that crosses no level that changed the
metadata format is allowed (and made without --dry-run), one that crosses such a level refused."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.update_features import SAFE_DOWNGRADE, UNSAFE_DOWNGRADE
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.controller.features import metadata_changed
from tests.helpers import Harness

UPDATE_FEATURES = 57


def emulating(release: str) -> Harness:
    h = Harness()
    h.broker = Broker(BrokerConfig(emulate=release).with_release_defaults(), clock=h.clock)
    return h


def downgrade(
    h: Harness, level: int, kind: int = SAFE_DOWNGRADE, dry_run: bool = True
) -> tuple[int, str | None]:
    update = {"feature": "metadata.version", "max_version_level": level, "upgrade_type": kind}
    request = {"timeout_ms": 1000, "feature_updates": [update], "validate_only": dry_run}
    answer = h.call(UPDATE_FEATURES, 1, request)
    if answer.error_code:  # Kafka's KRaft controller answers a refusal at the top, without results
        assert answer.results == []
        return answer.error_code, answer.error_message
    (result,) = answer.results
    return result.error_code, result.error_message


# (release, from its newest level down to, kind) -> the answer's error code and message
DOWNGRADES = [
    ("3.9", 20, SAFE_DOWNGRADE, ErrorCode.NONE, None),  # 3.9-IV0 -> 3.8-IV0
    ("3.9", 17, SAFE_DOWNGRADE, ErrorCode.NONE, None),  # 3.7-IV2: 3.7-IV3 to 3.9-IV0 changed nothing
    ("3.9", 16, SAFE_DOWNGRADE, ErrorCode.INVALID_UPDATE_VERSION,
     "Invalid metadata.version 16. Refusing to perform the requested downgrade because it might delete "
     "metadata information."),
    ("3.9", 3, UNSAFE_DOWNGRADE, ErrorCode.INVALID_UPDATE_VERSION,
     "Invalid metadata.version 3. Unable to set a metadata.version less than 3.3-IV0"),
    ("4.2", 28, SAFE_DOWNGRADE, ErrorCode.NONE, None),
    ("4.2", 22, UNSAFE_DOWNGRADE, ErrorCode.INVALID_UPDATE_VERSION,
     "Invalid metadata.version 22. Unsafe metadata downgrade is not supported in this version."),
]  # fmt: skip


@pytest.mark.parametrize(("release", "level", "kind", "code", "message"), DOWNGRADES)
def test_a_dry_run_downgrade(release: str, level: int, kind: int, code: int, message: str | None) -> None:
    h = emulating(release)
    before = h.broker.features.level("metadata.version")
    assert downgrade(h, level, kind) == (code, message)
    assert h.broker.features.level("metadata.version") == before  # a dry run changes nothing


def test_a_safe_downgrade_is_made() -> None:
    h = emulating("3.9")
    assert downgrade(h, 20, dry_run=False) == (ErrorCode.NONE, None)
    assert h.broker.features.level("metadata.version") == 20


def test_metadata_changed_is_kafkas_check_if_metadata_changed() -> None:
    assert not metadata_changed(20, 21) and not metadata_changed(24, 29)
    assert metadata_changed(22, 23) and metadata_changed(16, 21)
