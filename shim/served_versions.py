"""The versions this broker serves of the emulated release: the release's API ranges
(protocol.releases) cut to what the handlers' schemas declare. The cut is not hidden: `missing`
lists each range of Kafka's this broker lacks (none today: docs/emulation.md asserts it)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from kafka_shim.protocol.releases import RELEASES, Release
from kafka_shim.shim.handlers import ADVERTISED_APIS


@dataclass(frozen=True)
class ServedVersions:
    release: Release
    # api key -> (lowest, highest) version served; and the release's versions beyond them.
    ranges: dict[int, tuple[int, int]]
    missing: dict[int, tuple[int, int]]

    def serves(self, api_key: int, api_version: int) -> bool:
        served = self.ranges.get(api_key)
        return served is not None and served[0] <= api_version <= served[1]

    def advertised(self) -> dict[int, tuple[int, int]]:
        """The ranges ApiVersions lists (Kafka 4 lists Produce from 0, refusing 0-2)."""
        listed = self.release.advertised_minimums
        return {key: (listed.get(key, low), high) for key, (low, high) in self.ranges.items()}


@functools.cache
def served_versions(release_name: str) -> ServedVersions:
    release = RELEASES[release_name]
    ranges: dict[int, tuple[int, int]] = {}
    missing: dict[int, tuple[int, int]] = {}
    for key, api in ADVERTISED_APIS.items():
        kafka = release.api_ranges.get(key)
        if kafka is None:
            continue  # an API the release does not have
        low, high = max(kafka[0], api.versions.low), min(kafka[1], api.versions.high)
        ranges[key] = (low, high)
        if high < kafka[1]:
            missing[key] = (high + 1, kafka[1])
    return ServedVersions(release, ranges, missing)
