"""What TLS and SASL cost: produce/consume msgs/s and synchronous commits/s over PLAINTEXT,
SSL and SASL_SSL (SCRAM-SHA-512) listeners of one kafka-shim, with confluent-kafka; and new
connections per second that do a TLS handshake, then SCRAM-SHA-512 (one sequential Python
client: its PBKDF2 is part of every login, so the broker's own share is printed too).
Tansu's PLAINTEXT is printed beside, from the same run. Tansu is not measured secured here:
`tansu user create` against a Tansu started with --authentication is refused (NotAuthenticated),
and an in-memory Tansu loses users made before a restart; its TLS options were not tried.

    python -m bench.security [--messages 100000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import shutil
import socket
import ssl
import struct
import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path
from statistics import median

import scramp

from bench.commits import commits_per_second
from bench.common import running
from bench.throughput import produce_and_consume
from compat.scenarios_security import start_secured_shim
from compat.targets import Broker, RunningBroker, TargetUnavailable
from kafka_shim.protocol.messages import APIS
from kafka_shim.shim.security.sasl import SaslSession
from kafka_shim.shim.security.scram_store import CredentialStore
from tests.wire import encode_request

USER, PASSWORD = "bench", "bench-secret"
SASL_HANDSHAKE, SASL_AUTHENTICATE, API_VERSIONS = 17, 36, 18
_LENGTH = struct.Struct(">i")


def start_secured(certs: Path) -> tuple[RunningBroker, dict[str, str]]:
    """kafka-shim with a PLAINTEXT, an SSL (no client certificate asked) and a SASL_SSL listener."""
    return start_secured_shim(certs, ("PLAINTEXT", "SSL", "SASL_SSL"), USER, PASSWORD, mutual_tls=False)


def client_settings(certs: Path) -> dict[str, dict[str, str]]:
    tls = {"security.protocol": "ssl", "ssl.ca.location": str(certs / "ca.pem")}
    scram = {"sasl.mechanism": "SCRAM-SHA-512", "sasl.username": USER, "sasl.password": PASSWORD}
    return {"PLAINTEXT": {}, "SSL": tls, "SASL_SSL": tls | scram | {"security.protocol": "sasl_ssl"}}


def _read_exactly(sock: ssl.SSLSocket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        data += chunk
    return data


def _call(sock: ssl.SSLSocket, api_key: int, version: int, body: dict[str, object]) -> object:
    payload = encode_request(api_key, version, 1, body, "bench")
    sock.sendall(_LENGTH.pack(len(payload)) + payload)
    (size,) = _LENGTH.unpack(_read_exactly(sock, 4))
    frame = _read_exactly(sock, size)
    api = APIS[api_key]
    return api.response.parse(frame[4 + (1 if api.response_header_flexible(version) else 0) :], version)


def scram_login(tls: ssl.SSLSocket) -> None:
    assert _call(tls, SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-512"}).error_code == 0  # type: ignore[attr-defined]
    client = scramp.ScramClient(["SCRAM-SHA-512"], USER, PASSWORD)
    first = _call(tls, SASL_AUTHENTICATE, 2, {"auth_bytes": client.get_client_first().encode()})
    client.set_server_first(first.auth_bytes.decode())  # type: ignore[attr-defined]
    final = _call(tls, SASL_AUTHENTICATE, 2, {"auth_bytes": client.get_client_final().encode()})
    client.set_server_final(final.auth_bytes.decode())  # type: ignore[attr-defined]


def connections_per_second(address: str, certs: Path, scram: bool, seconds: float) -> float:
    """New connections per second, each: TCP, TLS handshake, then SCRAM-SHA-512 or ApiVersions."""
    host, port = address.rsplit(":", 1)
    context = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    done, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        raw = socket.create_connection((host, int(port)))
        # As Kafka clients do: no Nagle delay between the handshake's last flight and a request.
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            if scram:
                scram_login(tls)
            else:
                assert _call(tls, API_VERSIONS, 3, {}).error_code == 0  # type: ignore[attr-defined]
        done += 1
    return done / (time.perf_counter() - started)


def broker_side_scram_ms(logins: int = 200) -> float:
    """The broker's share of one SCRAM-SHA-512 login, in process (the client's PBKDF2 excluded)."""
    store = CredentialStore(None)
    store.set_password(USER, PASSWORD)
    clients = []
    for _ in range(logins):
        client = scramp.ScramClient(["SCRAM-SHA-512"], USER, PASSWORD)
        clients.append(client)
    spent = 0.0
    for client in clients:
        session = SaslSession(("SCRAM-SHA-512",), store, 0)
        started = time.perf_counter()
        session.handshake("SCRAM-SHA-512", 1)
        server_first = session.authenticate(client.get_client_first().encode(), 0).auth_bytes
        spent += time.perf_counter() - started
        client.set_server_first(server_first.decode())
        final = client.get_client_final().encode()
        started = time.perf_counter()
        assert session.authenticate(final, 0).error_code == 0
        spent += time.perf_counter() - started
    return spent / logins * 1000


def rates(
    broker: Broker, messages: int, seconds: float, client: dict[str, str]
) -> tuple[float, float, float]:
    produced, consumed = produce_and_consume(broker, messages, client)
    return produced, consumed, commits_per_second(broker, seconds, client)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one commit or handshake round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    certs = Path(tempfile.mkdtemp(prefix="bench-security-"))
    samples: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    with ExitStack() as stack:
        shim, addresses = start_secured(certs)
        stack.callback(shutil.rmtree, certs, ignore_errors=True)
        stack.callback(shim.stop)
        try:
            tansu: Broker | None = stack.enter_context(running("tansu"))
        except TargetUnavailable as exc:
            print(f"  tansu: unavailable ({str(exc).splitlines()[0]})")
            tansu = None
        for _ in range(args.rounds):  # interleaved, so the machine's noise falls on all alike
            for name, client in client_settings(certs).items():
                listener = Broker(name="shim", bootstrap=addresses[name])
                samples[f"shim {name}"].append(rates(listener, args.messages, args.seconds, client))
            if tansu is not None:
                samples["tansu PLAINTEXT"].append(rates(tansu, args.messages, args.seconds, {}))
        for index, (label, unit) in enumerate(
            (
                ("produce 100-byte msgs", "msgs/s"),
                ("consume 100-byte msgs", "msgs/s"),
                ("sync commits", "commits/s"),
            )
        ):
            print(f"{label} ({unit}, median of {args.rounds}):")
            for name, values in samples.items():
                print(f"  {name:<18}{median(v[index] for v in values):>12,.0f}", flush=True)
        for label, scram in (("new TLS connections", False), ("new TLS + SCRAM-SHA-512 logins", True)):
            address = addresses["SASL_SSL" if scram else "SSL"]
            per_round = [
                connections_per_second(address, certs, scram, args.seconds) for _ in range(args.rounds)
            ]
            print(f"{label} per second (median of {args.rounds}):  shim {median(per_round):,.0f}", flush=True)
        print(f"the broker's share of a SCRAM-SHA-512 login: {broker_side_scram_ms():.2f} ms (in process)")


if __name__ == "__main__":
    main()
