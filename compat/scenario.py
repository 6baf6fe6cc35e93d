"""A scenario is a function of (target, client) that returns normalized observations.

`run_cell` runs one scenario for one client on a fresh broker of one target and returns an
`Outcome`: pass / fail (with the client's own error text) / n/a (the client cannot do this,
with the reason: never counted as a pass) / unavailable (client or broker missing here).
Observations are normalized (no generated names, no clocks) so two targets can be diffed;
timings are reported beside them and never asserted.
"""

from __future__ import annotations

import json
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from compat.drivers import DRIVERS, Driver, DriverFailed
from compat.schema import Command, GroupProtocol
from compat.targets import Broker, TargetUnavailable, start_target

Status = Literal["pass", "fail", "n/a", "unavailable"]


class NotApplicable(Exception):
    """Raised by a scenario that finds, once running, that the client cannot do it."""


class ClientUnavailable(Exception):
    """A client the scenario needs is not installed here."""


@dataclass
class Context:
    """What a running scenario gets: the broker, its client's driver, and where to put results."""

    target: str
    broker: Broker
    client: str
    driver: Driver
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    observations: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # e.g. admin steps the client lacks
    group_protocol: GroupProtocol = "classic"  # "consumer": members use KIP-848

    def name(self, kind: str) -> str:
        """A topic or group name unique to this run (never part of the observations)."""
        return f"compat-{kind}-{self.client}-{self.run_id}"

    def command(self, **fields: Any) -> Command:
        fields.setdefault("assignor", self.driver.default_assignor())
        fields.setdefault("group_protocol", self.group_protocol)
        return Command(bootstrap=self.broker.bootstrap, **fields)

    def observe(self, key: str, value: Any) -> None:
        self.observations[key] = value

    def timing(self, label: str, seconds: float) -> None:
        self.timings[label] = round(seconds, 2)

    def other_driver(self, client: str) -> Driver:
        driver = DRIVERS[client]
        reason = driver.missing()
        if reason is not None:
            raise ClientUnavailable(f"{client}: {reason}")
        return driver

    def run(self, command: Command, driver: Driver | None = None) -> list[Any]:
        """Run one command to completion with this (or another) client; timed under its op."""
        started = time.monotonic()
        observations = (driver or self.driver).run(command)
        self.timing(f"{command.op} s", time.monotonic() - started)
        return observations

    def create_topic(self, topic: str, partitions: int) -> Command:
        """Creates `topic` with this client; returns a template command for it."""
        template = self.command(op="create_topic", topic=topic, partitions=partitions, timeout_s=60)
        self.run(template)
        return replace(template, op="member")


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    run: Callable[[Context], None]
    not_applicable: Callable[[Driver], str | None] = lambda _driver: None
    heavy: bool = False  # hundreds of members: CI runs these on the shim target only


@dataclass
class Outcome:
    target: str
    scenario: str
    client: str
    status: Status
    detail: str = ""
    observations: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    duration_s: float = 0.0


def run_cell(
    scenario: Scenario, client: str, target: str, start: Callable[[str], Broker] = start_target
) -> Outcome:
    outcome = Outcome(target=target, scenario=scenario.name, client=client, status="n/a")
    driver = DRIVERS[client]
    reason = scenario.not_applicable(driver)
    if reason is not None:
        outcome.detail = reason
        return outcome
    missing = driver.missing()
    if missing is not None:
        outcome.status, outcome.detail = "unavailable", f"{client}: {missing}"
        return outcome
    started = time.monotonic()
    try:
        broker = start(target)
    except TargetUnavailable as exc:
        outcome.status, outcome.detail = "unavailable", f"target {target}: {exc}"
        return outcome
    context = Context(target=target, broker=broker, client=client, driver=driver)
    try:
        scenario.run(context)
        outcome.status = "pass"
    except NotApplicable as exc:
        outcome.detail = str(exc)
    except ClientUnavailable as exc:
        outcome.status, outcome.detail = "unavailable", str(exc)
    except (AssertionError, DriverFailed) as exc:
        outcome.status, outcome.detail = "fail", f"{type(exc).__name__}: {exc}"
    except Exception:
        outcome.status, outcome.detail = "fail", traceback.format_exc()
    finally:
        if outcome.status == "fail":
            state = "is running" if broker.alive() else "died"
            tail = "\n".join(broker.output[-30:])
            outcome.detail += f"\nthe broker {state}; its last output:\n{tail}"
        broker.stop()
    outcome.duration_s = round(time.monotonic() - started, 2)
    # Through JSON, as a saved report holds them: partition keys become strings either way.
    outcome.observations = json.loads(json.dumps(context.observations))
    outcome.timings = context.timings
    if context.notes and outcome.status == "pass":
        outcome.detail = "; ".join(context.notes)
    return outcome
