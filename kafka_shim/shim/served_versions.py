"""The versions this broker serves: under `--emulate R` release R's API ranges, without it every
version any listed release served (protocol.releases.EVERY_VERSION_SERVED: 3.9's floors, the
newest ceilings), both cut to what the handlers' schemas declare. The cut is not hidden: `missing`
lists each range of Kafka's this broker lacks (none today: docs/emulation.md asserts it).

Without --emulate a client may use a version the newest release refuses (KIP-896 removed every
version older than Kafka 2.1's from Kafka 4.0): it is served, and `OldVersionClients` logs it once
per client id and API, so the developer learns what Kafka 4 would do to that client."""

from __future__ import annotations

import functools
import logging
from collections import OrderedDict
from dataclasses import dataclass, field

from kafka_shim.protocol.messages import APIS
from kafka_shim.protocol.releases import EVERY_VERSION_SERVED, NEWEST, RELEASES, Release

log = logging.getLogger("kafka_shim.kip896")


@dataclass(frozen=True)
class ServedVersions:
    release: Release
    # api key -> (lowest, highest) version served; and the release's versions beyond them.
    ranges: dict[int, tuple[int, int]]
    missing: dict[int, tuple[int, int]]
    # api key -> the newest release's lowest version, where older ones are served (no --emulate).
    newest_floors: dict[int, int] = field(default_factory=dict)

    def serves(self, api_key: int, api_version: int) -> bool:
        served = self.ranges.get(api_key)
        return served is not None and served[0] <= api_version <= served[1]

    def refused_by_newest(self, api_key: int, api_version: int) -> bool:
        """Whether the newest release would refuse this served version (KIP-896's removals)."""
        return api_version < self.newest_floors.get(api_key, 0)

    def advertised(self) -> dict[int, tuple[int, int]]:
        """The ranges ApiVersions lists (Kafka 4 lists Produce from 0, refusing 0-2)."""
        listed = self.release.advertised_minimums
        return {key: (listed.get(key, low), high) for key, (low, high) in self.ranges.items()}


@functools.cache
def served_versions(release_name: str | None) -> ServedVersions:
    """`release_name`: the emulated release, exactly; None: every version any release served,
    with the newest release's answers otherwise."""
    release = RELEASES[release_name or NEWEST]
    kafka_ranges = release.api_ranges if release_name is not None else EVERY_VERSION_SERVED
    ranges: dict[int, tuple[int, int]] = {}
    missing: dict[int, tuple[int, int]] = {}
    # Every message protocol.messages declares has its handler (shim.handlers checks it): read
    # from there, the table needs no handler loaded, and the broker that builds it knows none.
    for key, api in sorted(APIS.items()):
        kafka = kafka_ranges.get(key)
        if kafka is None:
            continue  # an API the release does not have
        low, high = max(kafka[0], api.versions.low), min(kafka[1], api.versions.high)
        ranges[key] = (low, high)
        if high < kafka[1]:
            missing[key] = (high + 1, kafka[1])
    floors: dict[int, int] = {}
    if release_name is None:
        newest = RELEASES[NEWEST].api_ranges
        floors = {
            key: newest[key][0] for key, (low, _) in ranges.items() if key in newest and low < newest[key][0]
        }
    return ServedVersions(release, ranges, missing, floors)


@dataclass
class OldVersionUse:
    """A client id's use of one API at versions the newest release refuses."""

    client_id: str
    api: str
    versions: set[int]
    peer: str
    first_seen_ms: int
    last_seen_ms: int
    requests: int = 0


class OldVersionClients:
    """The clients seen using versions Kafka 4 removed, by (client id, API): each logged once
    when first seen, the newest `limit` kept for the console (client ids are the client's to
    choose: memory stays bounded whatever they send)."""

    def __init__(self, newest_release: str = NEWEST, limit: int = 256) -> None:
        self.newest_release = newest_release
        self.limit = limit
        self._uses: OrderedDict[tuple[str, str], OldVersionUse] = OrderedDict()

    def saw(self, client_id: str | None, api: str, api_version: int, peer: str, now_ms: int) -> None:
        name = client_id or ""
        key = (name, api)
        use = self._uses.get(key)
        if use is None:
            use = self._uses[key] = OldVersionUse(name, api, set(), peer, now_ms, now_ms)
            if len(self._uses) > self.limit:
                self._uses.popitem(last=False)
            log.warning(
                "client %r (%s) sent %s v%d, a version Kafka 4.0 removed (KIP-896): Kafka %s would "
                "close its connection; served because no --emulate release is set",
                name,
                peer,
                api,
                api_version,
                self.newest_release,
            )
        else:
            self._uses.move_to_end(key)
        use.versions.add(api_version)
        use.peer, use.last_seen_ms = peer, now_ms
        use.requests += 1

    def uses(self) -> list[OldVersionUse]:
        """Newest first."""
        return list(reversed(self._uses.values()))
