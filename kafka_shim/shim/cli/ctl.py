"""`kafka-shim ctl ...`: the control endpoint's command line (shim.testbroker.control_api lists the routes).

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
broker's reason, an unreachable endpoint or one that does not answer JSON (not the control
endpoint) 2, each in one line. New controls add a row to COMMANDS.

Where the broker's listeners speak SASL the endpoint asks for a SASL user's login (one with
ALTER on the cluster under an authorizer): --user NAME (else $KAFKA_SHIM_CONTROL_USER), its
password from $KAFKA_SHIM_CONTROL_PASSWORD, else asked on the terminal (never an argument, which
other users see in the process list). Where they speak TLS the endpoint is https: --cafile PEM
(else $KAFKA_SHIM_CONTROL_CAFILE) names the CA to trust, else the system's.
"""

from __future__ import annotations

import base64
import getpass
import json
import os
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_shim.shim.cli.main import DEFAULT_CONTROL

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
        ("fault", "add"),
        "KEY=VALUE...  add a rule (shim.testbroker.faults)",
        lambda w: ("POST", "/faults", pairs(w)),
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


@dataclass(frozen=True)
class Endpoint:
    """Where the control endpoint is and how to reach it."""

    url: str
    user: str | None = None
    cafile: str | None = None


OPTIONS = ("--url", "--user", "--cafile")


def usage() -> str:
    lines = ["usage: kafka-shim ctl [--url URL] [--user NAME] [--cafile PEM] COMMAND", "commands:"]
    lines += [f"  {' '.join(command.words)} {command.usage}" for command in COMMANDS]
    return "\n".join(lines)


def parse(argv: list[str]) -> tuple[Endpoint, Call]:
    """The endpoint and what to send it."""
    given = {
        "--url": os.environ.get("KAFKA_SHIM_CONTROL", DEFAULT_URL),
        "--user": os.environ.get("KAFKA_SHIM_CONTROL_USER"),
        "--cafile": os.environ.get("KAFKA_SHIM_CONTROL_CAFILE"),
    }
    while argv[:1] and argv[0] in OPTIONS:
        if len(argv) < 2:
            raise UsageError(f"{argv[0]} takes a value")
        given[argv[0]], argv = argv[1], argv[2:]
    url = str(given["--url"]).rstrip("/")
    endpoint = Endpoint(url, given["--user"], given["--cafile"])
    for command in sorted(COMMANDS, key=lambda c: -len(c.words)):
        if tuple(argv[: len(command.words)]) == command.words:
            try:
                return endpoint, command.call(argv[len(command.words) :])
            except (ValueError, OSError) as exc:
                raise UsageError(f"{' '.join(command.words)}: {exc}") from exc
    raise UsageError(f"unknown command {' '.join(argv)!r}" if argv else "no command")


class NotTheEndpoint(ValueError):
    """What answered is not the control endpoint: its answer is not JSON."""


def _json(url: str, status: int, raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        start = " ".join(raw[:60].decode(errors="replace").split())
        raise NotTheEndpoint(
            f"{url} answered HTTP {status} with something other than JSON ({start!r}): "
            "is it `kafka-shim --control`'s address?"
        ) from None


def _login(user: str) -> str:
    password = os.environ.get("KAFKA_SHIM_CONTROL_PASSWORD")
    if password is None:
        password = getpass.getpass(f"password of {user}: ")
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def send(endpoint: Endpoint, call: Call) -> Any:
    method, path, body = call
    data = None if body is None else json.dumps(body).encode()
    headers = {"content-type": "application/json"}
    if endpoint.user is not None:
        headers["authorization"] = _login(endpoint.user)
    request = urllib.request.Request(endpoint.url + path, data=data, method=method, headers=headers)
    context = (
        ssl.create_default_context(cafile=endpoint.cafile) if endpoint.url.startswith("https:") else None
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT_S, context=context) as answer:
        return _json(endpoint.url + path, answer.status, answer.read())


def main(argv: list[str]) -> int:
    if argv in ([], ["-h"], ["--help"]):
        print(usage())
        return 0 if argv else 2
    try:
        endpoint, call = parse(argv)
    except UsageError as exc:
        print(f"kafka-shim ctl: {exc}\n{usage()}", file=sys.stderr)
        return 2
    try:
        answer = send(endpoint, call)
    except urllib.error.HTTPError as exc:
        print(f"kafka-shim ctl: {exc.code}: {_reason(exc)}", file=sys.stderr)
        return 1
    except NotTheEndpoint as exc:
        print(f"kafka-shim ctl: {exc}", file=sys.stderr)
        return 2
    except (urllib.error.URLError, OSError) as exc:
        print(f"kafka-shim ctl: cannot reach the control endpoint at {endpoint.url}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(answer, indent=2))
    return 0


def _reason(refused: urllib.error.HTTPError) -> str:
    """The endpoint's reason: its JSON error, else its text (the guard answers refusals in text)."""
    text = refused.read().decode("utf-8", "replace")
    try:
        found = json.loads(text)
    except ValueError:
        # One line, however much a server that is not the endpoint (an HTML page) sends.
        return " ".join(text.split())[:200] or str(refused.reason)
    return str(found.get("error", text)) if isinstance(found, dict) else text
