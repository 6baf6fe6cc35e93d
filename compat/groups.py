"""Consumer-group scenarios over driver subprocesses: members, convergence, timings.

`GroupMembers` starts `member` drivers of one client in one group and answers the question
the tests ask again and again: do the live members' latest assignments own every partition
exactly once, and since when?
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, replace

from compat.drivers import Driver, DriverFailed, DriverProcess
from compat.schema import Command, Observation


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

    def start(self, name: str, group_instance_id: str | None = None) -> DriverProcess:
        command = replace(self.template, client_id=name, group_instance_id=group_instance_id)
        member = self.driver.start(command)
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
        counts = Counter(p for partitions in owners.values() for p in partitions)
        expected = set(range(self.template.partitions))
        if set(counts) != expected or any(count != 1 for count in counts.values()):
            return None
        if any(not partitions for partitions in owners.values()) and len(owners) <= len(expected):
            return None  # a member without partitions has not had its share yet
        return Convergence(at=max(obs.ts for obs in latest.values()), owners=owners)

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
            if name not in self.gone and member.events("error"):
                lines.append(f"    {member.diagnosis()}")
        return "\n".join(lines)

    def stop(self) -> None:
        for member in self.members.values():
            member.stop()

    def __enter__(self) -> GroupMembers:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
