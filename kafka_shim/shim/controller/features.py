"""Feature levels (KIP-584) as a single-node KRaft cluster of the emulated release reports
them (protocol.releases): the supported ranges, the finalized levels and their epoch
(ApiVersions v3+), and UpdateFeatures' validation as Kafka's FeatureControlManager does it.
Pure: the broker applies a change (switching what it serves) and keeps it.

transaction.version and group.version switch what the broker serves in every release; in
one that has no such feature (Kafka 3.9) the level follows the configuration and is neither
reported nor changed by UpdateFeatures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.update_features import SAFE_DOWNGRADE, UNSAFE_DOWNGRADE, UPGRADE
from kafka_shim.protocol.releases import (
    GROUP_VERSION,
    KRAFT_VERSION,
    METADATA_VERSION,
    SHARE_VERSION,
    TRANSACTION_VERSION,
    Release,
)

__all__ = [
    "GROUP_VERSION",
    "KRAFT_VERSION",
    "METADATA_VERSION",
    "SHARE_VERSION",
    "TRANSACTION_VERSION",
    "FeatureLevels",
]

# Levels the broker runs by whether or not the release reports them as features.
SERVING_FEATURES = (TRANSACTION_VERSION, GROUP_VERSION)


# The metadata.version levels whose MetadataVersion changed the metadata format (Kafka's
# didMetadataChange: 3.0-IV1, 3.2-IV0, 3.3-IV1 to 3.4-IV0, 3.5-IV2, 3.6-IV1 to 3.7-IV0, 3.7-IV2,
# 4.0-IV1). A downgrade is safe, and Kafka's controller makes it, when none between the new
# level (excluded) and the current one did; otherwise it might delete metadata and is refused.
METADATA_CHANGING_LEVELS = frozenset({1, 3, 5, 6, 7, 8, 11, 13, 14, 15, 17, 23})
# 3.3-IV0, the first level that records metadata.version itself: none lower can be set.
MINIMUM_BOOTSTRAP_METADATA_VERSION = 4


def metadata_changed(low: int, high: int) -> bool:
    """MetadataVersion.checkIfMetadataChanged between two levels."""
    return any(level in METADATA_CHANGING_LEVELS for level in range(low + 1, high + 1))


@dataclass(frozen=True)
class FeatureRefusal:
    code: ErrorCode
    message: str


def _metadata_version_refusal(level: int, current: int, kind: int) -> FeatureRefusal | None:
    """FeatureControlManager.updateMetadataVersion's checks: a downgrade is made when it loses
    nothing (a dry run says it can be: `kafka-features.sh downgrade --metadata 3.8-IV0
    --dry-run` on 3.9), refused when a level in between changed the metadata format."""
    reason = None
    if level < MINIMUM_BOOTSTRAP_METADATA_VERSION:
        reason = "Unable to set a metadata.version less than 3.3-IV0"
    elif level < current and metadata_changed(level, current):
        reason = (
            "Unsafe metadata downgrade is not supported in this version."
            if kind == UNSAFE_DOWNGRADE
            else "Refusing to perform the requested downgrade because it might delete metadata information."
        )
    if reason is None:
        return None
    return FeatureRefusal(ErrorCode.INVALID_UPDATE_VERSION, f"Invalid metadata.version {level}. {reason}")


def _invalid(feature: str, level: int, reason: str) -> FeatureRefusal:
    return FeatureRefusal(
        ErrorCode.INVALID_UPDATE_VERSION, f"Invalid update version {level} for feature {feature}. {reason}"
    )


class FeatureLevels:
    """The finalized levels; `epoch` grows with every change (Kafka reports the metadata
    offset they were finalized at, and a client keeps the features of the highest epoch)."""

    def __init__(
        self,
        release: Release,
        finalized: Mapping[str, int],
        epoch: int,
        on_change: Callable[[Mapping[str, int]], None] = lambda levels: None,
        node_id: int = 1,
    ) -> None:
        self._node_id = node_id
        self.supported = release.supported_features
        names = [*self.supported, *(name for name in SERVING_FEATURES if name not in self.supported)]
        self._levels = {name: release.finalized_features.get(name, 0) for name in names}
        self._levels.update(self._kept(finalized))
        self.epoch = epoch
        self._on_change = on_change

    def _within(self, feature: str, level: int) -> bool:
        low, high = self.supported[feature]
        return low <= level <= high

    def replace(self, finalized: Mapping[str, int], epoch: int) -> None:
        """The levels another broker process finalized (shim.processes.cluster_metadata), at
        an epoch no lower than `epoch` (the file's time: every process reports the same one)
        and above this one's."""
        self._levels = {**self._levels, **self._kept(finalized)}
        self.epoch = max(self.epoch + 1, epoch)

    def _kept(self, finalized: Mapping[str, int]) -> dict[str, int]:
        """Kept levels that count: those of a run that emulated another release only where
        this one has the feature at that level."""
        return {
            name: level
            for name, level in finalized.items()
            if name in SERVING_FEATURES or (name in self.supported and self._within(name, level))
        }

    def level(self, feature: str) -> int:
        return self._levels[feature]

    def at_least(self, feature: str, level: int) -> bool:
        """Whether `feature` is finalized at `level` or above (False where the release lacks it)."""
        return self._levels.get(feature, 0) >= level

    @property
    def finalized(self) -> dict[str, int]:
        """The release's features finalized above level 0 (a feature at 0 is not finalized)."""
        return {name: level for name, level in self._levels.items() if level > 0 and name in self.supported}

    def update(self, updates: Mapping[str, tuple[int, int]], validate_only: bool) -> FeatureRefusal | None:
        """feature -> (level, upgrade type). All or nothing, as Kafka's KRaft controller
        (FeatureControlManager.updateFeatures): the first refused update is the answer and no
        level changes; otherwise every update is applied (unless validate_only)."""
        for feature, (level, kind) in updates.items():
            refusal = self._refusal(feature, level, kind)
            if refusal is not None:
                return refusal
        changed = {
            feature: level for feature, (level, _) in updates.items() if self._levels[feature] != level
        }
        if changed and not validate_only:
            levels = {**self._levels, **changed}
            self._on_change(levels)  # written first: a failed write (OSError) changes nothing
            self._levels = levels
            self.epoch += 1
        return None

    def _refusal(self, feature: str, level: int, kind: int) -> FeatureRefusal | None:
        if kind not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            return _invalid(feature, level, "The controller does not support the given upgrade type.")
        if level < 0:
            return _invalid(feature, level, "A feature version cannot be less than 0.")
        supported = self.supported.get(feature)
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
        if feature == METADATA_VERSION:
            return _metadata_version_refusal(level, current, kind)
        if feature == KRAFT_VERSION and level != current:
            # A single static voter: there is no quorum to move to the KIP-853 format.
            return _invalid(feature, level, "Changing kraft.version is not supported by this broker.")
        return None
