"""Kafka 3.9.0's recorded answers replayed against kafka-shim, compared step by step.

The golden file was recorded by `probe.py` from a fresh Apache Kafka 3.9.0 broker (see
docs/compatibility.md). A replay runs the same probe against a fresh in-process kafka-shim,
configured as the recording's README says, and compares every record field by field. Each
difference must be covered by one entry of `known_differences.toml`, and each entry must still
cover at least one difference, so the list can neither hide a regression nor go stale.

    python -m tests.fidelity [--bootstrap HOST:PORT] [--only SUBSTR ...] [--out FILE] [--all]

prints every difference not in the list (with --all, every difference), the entries that no
longer match anything, and the cases and steps matched.
"""

from __future__ import annotations

import fnmatch
import io
import json
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.server import BrokerThread

HERE = Path(__file__).parent
GOLDEN = HERE / "golden-kafka-3.9.0.jsonl"
KNOWN_DIFFERENCES = HERE / "known_differences.toml"

# The recording README's command line: the corpus depends on the StandardAuthorizer with the
# probe's anonymous connections as super user, and on groups forming without delay.
SHIM_ARGS = (
    "--host=127.0.0.1",
    "--port=0",
    "--memory",
    # The corpus was recorded from Kafka 3.9.0, set up as kafka-golden/probe2/kafka39.sh sets it.
    "--emulate=3.9",
    "--config=group.coordinator.rebalance.protocols=classic,consumer",
    "--initial-rebalance-delay-ms=0",
    f"--config=authorizer.class.name={STANDARD_AUTHORIZER}",
    "--config=allow.everyone.if.no.acl.found=true",
    "--config=super.users=User:ANONYMOUS",
    # kafka39.sh's server.properties: DescribeConfigs reports these as set at start (and the
    # broker id in its messages); the replication ones are accepted with no effect here.
    "--config=node.id=1",
    "--config=num.partitions=1",
    "--config=default.replication.factor=1",
    "--config=auto.create.topics.enable=true",
    "--config=offsets.topic.replication.factor=1",
    "--config=offsets.topic.num.partitions=1",
    "--config=transaction.state.log.replication.factor=1",
    "--config=transaction.state.log.min.isr=1",
    "--config=transaction.state.log.num.partitions=1",
    "--console=off",  # nothing to look at, and its fixed port would clash with other brokers
)

Steps = dict[str, dict[str, Any]]  # step label -> record, in recorded order
Cases = dict[str, Steps]  # case id -> its steps, in recorded order
ABSENT = "<absent>"


def load(lines: Iterable[str]) -> Cases:
    """JSON lines -> cases; a step label seen twice in a case becomes `label#2`, `label#3`..."""
    cases: Cases = {}
    for line in lines:
        if not line.strip():
            continue
        record = json.loads(line)
        steps = cases.setdefault(record["case"], {})
        label, n = record["step"], 2
        while label in steps:
            label, n = f"{record['step']}#{n}", n + 1
        steps[label] = record
    return cases


def load_golden() -> Cases:
    with GOLDEN.open() as lines:
        return load(lines)


@dataclass(frozen=True)
class Difference:
    """One JSON path of one step whose value Kafka and kafka-shim answer differently.
    The path is dotted, list indices included (`response.topics.0.error_code`); a step only
    one side has is the path `<step>`."""

    case: str
    step: str
    path: str
    kafka: Any
    shim: Any

    def __str__(self) -> str:
        kafka, shim = shown(self.path, self.kafka), shown(self.path, self.shim)
        return f"{self.case} [{self.step}] {self.path}: Kafka {kafka}, shim {shim}"


def shown(path: str, value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    if len(text) > 160:
        text = text[:157] + "..."
    if path.endswith("error_code") and isinstance(value, int) and not isinstance(value, bool):
        try:
            text += f" ({ErrorCode(value).name})"
        except ValueError:
            text += " (?)"
    return text


def walk(kafka: Any, shim: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """(path, Kafka's value, the shim's value) for every leaf where the two differ."""
    if isinstance(kafka, dict) and isinstance(shim, dict):
        for key in [*kafka, *(k for k in shim if k not in kafka)]:
            sub = f"{path}.{key}" if path else key
            if key not in shim:
                yield sub, kafka[key], ABSENT
            elif key not in kafka:
                yield sub, ABSENT, shim[key]
            else:
                yield from walk(kafka[key], shim[key], sub)
    elif isinstance(kafka, list) and isinstance(shim, list):
        for i in range(max(len(kafka), len(shim))):
            sub = f"{path}.{i}"
            if i >= len(shim):
                yield sub, kafka[i], ABSENT
            elif i >= len(kafka):
                yield sub, ABSENT, shim[i]
            else:
                yield from walk(kafka[i], shim[i], sub)
    elif kafka != shim or type(kafka) is not type(shim):
        yield path, kafka, shim


def compare(golden: Cases, observed: Cases) -> list[Difference]:
    out: list[Difference] = []
    for case in [*golden, *(c for c in observed if c not in golden)]:
        kafka_steps, shim_steps = golden.get(case, {}), observed.get(case, {})
        for step in [*kafka_steps, *(s for s in shim_steps if s not in kafka_steps)]:
            if step not in shim_steps or step not in kafka_steps:
                kafka_side = kafka_steps.get(step, ABSENT)
                out.append(Difference(case, step, "<step>", kafka_side, shim_steps.get(step, ABSENT)))
                continue
            out.extend(
                Difference(case, step, p, k, s) for p, k, s in walk(kafka_steps[step], shim_steps[step], "")
            )
    return out


@dataclass
class KnownDifference:
    """An entry of known_differences.toml: globs over case ids, step labels and paths, and why."""

    cases: list[str]
    reason: str
    steps: list[str] = field(default_factory=lambda: ["*"])
    paths: list[str] = field(default_factory=lambda: ["*"])
    owner: str | None = None
    line: int = 0  # of its [[difference]] header, for messages

    def covers(self, difference: Difference) -> bool:
        return (
            any(fnmatch.fnmatchcase(difference.case, glob) for glob in self.cases)
            and any(fnmatch.fnmatchcase(difference.step, glob) for glob in self.steps)
            and any(fnmatch.fnmatchcase(difference.path, glob) for glob in self.paths)
        )

    def __str__(self) -> str:
        owner = f" (owner {self.owner})" if self.owner else ""
        where = f"cases={self.cases} steps={self.steps} paths={self.paths}"
        return f"line {self.line}: {where}{owner}: {self.reason}"


def globs(entry: dict[str, Any], key: str, default: list[str]) -> list[str]:
    value = entry.get(key, default)
    if isinstance(value, str):
        return [value]
    if not (isinstance(value, list) and value and all(isinstance(v, str) for v in value)):
        raise ValueError(f"{key} must be a glob or a non-empty list of globs, not {value!r}")
    return value


def load_known(path: Path = KNOWN_DIFFERENCES) -> list[KnownDifference]:
    text = path.read_text()
    headers = [n for n, line in enumerate(text.splitlines(), 1) if line.strip() == "[[difference]]"]
    entries = tomllib.loads(text).get("difference", [])
    known = []
    for entry, line in zip(entries, headers, strict=True):
        unknown = set(entry) - {"cases", "steps", "paths", "reason", "owner"}
        if unknown or not entry.get("reason") or "cases" not in entry:
            raise ValueError(f"{path.name} line {line}: needs cases and reason, may have steps, paths, owner")
        known.append(
            KnownDifference(
                cases=globs(entry, "cases", []),
                steps=globs(entry, "steps", ["*"]),
                paths=globs(entry, "paths", ["*"]),
                reason=entry["reason"],
                owner=entry.get("owner"),
                line=line,
            )
        )
    return known


@dataclass
class Verdict:
    """A replay judged against the list: what is not listed, and which entries matched nothing."""

    golden: Cases
    observed: Cases
    differences: list[Difference]
    unlisted: list[Difference]
    stale: list[KnownDifference]

    def summary(self) -> str:
        differing_steps = {(d.case, d.step) for d in self.differences}
        unlisted_steps = {(d.case, d.step) for d in self.unlisted}
        steps = {(c, s) for cases in (self.golden, self.observed) for c in cases for s in cases[c]}
        cases = set(self.golden) | set(self.observed)
        differing_cases = {c for c, _ in differing_steps}
        unlisted_cases = {c for c, _ in unlisted_steps}
        return (
            f"Kafka 3.9.0 corpus: {len(cases) - len(differing_cases)}/{len(cases)} cases and "
            f"{len(steps) - len(differing_steps)}/{len(steps)} steps match exactly; "
            f"{len(cases) - len(unlisted_cases)}/{len(cases)} cases and "
            f"{len(steps) - len(unlisted_steps)}/{len(steps)} steps match but for listed differences; "
            f"{len(self.differences)} differing paths, {len(self.unlisted)} not listed; "
            f"{len(self.stale)} stale entries"
        )

    def report(self, every: bool = False) -> str:
        lines = [
            f"not listed in {KNOWN_DIFFERENCES.name}:" if self.unlisted else "every difference is listed"
        ]
        lines += [f"  {d}" for d in (self.differences if every else self.unlisted)]
        if self.stale:
            lines.append("entries that no longer match any difference (remove them):")
            lines += [f"  {entry}" for entry in self.stale]
        lines.append(self.summary())
        return "\n".join(lines)


def judge(golden: Cases, observed: Cases, known: list[KnownDifference], partial: bool = False) -> Verdict:
    """`partial`: the run covered only some cases, so an entry about other cases is not stale."""
    if partial:
        known = [e for e in known if any(fnmatch.fnmatchcase(c, g) for c in golden for g in e.cases)]
    differences = compare(golden, observed)
    used: set[int] = set()
    unlisted = []
    for difference in differences:
        covering = [i for i, entry in enumerate(known) if entry.covers(difference)]
        used.update(covering)
        if not covering:
            unlisted.append(difference)
    stale = [entry for i, entry in enumerate(known) if i not in used]
    return Verdict(golden, observed, differences, unlisted, stale)


def replay(bootstrap: str | None = None, only: list[str] | None = None) -> Cases:
    """Run the probe against `bootstrap`, or against a fresh in-process kafka-shim (the last case
    grows and deletes __consumer_offsets, so a broker serves one run only)."""
    from tests.fidelity.probe import Probe

    out = io.StringIO()
    if bootstrap is not None:
        Probe(bootstrap, out, only).run()
        return load(out.getvalue().splitlines())
    broker = BrokerThread(config_from_args(build_parser().parse_args(list(SHIM_ARGS)))).start()
    try:
        Probe(broker.bootstrap, out, only).run()
    finally:
        broker.stop()
    return load(out.getvalue().splitlines())


def only_cases(golden: Cases, only: list[str] | None) -> Cases:
    """The golden cases a run limited by the probe's --only covers."""
    if not only:
        return golden
    return {case: steps for case, steps in golden.items() if any(o in case for o in only)}
