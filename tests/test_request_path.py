"""The rules the path of a request keeps (tests/request_path.py traces it through a broker's
modules): the layers are entered from the socket down, and nothing below the services (a
coordinator, the protocol, storage) calls back up into the broker."""

from __future__ import annotations

import pytest

from tests.request_path import LAYERS, Path, layer, paths

BELOW_SERVICES = [name for name, _ in LAYERS].index("coordinators")  # and protocol, storage


@pytest.fixture(scope="module")
def traced() -> dict[str, Path]:
    return paths()


def test_a_join_group_and_a_fetch_reach_the_log_through_each_layer(traced: dict[str, Path]) -> None:
    for name, path in traced.items():
        # (Not "the first module is the network's": a timer's task may wake first.)
        assert {"kafka_shim.shim.net.connections", "kafka_shim.shim.net.dispatch"} <= set(path.modules)
        depths = {layer(module)[0] for module in path.modules}
        assert max(depths) == len(LAYERS) - 1, f"{name} never reached protocol or storage: {path.modules}"
    join = traced["JoinGroup (the member's, answered when the group forms)"]
    assert "kafka_shim.shim.groups.service" in join.modules
    assert "kafka_shim.shim.partitions.read" in traced["Fetch (one batch)"].modules


def test_nothing_below_the_services_calls_back_up(traced: dict[str, Path]) -> None:
    for name, path in traced.items():
        from_below = {pair: n for pair, n in path.climbs.items() if layer(pair[0])[0] >= BELOW_SERVICES}
        assert not from_below, f"{name} climbs back from below the services: {from_below}"
