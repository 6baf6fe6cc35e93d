"""`kafka-shim schemas ...`: a schema registry's everyday look-ups and changes, for kafka-shim's
registry or Confluent's (the same REST API).

    kafka-shim schemas list [--prefix P] [--deleted]
    kafka-shim schemas get SUBJECT [--version N|latest]      kafka-shim schemas get --id ID
    kafka-shim schemas register SUBJECT FILE [--type AVRO|PROTOBUF|JSON]
                                [--reference NAME=SUBJECT:VERSION ...]
    kafka-shim schemas check SUBJECT FILE [--version N|latest] [--type ...]

The registry is --url, else $SCHEMA_REGISTRY_URL, else http://127.0.0.1:8081 (what
`kafka-shim` serves). A schema's type is --type, else its file's suffix (.avsc Avro, .proto
Protobuf, .json JSON Schema). Where the broker's listeners speak SASL: --user NAME (else
$KAFKA_SHIM_SCHEMAS_USER), its password from $KAFKA_SHIM_SCHEMAS_PASSWORD, else asked on the
terminal. A refusal exits 1 printing Confluent's error code and message; `check` exits 1 for
an incompatible schema, printing why; an unreachable registry exits 2."""

from __future__ import annotations

import argparse
import base64
import getpass
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

DEFAULT_URL = "http://127.0.0.1:8081"
MEDIA = "application/vnd.schemaregistry.v1+json"
TYPES_BY_SUFFIX = {".avsc": "AVRO", ".proto": "PROTOBUF", ".json": "JSON"}
TIMEOUT_S = 10.0


class Refused(Exception):
    def __init__(self, status: int, body: Any) -> None:
        detail = (
            body if not isinstance(body, dict) else f"{body.get('message')} (error {body.get('error_code')})"
        )
        super().__init__(f"HTTP {status}: {detail}")


class Unreachable(Exception):
    pass


class Registry:
    def __init__(self, url: str, login: tuple[str, str] | None) -> None:
        self.url = url.rstrip("/")
        self.login = login

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method)
        request.add_header("Accept", MEDIA)
        if data is not None:
            request.add_header("Content-Type", MEDIA)
        if self.login is not None:
            token = base64.b64encode(":".join(self.login).encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as refused:
            text = refused.read().decode(errors="replace")
            try:
                raise Refused(refused.code, json.loads(text)) from None
            except ValueError:
                raise Refused(refused.code, text.strip()) from None
        except (urllib.error.URLError, OSError) as exc:
            raise Unreachable(f"cannot reach the schema registry at {self.url}: {exc}") from None


def _quoted(subject: str) -> str:
    return urllib.parse.quote(subject, safe="")


def _schema_body(args: argparse.Namespace) -> dict[str, Any]:
    path = Path(args.file)
    schema_type = args.type or TYPES_BY_SUFFIX.get(path.suffix.lower())
    if schema_type is None:
        raise SystemExit(f"kafka-shim schemas: say --type for {path.name} (AVRO, PROTOBUF or JSON)")
    body: dict[str, Any] = {"schema": path.read_text(encoding="utf-8"), "schemaType": schema_type}
    references = []
    for text in args.reference:
        name, _, where = text.partition("=")
        subject, _, version = where.rpartition(":")
        if not name or not subject or not version.isdigit():
            raise SystemExit(f"kafka-shim schemas: --reference {text!r} is not NAME=SUBJECT:VERSION")
        references.append({"name": name, "subject": subject, "version": int(version)})
    if references:
        body["references"] = references
    return body


def list_subjects(registry: Registry, args: argparse.Namespace) -> int:
    query = urllib.parse.urlencode({"subjectPrefix": args.prefix, "deleted": str(args.deleted).lower()})
    for subject in registry.call("GET", f"/subjects?{query}"):
        latest = registry.call("GET", f"/subjects/{_quoted(subject)}/versions/latest")
        level = registry.call("GET", f"/config/{_quoted(subject)}?defaultToGlobal=true")["compatibilityLevel"]
        kind = latest.get("schemaType", "AVRO")
        print(f"{subject}  version {latest['version']}  id {latest['id']}  {kind}  {level}")
    return 0


def get_schema(registry: Registry, args: argparse.Namespace) -> int:
    if args.id is not None:
        found = registry.call("GET", f"/schemas/ids/{args.id}")
    elif args.subject:
        found = registry.call("GET", f"/subjects/{_quoted(args.subject)}/versions/{args.version}")
        kind = found.get("schemaType", "AVRO")
        print(f"# {found['subject']} version {found['version']} id {found['id']} {kind}")
    else:
        raise SystemExit("kafka-shim schemas get: a SUBJECT or --id")
    text = found["schema"]
    try:
        print(json.dumps(json.loads(text), indent=2))
    except ValueError:
        print(text)  # Protobuf
    return 0


def register(registry: Registry, args: argparse.Namespace) -> int:
    answer = registry.call("POST", f"/subjects/{_quoted(args.subject)}/versions", _schema_body(args))
    print(f"{args.subject}: id {answer['id']}")
    return 0


def check(registry: Registry, args: argparse.Namespace) -> int:
    path = f"/compatibility/subjects/{_quoted(args.subject)}/versions/{args.version}?verbose=true"
    answer = registry.call("POST", path, _schema_body(args))
    if answer.get("is_compatible"):
        print(f"{args.subject}: compatible")
        return 0
    print(f"{args.subject}: incompatible")
    for message in answer.get("messages") or ():
        print(f"  {message}")
    return 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kafka-shim schemas", description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("SCHEMA_REGISTRY_URL", DEFAULT_URL))
    parser.add_argument("--user", default=os.environ.get("KAFKA_SHIM_SCHEMAS_USER"))
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="subjects with their latest version, id, type and level")
    listing.add_argument("--prefix", default="")
    listing.add_argument("--deleted", action="store_true", help="soft-deleted subjects too")
    listing.set_defaults(run=list_subjects)
    getting = commands.add_parser("get", help="a subject's version, or a schema by --id")
    getting.add_argument("subject", nargs="?")
    getting.add_argument("--version", default="latest")
    getting.add_argument("--id", type=int)
    getting.set_defaults(run=get_schema)
    for name, run, text in (
        ("register", register, "register FILE as SUBJECT's next version (the same schema: its id)"),
        ("check", check, "whether FILE may follow SUBJECT's versions under its compatibility level"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("subject")
        command.add_argument("file")
        command.add_argument("--type", choices=("AVRO", "PROTOBUF", "JSON"))
        command.add_argument("--reference", action="append", default=[], metavar="NAME=SUBJECT:VERSION")
        if name == "check":
            command.add_argument("--version", default="latest")
        command.set_defaults(run=run)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    login = None
    if args.user:
        password = os.environ.get("KAFKA_SHIM_SCHEMAS_PASSWORD") or getpass.getpass(
            f"password of {args.user}: "
        )
        login = (args.user, password)
    try:
        return int(args.run(Registry(args.url, login), args))
    except Refused as exc:
        print(f"kafka-shim schemas: {exc}", file=sys.stderr)
        return 1
    except Unreachable as exc:
        print(f"kafka-shim schemas: {exc}", file=sys.stderr)
        return 2
