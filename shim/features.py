"""Feature levels (KIP-584) as a Kafka 3.9 single-node KRaft cluster reports them, plus
Kafka 4's transaction.version and group.version, which this broker serves: the supported
ranges, the finalized levels and their epoch (ApiVersions v3+), and UpdateFeatures'
validation as Kafka's FeatureControlManager does it. Pure: the broker applies a change
(switching what it serves) and keeps it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.update_features import SAFE_DOWNGRADE, UNSAFE_DOWNGRADE, UPGRADE

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"

# 3.9-IV0, the newest metadata.version of Kafka 3.9; 1 is 3.0-IV1, the oldest KRaft one.
METADATA_VERSION_3_9 = 21
SUPPORTED: dict[str, tuple[int, int]] = {
    METADATA_VERSION: (1, METADATA_VERSION_3_9),
    KRAFT_VERSION: (0, 1),
    TRANSACTION_VERSION: (0, 2),
    GROUP_VERSION: (0, 1),
}


@dataclass(frozen=True)
class FeatureRefusal:
    code: ErrorCode
    message: str


def _invalid(feature: str, level: int, reason: str) -> FeatureRefusal:
    return FeatureRefusal(
        ErrorCode.INVALID_UPDATE_VERSION, f"Invalid update version {level} for feature {feature}. {reason}"
    )


class FeatureLevels:
    """The finalized levels; `epoch` grows with every change (Kafka reports the metadata
    offset they were finalized at, and a client keeps the features of the highest epoch)."""

    def __init__(
        self,
        finalized: Mapping[str, int],
        epoch: int,
        on_change: Callable[[Mapping[str, int]], None] = lambda levels: None,
        node_id: int = 1,
    ) -> None:
        self._node_id = node_id
        self._levels = {name: finalized.get(name, 0) for name in SUPPORTED}
        self._levels[METADATA_VERSION] = finalized.get(METADATA_VERSION, METADATA_VERSION_3_9)
        self.epoch = epoch
        self._on_change = on_change

    def level(self, feature: str) -> int:
        return self._levels[feature]

    @property
    def finalized(self) -> dict[str, int]:
        """The features finalized above level 0 (a feature at 0 is not finalized at all)."""
        return {name: level for name, level in self._levels.items() if level > 0}

    def update(
        self, updates: Mapping[str, tuple[int, int]], validate_only: bool
    ) -> dict[str, FeatureRefusal | None]:
        """feature -> (level, upgrade type): None for each accepted update. Accepted updates
        are applied (unless validate_only) even when others are refused, as Kafka does."""
        results = {feature: self._refusal(feature, level, kind) for feature, (level, kind) in updates.items()}
        changed = {
            feature: level
            for feature, (level, _) in updates.items()
            if results[feature] is None and self._levels[feature] != level
        }
        if changed and not validate_only:
            self._levels.update(changed)
            self.epoch += 1
            self._on_change(dict(self._levels))
        return results

    def _refusal(self, feature: str, level: int, kind: int) -> FeatureRefusal | None:
        if kind not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            return _invalid(feature, level, "The controller does not support the given upgrade type.")
        if level < 0:
            return _invalid(feature, level, "A feature version cannot be less than 0.")
        supported = SUPPORTED.get(feature)
        if supported is None:
            return _invalid(
                feature, level, f"Local controller {self._node_id} does not support this feature."
            )
        low, high = supported
        if not low <= level <= high:
            return _invalid(
                feature, level, f"Local controller {self._node_id} only supports versions {low}-{high}"
            )
        current = self._levels[feature]
        if level < current and kind == UPGRADE:
            return _invalid(
                feature,
                level,
                "Can't downgrade the version of this feature without setting the upgrade type to either "
                "safe or unsafe downgrade.",
            )
        if feature == METADATA_VERSION and level < current:
            if kind == UNSAFE_DOWNGRADE:
                return _invalid(feature, level, "Unsafe metadata downgrade is not supported in this version.")
            return _invalid(
                feature,
                level,
                "Refusing to perform the requested downgrade because it might delete metadata information.",
            )
        if feature == KRAFT_VERSION and level != current:
            # A single static voter: there is no quorum to move to the KIP-853 format.
            return _invalid(feature, level, "Changing kraft.version is not supported by this broker.")
        return None
