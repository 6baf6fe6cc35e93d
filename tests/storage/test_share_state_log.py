"""__share_group_state: ShareSnapshot and ShareUpdate records in Kafka's format, the latest
snapshot per share partition replayed with the updates after it, tombstones forgetting one."""

from __future__ import annotations

import uuid

from kafka_shim.protocol.share_state_records import (
    SharePartitionKey,
    ShareStateRecord,
    decode_record,
    encode_record,
)
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.share_state_log import SHARE_STATE_TOPIC, ShareStateLog
from kafka_shim.storage.topics import TopicStore

KEY = SharePartitionKey("g", uuid.UUID(int=5), 3)
OTHER = KEY._replace(partition=4)


def snapshot(start: int, batches: list[tuple[int, int, int, int]]) -> dict[str, object]:
    return {
        "snapshot_epoch": 0,
        "state_epoch": 0,
        "leader_epoch": 0,
        "start_offset": start,
        "delivery_complete_count": 1,
        "create_timestamp": 10,
        "write_timestamp": 20,
        "state_batches": [
            {"first_offset": f, "last_offset": last, "delivery_state": s, "delivery_count": c}
            for f, last, s, c in batches
        ],
    }


def test_the_key_and_value_are_kafkas() -> None:
    key, value = encode_record(ShareStateRecord(KEY, snapshot(7, [(7, 9, 0, 2)])))
    # key version 0 (ShareSnapshotKey), then group, topic id, partition
    assert key[:2] == b"\x00\x00" and key[2:5] == b"\x00\x01g" and key[-4:] == b"\x00\x00\x00\x03"
    assert value is not None and value[:2] == b"\x00\x00"
    decoded = decode_record(key, value)
    assert decoded.key == KEY and decoded.value is not None
    assert decoded.value["start_offset"] == 7 and decoded.value["delivery_complete_count"] == 1


def test_replay_keeps_the_latest_snapshot_and_honours_tombstones() -> None:
    topics = TopicStore(lambda topic, partition: MemoryLog())
    log = ShareStateLog(topics, 2)
    log.append(
        [ShareStateRecord(KEY, snapshot(0, [(0, 4, 0, 1)])), ShareStateRecord(OTHER, snapshot(0, []))], 1
    )
    log.append([ShareStateRecord(KEY, snapshot(3, [(3, 4, 2, 1)]))], 2)
    log.append([ShareStateRecord(OTHER, None)], 3)
    topic = topics.get(SHARE_STATE_TOPIC)
    assert topic is not None and len(topic.partitions) == 2
    replayed = ShareStateLog(topics, 2).replay()
    assert list(replayed) == [KEY]
    assert replayed[KEY].fields["start_offset"] == 3
    assert [tuple(b.values()) for b in replayed[KEY].fields["state_batches"]] == [(3, 4, 2, 1)]


def update(start: int, batches: list[tuple[int, int, int, int]], epoch: int = 0) -> dict[str, object]:
    return {
        "snapshot_epoch": epoch,
        "leader_epoch": 0,
        "start_offset": start,
        "delivery_complete_count": -1,
        "state_batches": [
            {"first_offset": f, "last_offset": last, "delivery_state": s, "delivery_count": c}
            for f, last, s, c in batches
        ],
    }


def test_a_share_update_is_kafkas_key_version_1() -> None:
    key, value = encode_record(ShareStateRecord(KEY, update(7, [(8, 8, 2, 1)]), update=True))
    assert key[:2] == b"\x00\x01" and value is not None and value[:2] == b"\x00\x00"
    decoded = decode_record(key, value)
    assert decoded.update and decoded.value is not None and decoded.value["start_offset"] == 7


def test_replay_applies_the_updates_after_the_latest_snapshot() -> None:
    topics = TopicStore(lambda topic, partition: MemoryLog())
    log = ShareStateLog(topics, 1)
    log.append([ShareStateRecord(KEY, snapshot(0, [(0, 4, 0, 1)]))], 1)
    log.append([ShareStateRecord(KEY, update(0, [(1, 2, 2, 1)]), update=True)], 2)  # 1-2 acknowledged
    log.append([ShareStateRecord(KEY, update(1, [(0, 0, 4, 1)]), update=True)], 3)  # 0 archived, start 1
    replayed = ShareStateLog(topics, 1).replay()[KEY]
    assert replayed.updates == 2
    assert replayed.fields["start_offset"] == 1
    assert [tuple(b.values()) for b in replayed.fields["state_batches"]] == [(1, 2, 2, 1), (3, 4, 0, 1)]
    log.append([ShareStateRecord(KEY, snapshot(3, [(3, 4, 0, 2)]))], 4)  # a snapshot starts over
    again = ShareStateLog(topics, 1).replay()[KEY]
    assert again.updates == 0 and again.fields["start_offset"] == 3
