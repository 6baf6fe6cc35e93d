"""The security scenario: every client stack over TLS, mutual TLS, SASL_PLAINTEXT and
SASL_SSL with PLAIN and SCRAM, a user created through the admin API, a wrong password and an
unknown user.

kafka-shim is started here with secured listeners and a development CA (`kafka-shim
dev-certs`); the plain target broker the harness started is not used. Other targets would
need the same listeners, users and CA configured outside the harness: n/a there.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from compat.drivers import Driver, DriverFailed
from compat.scenario import Context, NotApplicable
from compat.schema import Command
from compat.targets import RunningBroker, free_port, launch

MESSAGES = 20
USER, PASSWORD = "alice", "alice-secret"
# Clients whose admin API has AlterUserScramCredentials; the others' users are made by confluent-kafka.
CREATES_USERS = ("confluent-kafka", "java")
LISTENERS = ("SSL", "SASL_PLAINTEXT", "SASL_SSL")


def start_secured_shim(
    certs: Path,
    listeners: tuple[str, ...] = LISTENERS,
    user: str = USER,
    password: str = PASSWORD,
    mutual_tls: bool = True,
) -> tuple[RunningBroker, dict[str, str]]:
    """kafka-shim with one listener per protocol of `listeners` (SSL with mutual TLS required
    when `mutual_tls`) and the one user; the bootstrap address of each listener."""
    from kafka_shim.shim.security.dev_certs import write_dev_certs

    paths = write_dev_certs(certs, ("localhost", "127.0.0.1"), "client", 2)
    ports = {name: free_port() for name in listeners}
    addresses = ",".join(f"{name}://127.0.0.1:{port}" for name, port in ports.items())
    argv = [
        sys.executable,
        "-m",
        "kafka_shim",
        "--memory",
        "--listeners",
        addresses,
        "--user",
        f"{user}:{password}",
    ]
    settings = [f"ssl.keystore.location={paths['broker']}"]
    if mutual_tls:
        settings += [f"ssl.truststore.location={paths['ca']}", "listener.name.ssl.ssl.client.auth=required"]
    for setting in settings:
        argv += ["--config", setting]
    broker = launch("shim-secured", argv)
    return broker, {name: f"127.0.0.1:{port}" for name, port in ports.items()}


def settings(
    certs: Path, protocol: str, mechanism: str | None = None, user: str = USER, password: str = PASSWORD
) -> dict[str, str]:
    """A client's security settings in librdkafka's names (compat/schema.py)."""
    security = {"security.protocol": protocol.lower()}
    if protocol.endswith("SSL"):
        security["ssl.ca.location"] = str(certs / "ca.pem")
    if protocol == "SSL":  # mutual TLS
        security |= {
            "ssl.certificate.location": str(certs / "client-cert.pem"),
            "ssl.key.location": str(certs / "client-key.pem"),
            "ssl.keystore.location": str(certs / "client.pem"),
        }
    if mechanism is not None:
        security |= {"sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password}
    return security


def round_trip(context: Context, command: Command) -> dict[str, int]:
    """Produce, then consume in a group and commit: what was read and committed."""
    context.run(replace(command, op="produce", count=MESSAGES, key_count=5))
    consumed = context.run(replace(command, op="consume", count=MESSAGES, group=f"{command.topic}-g"))
    values = sorted(int(obs["value"]) for obs in consumed if obs.event == "message")
    assert values == list(range(MESSAGES)), f"read {values}"
    committed = [obs for obs in consumed if obs.event == "committed"]
    total = sum(committed[-1].partition_map("offsets").values()) if committed else MESSAGES
    assert total == MESSAGES, f"committed {total}"  # kcat commits inside librdkafka, unreported
    return {"read": len(values), "committed": total}


def security(context: Context) -> None:
    if context.target != "shim":
        raise NotApplicable("needs TLS and SASL listeners, a CA and users set up: done only for kafka-shim")
    certs = Path(tempfile.mkdtemp(prefix="compat-security-"))
    broker, bootstrap = start_secured_shim(certs)
    try:
        base = Command(op="produce", bootstrap="", topic="", partitions=1, timeout_s=60, client_id="compat")
        for protocol, mechanism in (
            ("SSL", None),
            ("SASL_PLAINTEXT", "PLAIN"),
            ("SASL_SSL", "SCRAM-SHA-512"),
        ):
            variant = f"{protocol} {mechanism or 'mutual TLS'}"
            command = replace(
                base,
                bootstrap=bootstrap[protocol],
                topic=context.name(variant.replace(" ", "-").lower()),
                security=settings(certs, protocol, mechanism),
                assignor=context.driver.default_assignor(),
            )
            started = time.monotonic()
            context.observe(variant, round_trip(context, command))
            context.timing(f"{variant} s", time.monotonic() - started)
        created_user(context, base, bootstrap, certs)
        refused_logins(context, base, bootstrap, certs, broker)
    finally:
        broker.stop()
        shutil.rmtree(certs, ignore_errors=True)


def created_user(context: Context, base: Command, bootstrap: dict[str, str], certs: Path) -> None:
    """A SCRAM-SHA-256 user made through the admin API (this client's, where it has one)
    produces over SASL_PLAINTEXT at once."""
    name = f"user-{context.run_id}"
    maker: Driver | None = (
        None if context.client in CREATES_USERS else context.other_driver("confluent-kafka")
    )
    if maker is not None:
        context.notes.append("user created with confluent-kafka's admin API (this client has none)")
    admin = replace(
        base,
        op="create_user",
        bootstrap=bootstrap["SASL_SSL"],
        security=settings(certs, "SASL_SSL", "SCRAM-SHA-512"),
        user=name,
        password=f"{name}-pw",
        mechanism="SCRAM-SHA-256",
    )
    assert any(obs.event == "user_created" for obs in context.run(admin, maker))
    produced = context.run(
        replace(
            base,
            bootstrap=bootstrap["SASL_PLAINTEXT"],
            topic=context.name("new-user"),
            count=5,
            security=settings(certs, "SASL_PLAINTEXT", "SCRAM-SHA-256", name, f"{name}-pw"),
        )
    )
    assert any(obs.event == "produced" for obs in produced)
    context.observe("user created through the admin API", "produces")


# Clients that end with an error of their own after retrying, the authentication error only in
# their logs (what they do against Apache Kafka too).
# kafka-python's refused login ends only when its bootstrap times out (the command's timeout),
# so it gets a short one; the others give up on the broker's answer, in under 2 s here.
OWN_ERROR_TIMEOUT_S = 8
OWN_ERROR = {
    "kafka-python": "kafka-python 3.0.12 logs SaslAuthenticationFailedError with Kafka's message, retries "
    "the bootstrap with a backoff and raises KafkaTimeoutError when its bootstrap times out",
}


# How long the broker's log line may trail the client's exit (its output is read by a thread).
LOG_LINE_WAIT_S = 10


def refusal_lines(broker: RunningBroker, seen: int) -> list[str]:
    """The broker's refusal log lines after the first `seen`, waited for with a deadline."""
    deadline = time.monotonic() + LOG_LINE_WAIT_S
    while True:
        found = [line for line in broker.output[seen:] if "SASL authentication failed" in line]
        if found or time.monotonic() >= deadline:
            return found
        time.sleep(0.05)


def refused_logins(
    context: Context, base: Command, bootstrap: dict[str, str], certs: Path, broker: RunningBroker
) -> None:
    """A wrong password and an unknown user are refused with the authentication error, and the
    client stops: no hang, no retry storm."""
    for variant, credentials in (
        ("wrong password", (USER, "wrong")),
        ("unknown user", ("mallory", PASSWORD)),
    ):
        command = replace(
            base,
            bootstrap=bootstrap["SASL_SSL"],
            topic=context.name("refused"),
            count=1,
            timeout_s=OWN_ERROR_TIMEOUT_S if context.client in OWN_ERROR else 30,
            security=settings(certs, "SASL_SSL", "SCRAM-SHA-256", *credentials),
        )
        seen = len(broker.output)
        started = time.monotonic()
        try:
            context.run(command)
        except DriverFailed as exc:
            text = str(exc)
        else:
            raise AssertionError(f"{variant}: accepted")
        elapsed = time.monotonic() - started
        refusals = refusal_lines(broker, seen)
        context.timing(f"{variant}: client gave up after s", elapsed)
        context.notes.append(f"{variant}: {len(refusals)} login attempt(s) in {elapsed:.1f} s")
        assert refusals, f"{variant}: the broker refused nobody"
        # A few at once (a client may open more than one connection), then at most ~3/s: what
        # Kafka's 100 ms connection.failed.authentication.delay.ms leaves of librdkafka's
        # re-bootstrap loop, which without it runs at ~20/s.
        assert len(refusals) <= 3 + 3 * elapsed, f"{variant}: {len(refusals)} attempts in {elapsed:.1f} s"
        if context.client in OWN_ERROR:
            if OWN_ERROR[context.client] not in context.notes:
                context.notes.append(OWN_ERROR[context.client])
        else:
            assert "authentication" in text.lower(), f"{variant}: not an authentication error: {text[-800:]}"
        context.observe(variant, "refused")
