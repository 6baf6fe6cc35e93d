"""`kafka-shim ctl ...`: the control endpoint's command line (shim.control_api lists the routes).

    kafka-shim ctl fault add api=OffsetCommit group=g error=REBALANCE_IN_PROGRESS times=1
    kafka-shim ctl fault list
    kafka-shim ctl clock advance 46
    kafka-shim ctl requests api=OffsetCommit group=g --limit 5
    kafka-shim ctl broker stop 1
    kafka-shim ctl leader orders 0 2
    kafka-shim ctl coordinator group=billing node=2

KEY=VALUE values are read as JSON where they parse (times=1 is a number, topic=orders a
string). The endpoint is --url, else $KAFKA_SHIM_CONTROL, else http://127.0.0.1:9094 (what
`kafka-shim --control` listens on). Answers print as JSON; a refused command exits 1 with the
broker's reason, an unreachable endpoint 2. New controls add a row to COMMANDS.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_shim.shim.cli import DEFAULT_CONTROL

DEFAULT_URL = f"http://{DEFAULT_CONTROL}"
TIMEOUT_S = 10.0

# What a command sends: method, path (with its query) and JSON body (None: no body).
Call = tuple[str, str, Any]


class UsageError(ValueError):
    pass


def pairs(words: list[str]) -> dict[str, Any]:
    """KEY=VALUE words as a mapping, values as JSON where they parse."""
    found: dict[str, Any] = {}
    for word in words:
        key, sep, text = word.partition("=")
        if not sep or not key:
            raise UsageError(f"expected KEY=VALUE, got {word!r}")
        try:
            found[key] = json.loads(text)
        except ValueError:
            found[key] = text
    return found


def _none(words: list[str], method: str, path: str) -> Call:
    if words:
        raise UsageError(f"unexpected {' '.join(words)}")
    return method, path, None


def _clear(words: list[str]) -> Call:
    if len(words) > 1:
        raise UsageError("fault clear [ID]")
    return "DELETE", "/faults" + (f"/{int(words[0])}" if words else ""), None


def _load(words: list[str]) -> Call:
    if len(words) != 1:
        raise UsageError("fault load FILE (a JSON list of rules)")
    return "POST", "/faults", json.loads(Path(words[0]).read_text(encoding="utf-8"))


def _advance(words: list[str]) -> Call:
    if len(words) != 1:
        raise UsageError("clock advance SECONDS")
    return "POST", "/clock/advance", {"seconds": float(words[0])}


def _requests(words: list[str]) -> Call:
    query = {key: str(value) for key, value in pairs(words).items()}
    return "GET", "/requests" + ("?" + urllib.parse.urlencode(query) if query else ""), None


def _broker(action: str) -> Callable[[list[str]], Call]:
    def call(words: list[str]) -> Call:
        if len(words) != 1:
            raise UsageError(f"broker {action} ID")
        return "POST", f"/cluster/brokers/{int(words[0])}/{action}", None

    return call


def _leader(words: list[str]) -> Call:
    if len(words) not in (2, 3):
        raise UsageError("leader TOPIC PARTITION [NODE]")
    path = f"/cluster/partitions/{urllib.parse.quote(words[0], safe='')}/{int(words[1])}"
    if len(words) == 2:
        return "GET", path, None
    return "POST", path + "/leader", {"node": int(words[2])}


def _coordinator(words: list[str]) -> Call:
    given = pairs(words)
    if "node" in given:
        return "POST", "/cluster/coordinator", given
    return (
        "GET",
        "/cluster/coordinator?" + urllib.parse.urlencode({k: str(v) for k, v in given.items()}),
        None,
    )


@dataclass(frozen=True)
class Command:
    words: tuple[str, ...]
    usage: str
    call: Callable[[list[str]], Call]


COMMANDS: list[Command] = [
    Command(
        ("fault", "add"), "KEY=VALUE...  add a rule (shim.faults)", lambda w: ("POST", "/faults", pairs(w))
    ),
    Command(("fault", "load"), "FILE  add the rules of a JSON rules file", _load),
    Command(("fault", "list"), "  the rules and how often each fired", lambda w: _none(w, "GET", "/faults")),
    Command(("fault", "clear"), "[ID]  clear one rule or all", _clear),
    Command(("fault", "firings"), "  the latest firings", lambda w: _none(w, "GET", "/faults/firings")),
    Command(("clock", "advance"), "SECONDS  move the broker's clock on", _advance),
    Command(("clock", "freeze"), "  stop the broker's clock", lambda w: _none(w, "POST", "/clock/freeze")),
    Command(("clock", "resume"), "  run it again", lambda w: _none(w, "POST", "/clock/resume")),
    Command(("clock",), "  show the broker's clock", lambda w: _none(w, "GET", "/clock")),
    Command(("requests", "clear"), "  forget recorded requests", lambda w: _none(w, "DELETE", "/requests")),
    Command(("requests",), "[KEY=VALUE...] [limit=N]  recorded requests that match", _requests),
    Command(
        ("cluster",),
        "  the emulated brokers (--brokers): running, racks, addresses",
        lambda w: _none(w, "GET", "/cluster"),
    ),
    Command(
        ("broker", "stop"), "ID  stop a broker: its connections close, its ports refuse", _broker("stop")
    ),
    Command(("broker", "start"), "ID  start it again on its ports", _broker("start")),
    Command(("leader",), "TOPIC PARTITION [NODE]  show the partition's leader, or move it to NODE", _leader),
    Command(
        ("coordinator",),
        "group=G|transactional_id=T [node=N]  show who coordinates it, or move it to N",
        _coordinator,
    ),
]


def usage() -> str:
    lines = ["usage: kafka-shim ctl [--url URL] COMMAND", "commands:"]
    lines += [f"  {' '.join(command.words)} {command.usage}" for command in COMMANDS]
    return "\n".join(lines)


def parse(argv: list[str]) -> tuple[str, Call]:
    """The endpoint URL and what to send it."""
    url = os.environ.get("KAFKA_SHIM_CONTROL", DEFAULT_URL)
    if argv[:1] == ["--url"]:
        if len(argv) < 2:
            raise UsageError("--url takes the control endpoint's URL")
        url, argv = argv[1], argv[2:]
    for command in sorted(COMMANDS, key=lambda c: -len(c.words)):
        if tuple(argv[: len(command.words)]) == command.words:
            try:
                return url.rstrip("/"), command.call(argv[len(command.words) :])
            except (ValueError, OSError) as exc:
                raise UsageError(f"{' '.join(command.words)}: {exc}") from exc
    raise UsageError(f"unknown command {' '.join(argv)!r}" if argv else "no command")


def send(url: str, call: Call) -> Any:
    method, path, body = call
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url + path, data=data, method=method, headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
        return json.loads(answer.read())


def main(argv: list[str]) -> int:
    if argv in ([], ["-h"], ["--help"]):
        print(usage())
        return 0 if argv else 2
    try:
        url, call = parse(argv)
    except UsageError as exc:
        print(f"kafka-shim ctl: {exc}\n{usage()}", file=sys.stderr)
        return 2
    try:
        answer = send(url, call)
    except urllib.error.HTTPError as exc:
        reason = json.loads(exc.read() or b"{}").get("error", exc.reason)
        print(f"kafka-shim ctl: {reason}", file=sys.stderr)
        return 1
    except (urllib.error.URLError, OSError) as exc:
        print(f"kafka-shim ctl: cannot reach the control endpoint at {url}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(answer, indent=2))
    return 0
