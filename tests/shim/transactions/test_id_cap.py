"""transactional.id.max.count (kafka-shim's own cap on the ids kept): past it, a new id expires
the least recently used idle ids first, as transactional.id.expiration.ms would; ids with a
transaction open or completing are never taken, and when nothing else is left the new id is
answered COORDINATOR_LOAD_IN_PROGRESS, which clients retry."""

from __future__ import annotations

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.transactions.coordinator import ProducerIdAndEpoch, TransactionConfig
from tests.shim.transactions.driver import TIMEOUT_MS, Driver

T0 = TopicPartition("t", 0)


def init(driver: Driver, txn: str) -> ProducerIdAndEpoch:
    answer = driver.coordinator.init_producer_id(txn, TIMEOUT_MS, None, driver.now)
    driver.clock.now += 1
    return answer


def kept(driver: Driver) -> list[str]:
    listings, _ = driver.coordinator.list_transactions((), (), -1, driver.now)
    return sorted(listing.transactional_id for listing in listings)


def test_past_the_cap_the_least_recently_used_idle_id_expires_with_a_tombstone() -> None:
    driver = Driver(TransactionConfig(max_ids=3))
    for txn in ("a", "b", "c"):
        assert init(driver, txn).error == ErrorCode.NONE
    assert init(driver, "a").error == ErrorCode.NONE  # used again: b is now the oldest
    old_b = driver.coordinator.describe("b")
    assert old_b is not None
    assert init(driver, "d").error == ErrorCode.NONE
    assert kept(driver) == ["a", "c", "d"]
    tombstones = [r.transactional_id for r in driver.records if r.value is None]
    assert tombstones == ["b"]
    # b's producer, back later, is answered as after expiry; a new init starts it afresh.
    refused = driver.coordinator.add_partitions(
        "b", old_b.producer_id, old_b.producer_epoch, [T0], 0, driver.now
    )
    assert refused == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert init(driver, "b").error == ErrorCode.NONE
    assert len(kept(driver)) == 3


def test_ids_with_a_transaction_open_are_kept_and_a_new_one_waits_for_room() -> None:
    driver = Driver(TransactionConfig(max_ids=2))
    producers = {}
    for txn in ("a", "b"):
        answer = init(driver, txn)
        producers[txn] = answer
        added = driver.coordinator.add_partitions(
            txn, answer.producer_id, answer.producer_epoch, [T0], 0, driver.now
        )
        assert added == ErrorCode.NONE
    assert init(driver, "c").error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    assert kept(driver) == ["a", "b"]
    a = producers["a"]
    ended = driver.coordinator.end_transaction("a", a.producer_id, a.producer_epoch, True, 0, driver.now)
    assert ended.error == ErrorCode.NONE
    assert init(driver, "c").error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS  # a still completing
    driver.write_markers()
    assert init(driver, "c").error == ErrorCode.NONE  # a committed, idle: it goes
    assert kept(driver) == ["b", "c"]
