"""The emulated brokers' controls through the control endpoint, as `kafka-shim ctl` drives it:
show the cluster, stop and start a broker, move a leader and a coordinator, and the refusals."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from kafka_shim.shim.cli import ctl
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread


@pytest.fixture
def cluster() -> Iterator[BrokerThread]:
    config = replace(BrokerConfig(host="127.0.0.1", port=0, control_listener="127.0.0.1:0"), brokers=3)
    thread = BrokerThread(config).start()
    thread.call(lambda: thread.broker.topics.create("orders", 2, {}))
    yield thread
    thread.stop()


def run_ctl(cluster: BrokerThread, capsys: pytest.CaptureFixture[str], *words: str, code: int = 0) -> Any:
    assert ctl.main(["--url", cluster.server.control_urls[0], *words]) == code
    out, err = capsys.readouterr()
    return json.loads(out) if code == 0 else err


def test_ctl_stops_and_starts_a_broker(cluster: BrokerThread, capsys: pytest.CaptureFixture[str]) -> None:
    shown = run_ctl(cluster, capsys, "cluster")
    assert [(b["node_id"], b["running"]) for b in shown["brokers"]] == [(0, True), (1, True), (2, True)]
    host, port = cluster.address(1).rsplit(":", 1)
    stopped = run_ctl(cluster, capsys, "broker", "stop", "1")
    assert [b["running"] for b in stopped["brokers"]] == [True, False, True]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((host, int(port)), timeout=5).close()
    assert "already stopped" in run_ctl(cluster, capsys, "broker", "stop", "1", code=1)
    run_ctl(cluster, capsys, "broker", "start", "1")
    socket.create_connection((host, int(port)), timeout=5).close()


def test_ctl_shows_and_moves_a_leader(cluster: BrokerThread, capsys: pytest.CaptureFixture[str]) -> None:
    before = run_ctl(cluster, capsys, "leader", "orders", "0")
    assert (before["leader_epoch"], sorted(before["isr"])) == (0, [0, 1, 2])
    target = (before["leader"] + 1) % 3
    moved = run_ctl(cluster, capsys, "leader", "orders", "0", str(target))
    assert (moved["leader"], moved["leader_epoch"]) == (target, 1)
    assert cluster.leader("orders", 0) == target


def test_ctl_shows_and_moves_a_coordinator(cluster: BrokerThread, capsys: pytest.CaptureFixture[str]) -> None:
    current = run_ctl(cluster, capsys, "coordinator", "group=billing")["node"]
    target = (current + 1) % 3
    assert run_ctl(cluster, capsys, "coordinator", "group=billing", f"node={target}") == {"node": target}
    assert cluster.coordinator(group="billing") == target
    moved = run_ctl(cluster, capsys, "coordinator", "transactional_id=tx", "node=0")
    assert moved == {"node": 0}


@pytest.mark.parametrize(
    ("words", "reason"),
    [
        (("broker", "stop", "7"), "no broker 7"),  # 404
        (("leader", "nope", "0"), "no partition nope-0"),  # 404
        (("coordinator", "node=1"), "name one of group or transactional_id"),  # 409
    ],
)
def test_ctl_refusals_say_why(
    cluster: BrokerThread, capsys: pytest.CaptureFixture[str], words: tuple[str, ...], reason: str
) -> None:
    assert reason in run_ctl(cluster, capsys, *words, code=1)


def test_a_stopped_broker_cannot_be_given_a_partition(
    cluster: BrokerThread, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster.stop_broker(2)
    assert "broker 2 is stopped" in run_ctl(cluster, capsys, "leader", "orders", "0", "2", code=1)
