"""Consumer groups over driver subprocesses: members, convergence, timings.

`GroupMembers` starts `member` drivers (of one client, or of several for a mixed group) in
one group and answers the question the scenarios ask again and again: do the live members'
latest assignments own every partition exactly once, and since when?
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, replace

from compat.drivers import Driver, DriverFailed, DriverProcess
from compat.schema import Command, Observation

SUBSCRIBE_INTERVAL_S = 1.0  # members of a group scenario join this far apart


def owns_each_once(owners: dict[str, list[int]], partitions: int) -> bool:
    """Every partition owned by exactly one member, and every member has its share."""
    counts = Counter(p for owned in owners.values() for p in owned)
    if set(counts) != set(range(partitions)) or any(count != 1 for count in counts.values()):
        return False
    # A member without partitions has not had its share yet (unless there are too few to share).
    return all(owners.values()) or len(owners) > partitions


@dataclass
class Convergence:
    """Every partition owned exactly once by the live members, as of `at` (driver clock)."""

    at: float
    owners: dict[str, list[int]]


@dataclass
class GroupMembers:
    driver: Driver
    template: Command  # op="member"; per-member fields are set by `start`
    members: dict[str, DriverProcess] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)

    def start(
        self, name: str, group_instance_id: str | None = None, driver: Driver | None = None
    ) -> DriverProcess:
        command = replace(self.template, client_id=name, group_instance_id=group_instance_id)
        member = (driver or self.driver).start(command)
        self.members[name] = member
        self.gone.discard(name)
        return member

    def live(self) -> dict[str, DriverProcess]:
        return {name: member for name, member in self.members.items() if name not in self.gone}

    def close(self, name: str) -> None:
        self.gone.add(name)
        self.members[name].close()

    def kill(self, name: str) -> None:
        self.gone.add(name)
        self.members[name].kill()

    def convergence(self) -> Convergence | None:
        """The current state if the live members own every partition exactly once, else None."""
        latest: dict[str, Observation] = {}
        for name, member in self.live().items():
            assignment = member.last("assignment")
            if assignment is None:
                return None
            latest[name] = assignment
        owners = {name: list(obs["partitions"]) for name, obs in latest.items()}
        if not owns_each_once(owners, self.template.partitions):
            return None
        return Convergence(at=max(obs.ts for obs in latest.values()), owners=owners)

    def generations(self) -> list[int | None]:
        """The live members' latest generations (None where the client does not tell)."""
        found = []
        for member in self.live().values():
            assignment = member.last("assignment")
            found.append(assignment["generation"] if assignment is not None else None)
        return found

    def start_staggered(
        self, names: list[str], static: dict[str, str] | None = None, drivers: dict[str, Driver] | None = None
    ) -> float:
        """Start members SUBSCRIBE_INTERVAL_S apart; returns the first one's subscribe time."""
        first: float | None = None
        previous: float | None = None
        for name in names:
            if previous is not None:
                time.sleep(max(0.0, previous + SUBSCRIBE_INTERVAL_S - time.time()))
            member = self.start(name, (static or {}).get(name), (drivers or {}).get(name))
            previous = member.wait_for(lambda obs: obs.event == "subscribing", timeout_s=60).ts
            first = first if first is not None else previous
        assert first is not None
        return first

    def wait_converged(self, timeout_s: float) -> Convergence:
        """Poll (no fixed sleeps) until convergence or the deadline; fail with every member's story."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for name, member in self.live().items():
                if not member.running:
                    raise DriverFailed(f"member {name} exited early\n{member.diagnosis()}")
            converged = self.convergence()
            if converged is not None:
                return converged
            time.sleep(0.05)
        raise DriverFailed(f"no convergence within {timeout_s}s:\n{self.describe()}")

    def describe(self) -> str:
        lines = []
        for name, member in self.members.items():
            state = "gone" if name in self.gone else ("running" if member.running else "exited")
            history = [(round(obs.ts, 2), obs["partitions"]) for obs in member.events("assignment")]
            lines.append(f"  {name} ({state}): assignments {history}")
            if name not in self.gone:
                tail = member.stderr_tail(1500).strip()
                errors = [obs["message"] for obs in member.events("error")]
                if errors or tail:
                    lines.append(f"    errors: {errors}; stderr: {tail}")
        return "\n".join(lines)

    def stop(self) -> None:
        for member in self.members.values():
            member.stop()

    def __enter__(self) -> GroupMembers:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def assert_kept(before: Convergence, after: Convergence) -> None:
    """Cooperative rebalancing: survivors keep what they owned and only gain."""
    for name, partitions in after.owners.items():
        assert set(before.owners[name]) <= set(partitions), (
            f"{name} lost partitions: {before.owners} -> {after.owners}"
        )


def shares(convergence: Convergence) -> list[int]:
    """How many partitions each member owns, largest first: comparable across runs and brokers."""
    return sorted((len(owned) for owned in convergence.owners.values()), reverse=True)
