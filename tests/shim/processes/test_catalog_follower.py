"""A non-controller's topics follow the controller's catalog on disk: made with the same ids,
partitions, replicas and configs, grown, reconfigured, deleted and made anew; internal topics
stay each process's own."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from kafka_shim.shim.processes.catalog_follower import CatalogFollower
from kafka_shim.storage.disk_store import DiskStore
from kafka_shim.storage.durability import DiskOptions
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.offsets_log import OFFSETS_TOPIC
from kafka_shim.storage.topics import TopicStore
from tests.helpers import FakeClock


@pytest.fixture
def controller(tmp_path: Path) -> Iterator[DiskStore]:
    store = DiskStore(tmp_path, DiskOptions(clock=FakeClock()))
    yield store
    store.close()


def follower_of(controller: DiskStore) -> tuple[TopicStore, CatalogFollower]:
    topics = TopicStore(lambda topic, partition: MemoryLog(), auto_create=False)
    return topics, CatalogFollower(topics, controller.data_dir.path)


def shape(topics: TopicStore) -> dict[str, tuple[object, int, dict[str, str], object]]:
    return {t.name: (t.topic_id, len(t.partitions), t.configs, t.replicas) for t in topics}


def test_the_follower_makes_what_the_controller_made(controller: DiskStore) -> None:
    topics, follower = follower_of(controller)
    follower.sync()  # no catalog yet: nothing
    assert len(topics) == 0
    controller.topics.create("orders", 3, {"retention.ms": "1000"}, assignment=[[0], [1], [0]])
    follower.sync()
    assert shape(topics) == shape(controller.topics)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda store: store.add_partitions("orders", 5, [[1], [0]]), id="grown"),
        pytest.param(
            lambda store: store.set_configs("orders", {"cleanup.policy": "compact"}), id="reconfigured"
        ),
        pytest.param(lambda store: store.delete("orders"), id="deleted"),
    ],
)
def test_the_follower_follows_each_change(controller: DiskStore, change: object) -> None:
    controller.topics.create("orders", 3, assignment=[[0], [1], [0]])
    topics, follower = follower_of(controller)
    follower.sync()
    change(controller.topics)  # type: ignore[operator]
    follower.sync()
    assert shape(topics) == shape(controller.topics)


def test_internal_topics_are_each_process_s_own(controller: DiskStore) -> None:
    controller.topics.create(OFFSETS_TOPIC, 2)
    topics, follower = follower_of(controller)
    own = topics.create(OFFSETS_TOPIC, 2)
    follower.sync()
    assert topics.get(OFFSETS_TOPIC) is own


def test_a_topic_made_anew_is_followed_once_its_name_is_free(controller: DiskStore) -> None:
    controller.topics.create("orders", 3, assignment=[[0], [1], [0]])
    topics, follower = follower_of(controller)
    follower.sync()
    controller.topics.delete("orders")
    deadline = time.monotonic() + 10
    while controller.remover.removing("orders"):  # the old logs are removed off the loop
        assert time.monotonic() < deadline, "the deleted topic's logs were not removed in 10 s"
        time.sleep(0.01)
    controller.topics.create("orders", 1, assignment=[[1]])
    follower.sync()
    assert shape(topics) == shape(controller.topics)


def test_a_request_naming_an_unknown_topic_follows_at_once(controller: DiskStore) -> None:
    topics, follower = follower_of(controller)
    follower.sync()
    made = controller.topics.create("orders", 1)
    follower.sync_if_unknown([SimpleNamespace(name="orders")])
    assert topics.get("orders") is not None
    payments = controller.topics.create("payments", 1)
    follower.sync_if_unknown([SimpleNamespace(name="orders", topic_id=made.topic_id)])  # known: no look
    assert topics.get("payments") is None
    follower.sync_if_unknown([SimpleNamespace(name="", topic_id=payments.topic_id)])
    assert topics.get("payments") is not None
