"""Raw-protocol conformance probe #2: Kafka APIs beyond consumer groups.

The probe that recorded golden-kafka-3.9.0.jsonl from a fresh Apache Kafka 3.9.0 broker,
written by this project's team; here it is typed, formatted and driven by corpus.py
(`python -m tests.fidelity --bootstrap HOST:PORT --out FILE` records a broker's answers).
Its requests and normalization are unchanged, so a new recording stays comparable.

Covers topic administration (CreateTopics, DeleteTopics, CreatePartitions, DescribeConfigs,
AlterConfigs, IncrementalAlterConfigs, DeleteRecords, ListOffsets, OffsetDelete,
DescribeCluster, DescribeLogDirs, ElectLeaders, Metadata), internal topics, idempotent and
transactional producers (InitProducerId, Produce, AddPartitionsToTxn, AddOffsetsToTxn,
TxnOffsetCommit, EndTxn, ListTransactions, DescribeTransactions, DescribeProducers,
read_committed Fetch), ACLs, SCRAM credentials, client quotas and KIP-848
(ConsumerGroupHeartbeat / ConsumerGroupDescribe v0, encoded from Kafka 3.9's message specs).

Requests are hand-built and encoded with kafka-python 3.0.x's schema-generated message
classes; each request/response pair becomes one JSON line, in case order:

    {"case": ..., "step": ..., "api": ..., "key": ..., "version": ...,
     "request": {...}, "response": {...} | "outcome": "timeout"|"closed"|"decode_error"}

Volatile values are normalized so that two runs, or two brokers, can be compared
(docs/compatibility.md): the per-run token -> RUN, producer ids -> <pid-N>, uuids (topic
ids) -> <uuid-N>, KIP-848 member ids -> <member-N> (numbered by first appearance within a
case), the broker's node id/host/port -> <node>/<host>/<port>, cluster id, log dir paths,
disk sizes and transaction start times -> placeholders, throttle_time_ms dropped.
Config lists become maps keyed by config name; record batches are decoded.

Cases run one after another (several touch broker-wide state: ACLs, quotas, SCRAM users,
the transaction list). Every case names its own topics, groups, transactional ids, users and
principals with the prefix p2-<token>-<case>, and responses that list broker-wide state are
filtered to that prefix. The cases that alter __consumer_offsets itself run last.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import functools
import json
import os
import re
import select
import socket
import struct
import sys
import time
import uuid
from typing import Any

import kafka.protocol.api_data as _api_data
from kafka.protocol.admin.acl import (
    CreateAclsRequest,
    CreateAclsResponse,
    DeleteAclsRequest,
    DeleteAclsResponse,
    DescribeAclsRequest,
    DescribeAclsResponse,
)
from kafka.protocol.admin.client_quotas import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
)
from kafka.protocol.admin.cluster import (
    DescribeClusterRequest,
    DescribeClusterResponse,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
)
from kafka.protocol.admin.configs import (
    AlterConfigsRequest,
    AlterConfigsResponse,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)
from kafka.protocol.admin.groups import (
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    ListGroupsRequest,
    ListGroupsResponse,
)
from kafka.protocol.admin.topics import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
)
from kafka.protocol.admin.transactions import (
    DescribeProducersRequest,
    DescribeProducersResponse,
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    ListTransactionsRequest,
    ListTransactionsResponse,
)
from kafka.protocol.admin.users import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)
from kafka.protocol.api_key import ApiKey
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer.fetch import FetchRequest, FetchResponse
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.consumer.offsets import ListOffsetsRequest, ListOffsetsResponse
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse
from kafka.protocol.metadata.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.producer.produce import ProduceRequest, ProduceResponse
from kafka.protocol.producer.transaction import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from kafka.protocol.schemas.load_json import _resolve_common_structs
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

# --------------------------------------------------------------------------- KIP-848 message classes
# kafka-python 3.0.x has no ConsumerGroupHeartbeat / ConsumerGroupDescribe classes. These are the
# v0 layouts of Kafka 3.9.0 (clients/src/main/resources/common/message/ConsumerGroup*{Request,Response}.json
# as shipped in 3.9: no SubscribedTopicRegex/ClientAssignors in the request, no MetadataVersion/Bytes in the
# describe Assignment), fed to kafka-python's own JSON-schema machinery.


def _f(name: Any, typ: Any, **kw: Any) -> Any:
    d = {"name": name, "type": typ, "versions": "0+"}
    if kw.pop("nullable", False):
        d["nullableVersions"] = "0+"
    d.update(kw)
    return d


_TP = [_f("TopicId", "uuid"), _f("Partitions", "[]int32")]
_TPN = [_f("TopicId", "uuid"), _f("TopicName", "string"), _f("Partitions", "[]int32")]
KIP848_SPECS = {
    "ConsumerGroupHeartbeatRequest": {
        "apiKey": 68,
        "type": "request",
        "name": "ConsumerGroupHeartbeatRequest",
        "validVersions": "0",
        "flexibleVersions": "0+",
        "fields": [
            _f("GroupId", "string"),
            _f("MemberId", "string"),
            _f("MemberEpoch", "int32"),
            _f("InstanceId", "string", nullable=True, default="null"),
            _f("RackId", "string", nullable=True, default="null"),
            _f("RebalanceTimeoutMs", "int32", default=-1),
            _f("SubscribedTopicNames", "[]string", nullable=True, default="null"),
            _f("ServerAssignor", "string", nullable=True, default="null"),
            _f("TopicPartitions", "[]TopicPartitions", nullable=True, default="null", fields=_TP),
        ],
    },
    "ConsumerGroupHeartbeatResponse": {
        "apiKey": 68,
        "type": "response",
        "name": "ConsumerGroupHeartbeatResponse",
        "validVersions": "0",
        "flexibleVersions": "0+",
        "fields": [
            _f("ThrottleTimeMs", "int32"),
            _f("ErrorCode", "int16"),
            _f("ErrorMessage", "string", nullable=True, default="null"),
            _f("MemberId", "string", nullable=True, default="null"),
            _f("MemberEpoch", "int32"),
            _f("HeartbeatIntervalMs", "int32"),
            _f(
                "Assignment",
                "Assignment",
                nullable=True,
                default="null",
                fields=[_f("TopicPartitions", "[]TopicPartitions", fields=_TP)],
            ),
        ],
    },
    "ConsumerGroupDescribeRequest": {
        "apiKey": 69,
        "type": "request",
        "name": "ConsumerGroupDescribeRequest",
        "validVersions": "0",
        "flexibleVersions": "0+",
        "fields": [_f("GroupIds", "[]string"), _f("IncludeAuthorizedOperations", "bool")],
    },
    "ConsumerGroupDescribeResponse": {
        "apiKey": 69,
        "type": "response",
        "name": "ConsumerGroupDescribeResponse",
        "validVersions": "0",
        "flexibleVersions": "0+",
        "fields": [
            _f("ThrottleTimeMs", "int32"),
            _f(
                "Groups",
                "[]DescribedGroup",
                fields=[
                    _f("ErrorCode", "int16"),
                    _f("ErrorMessage", "string", nullable=True, default="null"),
                    _f("GroupId", "string"),
                    _f("GroupState", "string"),
                    _f("GroupEpoch", "int32"),
                    _f("AssignmentEpoch", "int32"),
                    _f("AssignorName", "string"),
                    _f(
                        "Members",
                        "[]Member",
                        fields=[
                            _f("MemberId", "string"),
                            _f("InstanceId", "string", nullable=True, default="null"),
                            _f("RackId", "string", nullable=True, default="null"),
                            _f("MemberEpoch", "int32"),
                            _f("ClientId", "string"),
                            _f("ClientHost", "string"),
                            _f("SubscribedTopicNames", "[]string"),
                            _f("SubscribedTopicRegex", "string", nullable=True, default="null"),
                            _f(
                                "Assignment",
                                "Assignment",
                                fields=[_f("TopicPartitions", "[]TopicPartitions", fields=_TPN)],
                            ),
                            _f(
                                "TargetAssignment",
                                "Assignment",
                                fields=[_f("TopicPartitions", "[]TopicPartitions", fields=_TPN)],
                            ),
                        ],
                    ),
                    _f("AuthorizedOperations", "int32", default="-2147483648"),
                ],
            ),
        ],
    },
}
_orig_load_json = _api_data.load_json


def _load_json(name: Any, package: Any = None) -> Any:
    if name in KIP848_SPECS:
        d = copy.deepcopy(KIP848_SPECS[name])
        _resolve_common_structs(d["fields"], {})
        return d
    return _orig_load_json(name, package)


_api_data.load_json = _load_json


class ConsumerGroupHeartbeatRequest(ApiMessage):
    pass


class ConsumerGroupHeartbeatResponse(ApiMessage):
    pass


class ConsumerGroupDescribeRequest(ApiMessage):
    pass


class ConsumerGroupDescribeResponse(ApiMessage):
    pass


_api_data.load_json = _orig_load_json

APIS = {}
for _req, _resp in (
    (ApiVersionsRequest, ApiVersionsResponse),
    (FindCoordinatorRequest, FindCoordinatorResponse),
    (MetadataRequest, MetadataResponse),
    (JoinGroupRequest, JoinGroupResponse),
    (SyncGroupRequest, SyncGroupResponse),
    (HeartbeatRequest, HeartbeatResponse),
    (LeaveGroupRequest, LeaveGroupResponse),
    (OffsetCommitRequest, OffsetCommitResponse),
    (OffsetFetchRequest, OffsetFetchResponse),
    (OffsetDeleteRequest, OffsetDeleteResponse),
    (FetchRequest, FetchResponse),
    (ListOffsetsRequest, ListOffsetsResponse),
    (DescribeGroupsRequest, DescribeGroupsResponse),
    (ListGroupsRequest, ListGroupsResponse),
    (CreateTopicsRequest, CreateTopicsResponse),
    (DeleteTopicsRequest, DeleteTopicsResponse),
    (CreatePartitionsRequest, CreatePartitionsResponse),
    (DeleteRecordsRequest, DeleteRecordsResponse),
    (ElectLeadersRequest, ElectLeadersResponse),
    (DescribeConfigsRequest, DescribeConfigsResponse),
    (AlterConfigsRequest, AlterConfigsResponse),
    (IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse),
    (DescribeClusterRequest, DescribeClusterResponse),
    (DescribeLogDirsRequest, DescribeLogDirsResponse),
    (CreateAclsRequest, CreateAclsResponse),
    (DescribeAclsRequest, DescribeAclsResponse),
    (DeleteAclsRequest, DeleteAclsResponse),
    (DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse),
    (AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse),
    (DescribeClientQuotasRequest, DescribeClientQuotasResponse),
    (AlterClientQuotasRequest, AlterClientQuotasResponse),
    (ListTransactionsRequest, ListTransactionsResponse),
    (DescribeTransactionsRequest, DescribeTransactionsResponse),
    (DescribeProducersRequest, DescribeProducersResponse),
    (ProduceRequest, ProduceResponse),
    (InitProducerIdRequest, InitProducerIdResponse),
    (AddPartitionsToTxnRequest, AddPartitionsToTxnResponse),
    (AddOffsetsToTxnRequest, AddOffsetsToTxnResponse),
    (EndTxnRequest, EndTxnResponse),
    (TxnOffsetCommitRequest, TxnOffsetCommitResponse),
    (ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse),
    (ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse),
):
    APIS[_req.name[: -len("Request")]] = (_req, _resp)

# Versions: (lowest the kafka-python class offers, a middle one, highest that Kafka 3.9.0 and kafka-shim
# both advertise). Families parametrized by version run once per entry.
V = {
    "CreateTopics": (2, 5, 7),
    "DeleteTopics": (1, 4, 6),
    "CreatePartitions": (0, 2, 3),
    "DescribeConfigs": (1, 3, 4),
    "AlterConfigs": (0, 1, 2),
    "IncrementalAlterConfigs": (0, 1),
    "DeleteRecords": (0, 1, 2),
    "ListOffsets": (1, 5, 9),
    "OffsetDelete": (0,),
    "DescribeCluster": (0, 1),
    "DescribeLogDirs": (1, 2, 4),
    "ElectLeaders": (0, 1, 2),
    "Metadata": (0, 9, 12),
    "Produce": (3, 7, 11),
    "Fetch": (4, 11, 17),
    "InitProducerId": (0, 3, 5),
    "AddPartitionsToTxn": (0, 2, 3, 4, 5),
    "AddOffsetsToTxn": (0, 2, 4),
    "EndTxn": (0, 2, 4),
    "TxnOffsetCommit": (0, 2, 4),
    "CreateAcls": (1, 2, 3),
    "DescribeAcls": (1, 2, 3),
    "DeleteAcls": (1, 2, 3),
    "DescribeUserScramCredentials": (0,),
    "AlterUserScramCredentials": (0,),
    "DescribeClientQuotas": (0, 1),
    "AlterClientQuotas": (0, 1),
    "ListTransactions": (0, 1),
    "DescribeTransactions": (0,),
    "DescribeProducers": (0,),
    "ConsumerGroupHeartbeat": (0,),
    "ConsumerGroupDescribe": (0,),
}
# Transaction profiles: one version per API for the transactional flows (named by EndTxn version).
TXN = {
    "t0": dict(
        FindCoordinator=1,
        InitProducerId=0,
        AddPartitionsToTxn=0,
        AddOffsetsToTxn=0,
        TxnOffsetCommit=0,
        EndTxn=0,
        Produce=3,
        Fetch=4,
        ListOffsets=2,
        OffsetFetch=7,
        ListTransactions=0,
    ),
    "t2": dict(
        FindCoordinator=3,
        InitProducerId=3,
        AddPartitionsToTxn=2,
        AddOffsetsToTxn=2,
        TxnOffsetCommit=2,
        EndTxn=2,
        Produce=7,
        Fetch=11,
        ListOffsets=5,
        OffsetFetch=7,
        ListTransactions=0,
    ),
    "t4": dict(
        FindCoordinator=6,
        InitProducerId=5,
        AddPartitionsToTxn=3,
        AddOffsetsToTxn=4,
        TxnOffsetCommit=4,
        EndTxn=4,
        Produce=11,
        Fetch=17,
        ListOffsets=9,
        OffsetFetch=8,
        ListTransactions=1,
    ),
}

RESPONSE_TIMEOUT = 10.0
WAIT_LIMIT = 10.0  # longest wait for metadata/transaction state to settle (unrecorded polling)
TS0 = 4102444800000  # 2100-01-01T00:00:00Z: record timestamps (fixed, and never past retention)
BOGUS = "bogus-member-id"
BOGUS_PID = 987654321
BOGUS_UUID = uuid.UUID("0badc0de-0000-4000-8000-00000000beef")
TIMEOUT, CLOSED = "timeout", "closed"

# resource / ACL enums
R_ANY, R_TOPIC, R_GROUP, R_CLUSTER, R_TXN = 1, 2, 3, 4, 5  # ACL resource types
R_BROKER, R_BROKER_LOGGER = 4, 8  # config resource types
CFG_TOPIC, CFG_BROKER = 2, 4
P_UNKNOWN, P_ANY, P_MATCH, P_LITERAL, P_PREFIXED = 0, 1, 2, 3, 4
OP_ANY, OP_ALL, OP_READ, OP_WRITE, OP_DESCRIBE = 1, 2, 3, 4, 8
PERM_ANY, PERM_DENY, PERM_ALLOW = 1, 2, 3
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


# --------------------------------------------------------------------------- encoding helpers


def build(cls: Any, values: Any) -> Any:
    """Build a kafka-python data container (recursively) from a plain dict."""
    kwargs = {}
    for name, val in values.items():
        field = cls.fields[name]
        if field.is_struct_array() and val is not None:
            val = [build(field.data_class, v) for v in val]
        elif field.is_struct() and val is not None:
            val = build(field.data_class, val)
        kwargs[name] = val
    return cls(**kwargs)


def plain(obj: Any, version: int) -> Any:
    """Data container -> plain dict with only the fields valid for `version` (uuids stay uuid.UUID)."""
    out: dict[str, Any] = {}
    for field in obj._struct._fields:
        if not field.for_version_q(version):
            continue
        val = getattr(obj, field.name)
        if val is None:
            out[field.name] = None
        elif field.is_struct_array():
            out[field.name] = [plain(v, version) for v in val]
        elif field.is_struct():
            out[field.name] = plain(val, version)
        else:
            out[field.name] = jsonable(val)
    return out


BLOB_LABELS: dict[bytes, str] = {}


def jsonable(val: Any) -> Any:
    if isinstance(val, memoryview):
        val = val.tobytes()
    if isinstance(val, (bytes, bytearray)):
        b = bytes(val)
        if b in BLOB_LABELS:
            return BLOB_LABELS[b]
        if all(32 <= c < 127 for c in b):
            return "b:" + b.decode()
        return "hex:" + b.hex()
    if isinstance(val, (set, frozenset)):
        return sorted(jsonable(v) for v in val)
    if isinstance(val, (list, tuple)):
        return [jsonable(v) for v in val]
    if isinstance(val, uuid.UUID):
        return val
    if hasattr(val, "value") and isinstance(val.value, int) and not isinstance(val, bool):
        return int(val)
    return val


def kstr(s: Any) -> Any:
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def subscription(name: Any, topics: Any) -> Any:
    """ConsumerProtocolSubscription v0 (classic consumer protocol) with user_data=name."""
    b = (
        struct.pack(">hi", 0, len(topics))
        + b"".join(kstr(t) for t in topics)
        + struct.pack(">i", len(name))
        + name.encode()
    )
    BLOB_LABELS[b] = f"<subscription:{name}>"
    return b


def assignment(name: Any, topic: Any, parts: Any) -> Any:
    b = (
        struct.pack(">hi", 0, 1)
        + kstr(topic)
        + struct.pack(">i", len(parts))
        + b"".join(struct.pack(">i", p) for p in parts)
        + struct.pack(">i", len(name))
        + name.encode()
    )
    BLOB_LABELS[b] = f"<assignment:{name}>"
    return b


def batch(records: Any, pid: Any = -1, epoch: Any = -1, seq: Any = -1, txn: Any = False) -> Any:
    """A v2 record batch: records = [(key, value, timestamp), ...]."""
    b = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=txn,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        batch_size=1 << 20,
    )
    for i, (k, v, ts) in enumerate(records):
        b.append(i, timestamp=ts, key=k, value=v, headers=[])
    return bytes(b.build())


def summarize_records(data: Any) -> Any:
    """Record-set bytes -> list of decoded batches (control-record timestamps, which are broker
    wall-clock times, are left out)."""
    if data is None:
        return None
    b = bytes(data)
    out = []
    mr = MemoryRecords(b)
    try:
        while True:
            bt = mr.next_batch()
            if bt is None:
                break
            if bt.magic < 2:
                out.append(
                    {
                        "magic": bt.magic,
                        "records": [
                            {
                                "offset": r.offset,
                                "timestamp": r.timestamp,
                                "key": jsonable(r.key),
                                "value": jsonable(r.value),
                            }
                            for r in bt
                        ],
                    }
                )
                continue
            d = {
                "base_offset": bt.base_offset,
                "last_offset_delta": bt.last_offset_delta,
                "partition_leader_epoch": bt.leader_epoch,
                "magic": bt.magic,
                "crc_ok": bt.validate_crc(),
                "compression": bt.compression_type,
                "timestamp_type": bt.timestamp_type,
                "producer_id": bt.producer_id,
                "producer_epoch": bt.producer_epoch,
                "base_sequence": bt.base_sequence,
                "transactional": bt.is_transactional,
                "control": bt.is_control_batch,
            }
            recs = []
            for r in bt:
                if bt.is_control_batch:
                    val = bytes(r.value) if r.value is not None else b""
                    cv = struct.unpack(">hi", val[:6]) if len(val) >= 6 else None
                    recs.append(
                        {
                            "offset": r.offset,
                            "control_type": {0: "ABORT", 1: "COMMIT"}.get(r.type, r.type),
                            "control_version": r.version,
                            "coordinator_epoch": cv[1] if cv else None,
                        }
                    )
                else:
                    recs.append(
                        {
                            "offset": r.offset,
                            "timestamp": r.timestamp,
                            "key": jsonable(r.key),
                            "value": jsonable(r.value),
                            "headers": [[h[0], jsonable(h[1])] for h in (r.headers or [])],
                        }
                    )
            d["records"] = recs
            out.append(d)
    except Exception as e:
        out.append({"decode_error": f"{type(e).__name__}: {e}"})
    return out


# --------------------------------------------------------------------------- connection


class Conn:
    def __init__(self, addr: Any, client_id: Any) -> None:
        self.addr, self.client_id = addr, client_id
        self.sock: socket.socket | None = None
        self.rbuf, self.corr = b"", 0

    def ensure(self) -> socket.socket:
        if self.sock is None:
            self.sock = socket.create_connection(self.addr, timeout=5)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.rbuf = b""
        return self.sock

    def close(self) -> None:
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.close()
        self.sock, self.rbuf = None, b""

    def send_bytes(self, data: Any) -> Any:
        try:
            self.ensure().sendall(data)
            return True
        except OSError:
            self.close()
            return False

    def read_frame(self, timeout: Any) -> Any:
        if self.sock is None:
            return CLOSED
        deadline = time.monotonic() + timeout
        while True:
            if len(self.rbuf) >= 4:
                n = struct.unpack(">i", self.rbuf[:4])[0]
                if n >= 0 and len(self.rbuf) >= 4 + n:
                    data, self.rbuf = self.rbuf[4 : 4 + n], self.rbuf[4 + n :]
                    return data
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return TIMEOUT
            try:
                # poll, not select: in a long test run the descriptor may be over 1024, and
                # select()'s ValueError would read as the peer closing
                readable = select.poll()
                readable.register(self.sock, select.POLLIN)
                r = readable.poll(remaining * 1000)
            except OSError:
                self.close()
                return CLOSED
            if not r:
                return TIMEOUT
            try:
                chunk = self.sock.recv(1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                self.close()
                return CLOSED
            self.rbuf += chunk


class Pending:
    def __init__(self, conn: Any, api: str, version: int, req: Any, corr: Any, sent_ok: Any) -> None:
        self.conn, self.api, self.version, self.req, self.corr = conn, api, version, req, corr
        self.sent_ok = sent_ok
        self.outcome: str | None = None
        self.resp: Any = None
        self.done = False

    def read(self, timeout: Any = RESPONSE_TIMEOUT) -> Any:
        if self.done:
            return self
        self.done = True
        if not self.sent_ok:
            self.outcome = CLOSED
            return self
        data = self.conn.read_frame(timeout)
        if data in (TIMEOUT, CLOSED):
            self.outcome = data
            if data == TIMEOUT:
                self.conn.close()
            return self
        try:
            self.resp = APIS[self.api][1].decode(data, version=self.version, header=True)
        except Exception as e:
            self.outcome = "decode_error"
            self.resp = {"error": type(e).__name__, "raw_hex": bytes(data).hex()[:400]}
            return self
        if self.resp.header.correlation_id != self.corr:
            self.outcome = "correlation_mismatch"
        return self

    @property
    def ok(self) -> Any:
        return self.resp is not None and not isinstance(self.resp, dict)


# --------------------------------------------------------------------------- normalization

PID_KEYS = {"producer_id", "v3_and_below_producer_id", "producer_id_filters", "ongoing_txn_producer_id"}
MEMBER_KEYS = {"member_id", "leader"}
NODE_KEYS = {
    "node_id",
    "leader_id",
    "controller_id",
    "broker_id",
    "replica_nodes",
    "isr_nodes",
    "offline_replicas",
    "broker_ids",
    "eligible_leader_replicas",
    "last_known_elr",
}
NO_SORT = {
    "synonyms",
    "records",
    "record_errors",
    "creations",
    "filters",
    "filter_results",
    "upsertions",
    "deletions",
    "configs",
    "aborted_transactions",
}
JSON_SORT = {"acls", "matching_acls", "resources", "entries", "entity", "values", "credential_infos"}
INT_SORT = {
    "partitions",
    "partition_indexes",
    "replica_nodes",
    "isr_nodes",
    "authorized_operations",
    "cluster_authorized_operations",
    "topic_authorized_operations",
}
SORT_KEYS = (
    "name",
    "topic",
    "topic_id",
    "transactional_id",
    "partition_index",
    "partition",
    "partition_id",
    "index",
    "group_id",
    "user",
    "key",
    "entity_type",
    "member_id",
)


def b64uuid(u: Any) -> Any:
    return base64.urlsafe_b64encode(u.bytes).decode().rstrip("=")


class Normalizer:
    def __init__(self, probe: Probe) -> None:
        self.probe = probe
        self.maps: dict[str, dict[Any, str]] = {"pid": {}, "uuid": {}, "member": {}}

    def ph(self, kind: Any, raw: Any) -> Any:
        m = self.maps[kind]
        if raw not in m:
            m[raw] = f"<{kind}-{len(m) + 1}>"
        return m[raw]

    def apply(self, obj: Any, key: Any = None, resp: Any = False) -> Any:
        if isinstance(obj, dict):
            out = {}
            for k, v in obj.items():
                if k == "throttle_time_ms":
                    continue
                out[k] = self.apply(v, k, resp)
            return self.fix_env(out)
        if isinstance(obj, list):
            if resp:  # sort the raw list first, so that placeholders are numbered in a stable order
                obj = sort_list(obj, key)
            items = [self.apply(x, key, resp) for x in obj]
            return sort_list(items, key) if resp else items
        return self.scalar(obj, key)

    def scalar(self, v: int, key: Any) -> Any:
        p = self.probe
        if isinstance(v, uuid.UUID):
            return self.ph("uuid", v)
        if isinstance(v, bool) or v is None:
            return v
        if key in PID_KEYS and isinstance(v, int) and v > 0 and v != BOGUS_PID:
            return self.ph("pid", v)
        if key in MEMBER_KEYS and isinstance(v, str) and v not in ("", BOGUS):
            return self.ph("member", v)
        if key in NODE_KEYS and p.node_id is not None and v == p.node_id:
            return "<node>"
        if key == "cluster_id" and isinstance(v, str) and v:
            return "<cluster-id>"
        if key == "log_dir" and isinstance(v, str):
            return "<logdir>"
        if key in ("total_bytes", "usable_bytes") and isinstance(v, int) and v >= 0:
            return "<bytes>"
        if isinstance(v, int) and abs(v - self.probe.now_ms) < 2 * 86400000:
            return "<wallclock>"  # broker wall-clock times: transaction start, control-batch timestamps
        if key == "finalized_features_epoch" and isinstance(v, int) and v >= 0:
            return "<epoch>"
        if isinstance(v, str):
            return self.subst(v)
        return v

    def subst(self, s: Any) -> Any:
        if s in self.maps["member"]:
            return self.maps["member"][s]
        for raw, ph in self.maps["member"].items():
            if raw and raw in s:
                s = s.replace(raw, ph)
        for raw, ph in self.maps["uuid"].items():
            for form in (str(raw), b64uuid(raw)):
                if form in s:
                    s = s.replace(form, ph)
        for raw, ph in self.maps["pid"].items():
            s = re.sub(rf"(?i)(producer ?id[ =:]*|producerId=|PID |producer ){raw}\b", r"\g<1>" + ph, s)
        if self.probe.token in s:
            s = s.replace(self.probe.token, "RUN")
        # ids the broker generated but never returned (e.g. a rejected static member's id)
        s = re.sub(
            r"(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Z])(?=[A-Za-z0-9_-]*[a-z])"
            r"[A-Za-z0-9_-]{22}(?![A-Za-z0-9_-])",
            "<id>",
            s,
        )
        s = re.sub(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<id>", s)
        p = self.probe
        if p.node_id is not None:
            s = re.sub(rf"\b(broker ?(?:id)?[ =:]*|node[ =:]*){p.node_id}\b", r"\g<1><node>", s, flags=re.I)
        return s

    def fix_env(self, d: Any) -> Any:
        p = self.probe
        if d.get("host") == p.addr[0]:
            d["host"] = "<host>"
        if d.get("port") == p.addr[1]:
            d["port"] = "<port>"
        if (
            d.get("resource_type") in (R_BROKER, R_BROKER_LOGGER)
            and p.node_id is not None
            and d.get("resource_name") == str(p.node_id)
        ):
            d["resource_name"] = "<node>"
        return d


def _skey(x: Any, k: Any) -> Any:
    v = x.get(k)
    return (str(type(v)), v if v is not None else "")


def sort_list(items: Any, key: Any) -> Any:
    """Sort a response list whose order the broker does not define: by its identity field (name, partition,
    ...), or whole-item JSON for ACL/quota/credential lists; other lists keep the broker's order."""
    if key in NO_SORT or not items:
        return items
    if all(isinstance(x, int) and not isinstance(x, bool) for x in items):
        return sorted(items) if key in INT_SORT else items
    if not all(isinstance(x, dict) for x in items):
        return items
    for k in SORT_KEYS:
        if all(k in x for x in items) and not any(isinstance(x[k], uuid.UUID) for x in items):
            return sorted(items, key=lambda x: (_skey(x, k), json.dumps(x, sort_keys=True, default=str)))
    if key in JSON_SORT:
        return sorted(items, key=lambda x: json.dumps(x, sort_keys=True, default=str))
    return items


def configs_map(configs: Any) -> Any:
    """[{"name": n, ...}, ...] -> {n: {...}} so that diffs are per config name."""
    if not isinstance(configs, list):
        return configs
    out = {}
    for c in configs:
        c = dict(c)
        n = c.pop("name", None)
        k, i = n, 2
        while k in out:
            k, i = f"{n}#{i}", i + 1
        out[k] = c
    return dict(sorted(out.items()))


# --------------------------------------------------------------------------- case context


class Case:
    def __init__(self, probe: Probe, cid: str) -> None:
        self.probe, self.cid = probe, cid
        self.norm = Normalizer(probe)
        self.conns: dict[str, Conn] = {}
        self.records: list[dict[str, Any]] = []
        self.topic_ids: dict[str, Any] = {}
        self.prefix = f"p2-{probe.token}-{cid}"

    def name(self, suffix: str = "") -> Any:
        return self.prefix + suffix

    def conn(self, name: Any = "A") -> Any:
        if name not in self.conns:
            self.conns[name] = Conn(self.probe.addr, "p2-" + name)
        return self.conns[name]

    def close(self) -> None:
        for c in self.conns.values():
            c.close()

    # ---- sending
    def send(self, api: str, version: int, fields: Any, conn: Any = "A") -> Any:
        req_cls: Any = APIS[api][0]
        req = build(req_cls[version], fields)
        cn = self.conn(conn) if isinstance(conn, str) else conn
        cn.corr += 1
        req.with_header(correlation_id=cn.corr, client_id=cn.client_id)
        data = bytes(req.encode(header=True, framed=True))
        return Pending(cn, api, version, req, cn.corr, cn.send_bytes(data))

    def call(
        self, api: str, version: int, fields: Any, step: str, conn: Any = "A", timeout: Any = RESPONSE_TIMEOUT
    ) -> Any:
        """Send, wait for the response, record it. Returns the decoded response or None."""
        p = self.send(api, version, fields, conn).read(timeout)
        self.record_pending(step, p)
        return p.resp if p.ok else None

    def step(self, api: str, version: int, step: str, *args: Any, **kw: Any) -> Any:
        """call() with the fields REQUESTS builds for `api` from `args`."""
        return self.call(api, version, REQUESTS[api](version, *args, **kw), step)

    def stepper(self, api: str, version: int) -> Any:
        """step() for one API at one version: stepper(...)(step, *args, **kw)."""
        return functools.partial(self.step, api, version)

    def quiet(self, api: str, version: int, fields: Any, conn: Any = "Q") -> Any:
        """Send and wait, without recording (setup and polling)."""
        p = self.send(api, version, fields, conn).read()
        return p.resp if p.ok else None

    # ---- recording
    def record_pending(self, step: str, p: Any) -> None:
        req_body = plain(p.req, p.version)
        body = None
        if isinstance(p.resp, dict):
            body = p.resp
        elif p.resp is not None:
            body = plain(p.resp, p.version)
            body = postprocess(self, p.api, body, req_body)
        req_body = preprocess_request(p.api, req_body)
        rec = {
            "case": self.cid,
            "step": step,
            "api": p.api,
            "key": int(getattr(ApiKey, p.api)),
            "version": p.version,
            "request": self.norm.apply(req_body),
        }
        if p.outcome is not None:
            rec["outcome"] = p.outcome
        if body is not None:
            rec["response"] = self.norm.apply(body, resp=True)
        self.emit(rec)

    def observe(self, step: str, observation: Any) -> None:
        self.emit(
            {
                "case": self.cid,
                "step": step,
                "api": None,
                "key": None,
                "version": None,
                "observation": self.norm.apply(observation),
            }
        )

    def emit(self, rec: Any) -> None:
        self.records.append(rec)
        if self.probe.trace:
            print(
                "{:7.2f}s {} {} {}".format(
                    time.monotonic() - self.probe.t0, rec["case"], rec["step"], rec.get("outcome") or ""
                ),
                file=sys.stderr,
            )

    # ---- waiting for broker state to settle (unrecorded polling)
    def poll(self, what: str, fn: Any, limit: Any = WAIT_LIMIT) -> Any:
        t_end = time.monotonic() + limit
        while True:
            if fn():
                return True
            if time.monotonic() > t_end:
                self.observe("wait_timeout", {"waited_for": what})
                return False
            time.sleep(0.05)

    def metadata_topic(self, name: Any) -> Any:
        r = self.quiet(
            "Metadata",
            12,
            dict(
                topics=[dict(name=name, topic_id=None)],
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=False,
            ),
        )
        if r is None:
            return None
        t = [t for t in r.topics if t.name == name]
        return t[0] if t else None

    def wait_topic(self, name: Any, parts: Any = None) -> Any:
        """Wait until the topic is in the broker's metadata with leaders for all (or `parts`) partitions,
        and each partition answers ListOffsets (the replica manager has it)."""

        def visible() -> Any:
            t = self.metadata_topic(name)
            if t is None or t.error_code != 0 or not t.partitions:
                return False
            if parts is not None and len(t.partitions) != parts:
                return False
            if any(pp.leader_id < 0 for pp in t.partitions):
                return False
            if t.topic_id is not None:
                self.topic_ids[name] = t.topic_id
            self._nparts = len(t.partitions)
            return True

        if not self.poll(f"topic {name}", visible):
            return False

        def ready() -> Any:
            r = self.quiet(
                "ListOffsets",
                5,
                dict(
                    replica_id=-1,
                    isolation_level=0,
                    topics=[
                        dict(
                            name=name,
                            partitions=[
                                dict(partition_index=i, current_leader_epoch=-1, timestamp=-1)
                                for i in range(self._nparts)
                            ],
                        )
                    ],
                ),
            )
            return r is not None and all(pp.error_code == 0 for t in r.topics for pp in t.partitions)

        return self.poll(f"partitions of {name}", ready)

    def wait_gone(self, name: Any) -> Any:
        def gone() -> Any:
            t = self.metadata_topic(name)
            return t is not None and t.error_code == 3

        return self.poll(f"topic {name} gone", gone)

    def barrier(self) -> None:
        """Metadata barrier: a mutation's effect (configs, ACLs, quotas, SCRAM) reaches Kafka's broker
        through the metadata log; once a topic created afterwards is visible, the mutation is too."""
        p = self.probe
        p.barriers += 1
        name = f"p2b-{p.token}-{p.barriers}"
        self.quiet(
            "CreateTopics",
            5,
            dict(
                topics=[dict(name=name, num_partitions=1, replication_factor=1, assignments=[], configs=[])],
                timeout_ms=30000,
                validate_only=False,
            ),
        )
        self.poll("barrier topic", lambda: self._barrier_seen(name))

    def wait_group_coordinator(self, topic: Any, parts: Any) -> None:
        """Kafka's group coordinator learns about a new topic from its own metadata image, a little after
        Metadata/ListOffsets see it. Wait (unrecorded) until a throwaway KIP-848 member subscribed to the
        topic is assigned all its partitions, then leave."""
        p = self.probe
        p.barriers += 1
        st = {"group": f"p2b-{p.token}-{p.barriers}", "member": "", "epoch": 0}

        def hb(epoch: Any, topics: Any, rebalance: Any, owned: Any) -> Any:
            return self.quiet(
                "ConsumerGroupHeartbeat",
                0,
                dict(
                    group_id=st["group"],
                    member_id=st["member"],
                    member_epoch=epoch,
                    instance_id=None,
                    rack_id=None,
                    rebalance_timeout_ms=rebalance,
                    subscribed_topic_names=topics,
                    server_assignor=None,
                    topic_partitions=owned,
                ),
            )

        def seen() -> Any:
            first = st["epoch"] == 0
            r = hb(st["epoch"], [topic] if first else None, 30000 if first else -1, [] if first else None)
            if r is None or r.error_code != 0:
                return False
            st["member"], st["epoch"] = r.member_id or st["member"], r.member_epoch
            return (
                r.assignment is not None
                and sum(len(tp.partitions) for tp in r.assignment.topic_partitions) == parts
            )

        self.poll(f"group coordinator to see {topic}", seen)
        if st["member"]:
            hb(-1, None, -1, None)

    def _barrier_seen(self, name: Any) -> Any:
        t = self.metadata_topic(name)
        return t is not None and t.error_code == 0

    # ---- helpers used by many cases
    def topic(self, suffix: str = "-t", parts: Any = 1, configs: Any = ()) -> Any:
        """Create a case topic quietly and wait for it."""
        name = self.name(suffix)
        self.quiet(
            "CreateTopics",
            5,
            dict(
                topics=[
                    dict(
                        name=name,
                        num_partitions=parts,
                        replication_factor=1,
                        assignments=[],
                        configs=[dict(name=k, value=v) for k, v in configs],
                    )
                ],
                timeout_ms=30000,
                validate_only=False,
            ),
        )
        self.wait_topic(name, parts)
        return name

    def produce(
        self,
        step: str,
        version: int,
        topic: Any,
        part: Any,
        records: Any,
        pid: Any = -1,
        epoch: Any = -1,
        seq: Any = -1,
        txn: Any = False,
        tid: Any = None,
        acks: Any = -1,
        conn: Any = "A",
    ) -> Any:
        data = batch(records, pid, epoch, seq, txn)
        f = dict(
            transactional_id=tid,
            acks=acks,
            timeout_ms=10000,
            topic_data=[dict(name=topic, partition_data=[dict(index=part, records=data)])],
        )
        if step is None:
            return self.quiet("Produce", version, f, conn)
        return self.call("Produce", version, f, step, conn)


def recs(prefix: str, n: int, ts0: int = TS0, step: int = 1000) -> Any:
    return [(f"{prefix}-k{i}".encode(), f"{prefix}-v{i}".encode(), ts0 + i * step) for i in range(n)]


def preprocess_request(api: str, body: Any) -> Any:
    if api == "Produce":
        for t in body.get("topic_data") or []:
            for pd in t.get("partition_data") or []:
                if isinstance(pd.get("records"), str):
                    pd["records"] = (
                        summarize_records(bytes.fromhex(pd["records"][4:]))
                        if pd["records"].startswith("hex:")
                        else summarize_records(pd["records"][2:].encode())
                    )
    return body


def _mine(c: Case, s: Any) -> Any:
    return isinstance(s, str) and c.prefix in s


def postprocess(c: Case, api: str, body: Any, req: Any) -> Any:
    """Per-API reshaping of a decoded response body (before normalization)."""
    if api == "DescribeConfigs":
        for r in body.get("results") or []:
            r["configs"] = configs_map(r.get("configs"))
    elif api == "CreateTopics":
        for t in body.get("topics") or []:
            if isinstance(t.get("configs"), list):
                t["configs"] = configs_map(t["configs"])
    elif api == "Fetch":
        for t in body.get("responses") or []:
            for pd in t.get("partitions") or []:
                r = pd.get("records")
                if isinstance(r, str):
                    pd["records"] = summarize_records(
                        bytes.fromhex(r[4:]) if r.startswith("hex:") else r[2:].encode()
                    )
    elif api == "ApiVersions":
        used = {int(getattr(ApiKey, a)) for a in APIS}
        keys = body.get("api_keys") or []
        out = {}
        for k in sorted(keys, key=lambda k: k["api_key"]):
            if k["api_key"] in used:
                out[f"{k['api_key']} {ApiKey(k['api_key']).name}"] = "{}-{}".format(
                    k["min_version"],
                    k["max_version"],
                )
        body = {"error_code": body.get("error_code"), "api_keys": out}
    elif api == "ListTransactions":
        body["transaction_states"] = [
            t for t in body.get("transaction_states") or [] if _mine(c, t.get("transactional_id"))
        ]
    elif api == "DescribeAcls":
        res = []
        for r in body.get("resources") or []:
            acls = [
                a
                for a in r.get("acls") or []
                if _mine(c, r.get("resource_name")) or _mine(c, a.get("principal"))
            ]
            if acls:
                r["acls"] = acls
                res.append(r)
        body["resources"] = res
    elif api == "DescribeUserScramCredentials":
        body["results"] = [r for r in body.get("results") or [] if _mine(c, r.get("user"))]
    elif api == "DescribeClientQuotas":
        if isinstance(body.get("entries"), list):
            body["entries"] = [
                e
                for e in body["entries"]
                if any(_mine(c, x.get("entity_name")) for x in e.get("entity") or [])
            ]
    elif api == "Metadata":
        asked = [t.get("name") for t in req.get("topics") or []]
        if not asked:  # all topics: keep the case's own and the internal ones
            body["topics"] = [
                t
                for t in body.get("topics") or []
                if _mine(c, t.get("name")) or t.get("name") in ("__consumer_offsets", "__transaction_state")
            ]
    elif api == "DescribeLogDirs":
        for r in body.get("results") or []:
            r["topics"] = [t for t in r.get("topics") or [] if _mine(c, t.get("name"))]
    elif api == "ElectLeaders":
        body["replica_election_results"] = [
            r for r in body.get("replica_election_results") or [] if _mine(c, r.get("topic"))
        ]
    elif api == "ListGroups":
        body["groups"] = [g for g in body.get("groups") or [] if _mine(c, g.get("group_id"))]
    return body


# --------------------------------------------------------------------------- request helpers


def ct(name: Any, parts: Any = 1, rf: Any = 1, configs: Any = (), assignments: Any = ()) -> Any:
    return dict(
        name=name,
        num_partitions=parts,
        replication_factor=rf,
        assignments=[dict(partition_index=i, broker_ids=list(b)) for i, b in assignments],
        configs=[dict(name=k, value=v) for k, v in configs],
    )


def create_topics(c: Case, step: str, v: int, topics: Any, validate_only: Any = False) -> Any:
    return c.call("CreateTopics", v, dict(topics=topics, timeout_ms=30000, validate_only=validate_only), step)


def md(
    c: Case, step: str, v: int, names: Any, auto: Any = False, topic_ops: Any = False, ids: Any = None
) -> Any:
    topics: list[dict[str, Any]] | None
    if ids is not None:
        topics = [dict(name=None, topic_id=i) for i in ids]
    elif names is None:
        topics = [] if v == 0 else None
    else:
        topics = [dict(name=n, topic_id=None) for n in names]
    return c.call(
        "Metadata",
        v,
        dict(
            topics=topics,
            allow_auto_topic_creation=auto,
            include_cluster_authorized_operations=False,
            include_topic_authorized_operations=topic_ops,
        ),
        step,
    )


def dc(c: Case, step: str, v: int, resources: Any, synonyms: Any = False, doc: Any = False) -> Any:
    return c.call(
        "DescribeConfigs",
        v,
        dict(
            resources=[
                dict(resource_type=t, resource_name=n, configuration_keys=None if k is None else list(k))
                for t, n, k in resources
            ],
            include_synonyms=synonyms,
            include_documentation=doc,
        ),
        step,
    )


def fetch(
    c: Case,
    step: str,
    v: int,
    topic: Any,
    parts: Any,
    isolation: Any = 0,
    offsets: Any = None,
    conn: Any = "A",
) -> Any:
    f = dict(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=10 << 20,
        isolation_level=isolation,
        session_id=0,
        session_epoch=-1,
        topics=[
            dict(
                topic=topic,
                topic_id=c.topic_ids.get(topic),
                partitions=[
                    dict(
                        partition=p,
                        current_leader_epoch=-1,
                        fetch_offset=(offsets or {}).get(p, 0),
                        last_fetched_epoch=-1,
                        log_start_offset=-1,
                        partition_max_bytes=1 << 20,
                    )
                    for p in parts
                ],
            )
        ],
        forgotten_topics_data=[],
        rack_id="",
    )
    return c.call("Fetch", v, f, step, conn)


def list_offsets(c: Case, step: str, v: int, topic: Any, specs: Any, isolation: Any = 0) -> Any:
    """specs: [(partition, timestamp[, current_leader_epoch])]"""
    parts = [
        dict(
            partition_index=s[0],
            current_leader_epoch=s[2] if len(s) > 2 else -1,
            timestamp=s[1],
            max_num_offsets=1,
        )
        for s in specs
    ]
    return c.call(
        "ListOffsets",
        v,
        dict(
            replica_id=-1,
            isolation_level=isolation,
            topics=[dict(name=topic, partitions=parts)],
            timeout_ms=0,
        ),
        step,
    )


def find_coordinator(c: Case, step: str, v: int, key: Any, key_type: Any = 0) -> Any:
    f = dict(key_type=key_type, coordinator_keys=[key]) if v >= 4 else dict(key=key, key_type=key_type)
    return c.call("FindCoordinator", v, f, step)


def offset_fetch(
    c: Case,
    step: str,
    v: int,
    group: Any,
    topic: Any,
    parts: Any,
    require_stable: Any = False,
    member_id: Any = None,
    member_epoch: Any = -1,
) -> Any:
    topics = [dict(name=topic, partition_indexes=list(parts))]
    if v >= 8:
        f = dict(
            groups=[dict(group_id=group, member_id=member_id, member_epoch=member_epoch, topics=topics)],
            require_stable=require_stable,
        )
    else:
        f = dict(group_id=group, topics=topics, require_stable=require_stable)
    return c.call("OffsetFetch", v, f, step)


def describe_transactions(c: Case, step: str, tids: Any) -> Any:
    return c.call("DescribeTransactions", 0, dict(transactional_ids=list(tids)), step)


def describe_producers(c: Case, step: str, topics: Any) -> Any:
    return c.call(
        "DescribeProducers",
        0,
        dict(topics=[dict(name=n, partition_indexes=list(ps)) for n, ps in topics]),
        step,
    )


# Request builders, one per API the cases call with compact arguments: (version, arguments) ->
# the request's fields. Case.step sends REQUESTS[api](version, ...) and records the answer.


def _delete_topics(v: int, names: Any = (), ids: Any = ()) -> Any:
    if v >= 6:
        return dict(
            topics=[dict(name=n, topic_id=None) for n in names]
            + [dict(name=nm, topic_id=i) for nm, i in ids],
            timeout_ms=30000,
        )
    return dict(topic_names=list(names), timeout_ms=30000)


def _create_partitions(v: int, topics: Any, validate_only: Any = False) -> Any:
    return dict(
        topics=[
            dict(name=n, count=k, assignments=None if a is None else [dict(broker_ids=b) for b in a])
            for n, k, a in topics
        ],
        timeout_ms=30000,
        validate_only=validate_only,
    )


def _delete_records(v: int, topics: Any) -> Any:
    return dict(
        topics=[
            dict(name=n, partitions=[dict(partition_index=p, offset=o) for p, o in ps]) for n, ps in topics
        ],
        timeout_ms=30000,
    )


def _offset_delete(v: int, group: Any, topics: Any) -> Any:
    return dict(
        group_id=group,
        topics=[dict(name=n, partitions=[dict(partition_index=p) for p in ps]) for n, ps in topics],
    )


def _describe_cluster(v: int, **kw: Any) -> Any:
    return (
        dict(include_cluster_authorized_operations=False, endpoint_type=1, include_fenced_brokers=False) | kw
    )


def _describe_log_dirs(v: int, topics: Any) -> Any:
    return dict(topics=topics)


def _elect_leaders(v: int, tps: Any, et: Any = 0) -> Any:
    return dict(
        election_type=et,
        topic_partitions=None if tps is None else [dict(topic=n, partitions=ps) for n, ps in tps],
        timeout_ms=30000,
    )


def _init_producer_id(v: int, t: Any, timeout: Any = 60000, pid: Any = -1, epoch: Any = -1) -> Any:
    return dict(
        transactional_id=t,
        transaction_timeout_ms=timeout,
        producer_id=pid,
        producer_epoch=epoch,
        enable2_pc=False,
        keep_prepared_txn=False,
    )


def _list_transactions(v: int, states: Any = (), pids: Any = (), duration: Any = -1) -> Any:
    return dict(
        state_filters=list(states),
        producer_id_filters=list(pids),
        duration_filter=duration,
        transactional_id_pattern=None,
    )


def _add_partitions_to_txn(v: int, txns: Any) -> Any:
    """v4+: several transactions, each (id, producer id, epoch, verify only, topics)."""
    return dict(
        transactions=[
            dict(
                transactional_id=tid,
                producer_id=pid,
                producer_epoch=ep,
                verify_only=vo,
                topics=[dict(name=n, partitions=ps) for n, ps in tps],
            )
            for tid, pid, ep, vo, tps in txns
        ]
    )


def _describe_user_scram_credentials(v: int, users: Any) -> Any:
    return dict(users=None if users is None else [dict(name=u) for u in users])


def _alter_user_scram_credentials(v: int, ups: Any = (), dels: Any = ()) -> Any:
    return dict(
        deletions=[dict(name=n, mechanism=m) for n, m in dels],
        upsertions=[
            dict(
                name=n,
                mechanism=m,
                iterations=it,
                salt=b"probe2-salt",
                salted_password=bytes(range(64 if m == 2 else 32)),
            )
            for n, m, it in ups
        ],
    )


def _describe_client_quotas(v: int, comps: Any, strict: Any = False) -> Any:
    return dict(
        components=[dict(entity_type=et, match_type=mt, match=m) for et, mt, m in comps],
        strict=strict,
    )


def _alter_client_quotas(v: int, entries: Any, validate_only: Any = False) -> Any:
    return dict(
        entries=[
            dict(
                entity=[dict(entity_type=et, entity_name=en) for et, en in ent],
                ops=[dict(key=k, value=float(val), remove=rm) for k, val, rm in ops],
            )
            for ent, ops in entries
        ],
        validate_only=validate_only,
    )


REQUESTS: dict[str, Any] = {
    "DeleteTopics": _delete_topics,
    "CreatePartitions": _create_partitions,
    "DeleteRecords": _delete_records,
    "OffsetDelete": _offset_delete,
    "DescribeCluster": _describe_cluster,
    "DescribeLogDirs": _describe_log_dirs,
    "ElectLeaders": _elect_leaders,
    "InitProducerId": _init_producer_id,
    "ListTransactions": _list_transactions,
    "AddPartitionsToTxn": _add_partitions_to_txn,
    "DescribeUserScramCredentials": _describe_user_scram_credentials,
    "AlterUserScramCredentials": _alter_user_scram_credentials,
    "DescribeClientQuotas": _describe_client_quotas,
    "AlterClientQuotas": _alter_client_quotas,
}


def ok_all(r: Any, path: Any) -> Any:
    """True when every error_code found under attribute path (e.g. 'topics.error_code') is 0."""
    if r is None:
        return False
    objs = [r]
    parts = path.split(".")
    for a in parts[:-1]:
        nxt = []
        for o in objs:
            v = getattr(o, a, None)
            nxt.extend(v if isinstance(v, list) else ([v] if v is not None else []))
        objs = nxt
    return bool(objs) and all(getattr(o, parts[-1], 0) == 0 for o in objs)


def any_ok(r: Any, path: Any) -> Any:
    if r is None:
        return False
    objs = [r]
    parts = path.split(".")
    for a in parts[:-1]:
        nxt = []
        for o in objs:
            v = getattr(o, a, None)
            nxt.extend(v if isinstance(v, list) else ([v] if v is not None else []))
        objs = nxt
    return any(getattr(o, parts[-1], 1) == 0 for o in objs)


# --------------------------------------------------------------------------- case registry

CASES: list[tuple[str, Any, bool]] = []  # (cid, fn(case), final)


def case(cid: str, final: Any = False) -> Any:
    def deco(fn: Any) -> Any:
        CASES.append((cid, fn, final))
        return fn

    return deco


def family(prefix: str, versions: Any, final: Any = False) -> Any:
    def deco(fn: Any) -> Any:
        for v in versions:
            cid = f"{prefix}.v{v}" if isinstance(v, int) else f"{prefix}.{v}"
            CASES.append((cid, (lambda c, _v=v, _fn=fn: _fn(c, _v)), final))
        return fn

    return deco


@case("apiversions")
def apiversions_case(c: Case) -> None:
    c.call("ApiVersions", 3, dict(client_software_name="probe2", client_software_version="1.0"), "01.v3")


# --------------------------------------------------------------------------- topics admin


@family("create_topics", V["CreateTopics"])
def create_topics_case(c: Case, v: int) -> None:
    n, node = c.name, c.probe.node_id
    ok = n("-ok")
    r = create_topics(c, "01.valid_3_partitions", v, [ct(ok, 3)])
    if ok_all(r, "topics.error_code"):
        c.wait_topic(ok, 3)
    create_topics(c, "02.duplicate", v, [ct(ok, 3)])
    create_topics(c, "03.invalid_chars", v, [ct(n("-bad/name!"))])
    create_topics(c, "04.invalid_too_long", v, [ct(n("-") + "x" * 250)])
    create_topics(c, "05.invalid_dotdot", v, [ct("..")])
    create_topics(c, "06.invalid_empty", v, [ct("")])
    create_topics(c, "07.zero_partitions", v, [ct(n("-p0"), 0)])
    create_topics(c, "08.negative_partitions", v, [ct(n("-pneg"), -5)])
    create_topics(c, "09.replication_3", v, [ct(n("-rf3"), 1, 3)])
    create_topics(c, "10.replication_0", v, [ct(n("-rf0"), 1, 0)])
    d = n("-default")
    r = create_topics(c, "11.default_partitions_and_rf", v, [ct(d, -1, -1)])
    if ok_all(r, "topics.error_code"):
        c.wait_topic(d)
    vo = n("-vo")
    create_topics(c, "12.validate_only", v, [ct(vo, 2)], validate_only=True)
    md(c, "13.metadata_validate_only_not_created", 12, [vo])
    create_topics(c, "14.unknown_config", v, [ct(n("-cfg-unknown"), configs=[("no.such.config", "1")])])
    create_topics(c, "15.bad_config_value", v, [ct(n("-cfg-bad"), configs=[("retention.ms", "abc")])])
    create_topics(c, "16.bad_config_enum", v, [ct(n("-cfg-enum"), configs=[("cleanup.policy", "shred")])])
    cfg = n("-cfg")
    r = create_topics(
        c,
        "17.valid_configs",
        v,
        [
            ct(
                cfg,
                configs=[
                    ("cleanup.policy", "compact"),
                    ("retention.ms", "123456"),
                    ("min.insync.replicas", "1"),
                ],
            )
        ],
    )
    if ok_all(r, "topics.error_code"):
        c.wait_topic(cfg)
    create_topics(c, "18.null_config_value", v, [ct(n("-cfg-null"), configs=[("retention.ms", None)])])
    man = n("-manual")
    r = create_topics(c, "19.manual_assignment", v, [ct(man, -1, -1, assignments=[(0, [node]), (1, [node])])])
    if ok_all(r, "topics.error_code"):
        c.wait_topic(man, 2)
    create_topics(
        c, "20.manual_assignment_unknown_broker", v, [ct(n("-manual-bad"), -1, -1, assignments=[(0, [99])])]
    )
    create_topics(
        c, "21.manual_assignment_with_count", v, [ct(n("-manual-count"), 2, 1, assignments=[(0, [node])])]
    )
    b1, b2 = n("-batch-a"), n("-batch-b")
    r = create_topics(c, "22.batch_mixed", v, [ct(b1), ct(ok), ct(b2, 0)])
    if r is not None and r.topics and any(t.name == b1 and t.error_code == 0 for t in r.topics):
        c.wait_topic(b1)
    create_topics(c, "23.same_name_twice_in_request", v, [ct(n("-twice")), ct(n("-twice"))])
    md(c, "24.metadata", 12, [ok, d, cfg, man, b1, n("-twice")])


@family("delete_topics", V["DeleteTopics"])
def delete_topics_case(c: Case, v: int) -> None:
    t1, t2, t3 = c.topic("-t1"), c.topic("-t2"), c.topic("-t3")

    dt = c.stepper("DeleteTopics", v)

    if ok_all(dt("01.existing", [t1]), "responses.error_code"):
        c.wait_gone(t1)
    dt("02.unknown", [c.name("-nosuch")])
    dt("03.deleted_again", [t1])
    r = dt("04.batch_existing_and_unknown", [t2, c.name("-nosuch2")])
    if any_ok(r, "responses.error_code"):
        c.wait_gone(t2)
    dt("05.invalid_name", [c.name("-bad name!")])
    dt("06.empty_list", [])
    if v >= 6:
        if ok_all(dt("07.by_id", ids=[(None, c.topic_ids.get(t3))]), "responses.error_code"):
            c.wait_gone(t3)
        dt("08.unknown_id", ids=[(None, BOGUS_UUID)])
        t4 = c.topic("-t4")
        dt("09.name_and_id", ids=[(t4, c.topic_ids.get(t4))])
        dt("10.neither_name_nor_id", ids=[(None, None)])
        dt("11.same_topic_twice", [t4, t4])
    else:
        dt("07.same_topic_twice", [t3, t3])
    md(c, "12.metadata_after", 12, [t1, t2, t3])


@family("create_partitions", V["CreatePartitions"])
def create_partitions_case(c: Case, v: int) -> None:
    node = c.probe.node_id
    t = c.topic("-t", parts=2)

    cp = c.stepper("CreatePartitions", v)

    if ok_all(cp("01.grow_2_to_4", [(t, 4, None)]), "results.error_code"):
        c.wait_topic(t, 4)
    cp("02.same_count_4", [(t, 4, None)])
    cp("03.shrink_to_2", [(t, 2, None)])
    cp("04.zero", [(t, 0, None)])
    cp("05.unknown_topic", [(c.name("-nosuch"), 3, None)])
    cp("06.validate_only_6", [(t, 6, None)], validate_only=True)
    md(c, "07.metadata_still_4", 12, [t])
    if ok_all(cp("08.with_assignment_5", [(t, 5, [[node]])]), "results.error_code"):
        c.wait_topic(t, 5)
    cp("09.assignment_unknown_broker", [(t, 6, [[99]])])
    cp("10.assignment_count_mismatch", [(t, 7, [[node]])])
    cp("11.assignment_duplicate_replica", [(t, 6, [[node, node]])])
    cp("12.same_topic_twice", [(t, 8, None), (t, 9, None)])
    t2 = c.topic("-t2")
    r = cp("13.batch_mixed", [(t2, 3, None), (c.name("-nosuch"), 2, None)])
    if any_ok(r, "results.error_code"):
        c.wait_topic(t2, 3)
    md(c, "14.metadata", 12, [t, t2])


TOPIC_KEYS = ["retention.ms", "cleanup.policy", "segment.bytes", "max.message.bytes", "no.such.key"]
BROKER_KEYS = [
    "num.partitions",
    "auto.create.topics.enable",
    "message.max.bytes",
    "log.retention.ms",
    "log.retention.hours",
    "log.segment.bytes",
    "compression.type",
    "delete.topic.enable",
    "transaction.max.timeout.ms",
    "offsets.retention.minutes",
    "group.consumer.heartbeat.interval.ms",
    "group.consumer.migration.policy",
    "transaction.partition.verification.enable",
    "no.such.broker.key",
]


@family("describe_configs", V["DescribeConfigs"])
def describe_configs_case(c: Case, v: int) -> None:
    node = str(c.probe.node_id)
    t = c.topic("-t", configs=[("cleanup.policy", "compact"), ("retention.ms", "123456")])
    dc(c, "01.topic_all", v, [(CFG_TOPIC, t, None)])
    dc(c, "02.topic_selected", v, [(CFG_TOPIC, t, TOPIC_KEYS)])
    dc(c, "03.topic_selected_synonyms", v, [(CFG_TOPIC, t, TOPIC_KEYS)], synonyms=True)
    if v >= 3:
        dc(
            c,
            "04.topic_documentation",
            v,
            [(CFG_TOPIC, t, ["retention.ms", "cleanup.policy"])],
            synonyms=True,
            doc=True,
        )
    dc(c, "05.topic_empty_key_list", v, [(CFG_TOPIC, t, [])])
    dc(c, "06.broker_selected_synonyms", v, [(CFG_BROKER, node, BROKER_KEYS)], synonyms=True)
    if v >= 3:
        dc(c, "07.broker_documentation", v, [(CFG_BROKER, node, ["message.max.bytes"])], doc=True)
    dc(c, "08.broker_default_resource", v, [(CFG_BROKER, "", BROKER_KEYS)])
    dc(c, "09.broker_other_id", v, [(CFG_BROKER, "99", ["num.partitions"])])
    dc(c, "10.broker_non_numeric", v, [(CFG_BROKER, "abc", ["num.partitions"])])
    dc(c, "11.unknown_topic", v, [(CFG_TOPIC, c.name("-nosuch"), None)])
    dc(
        c,
        "12.multi_resource",
        v,
        [
            (CFG_TOPIC, t, ["retention.ms"]),
            (CFG_BROKER, node, ["num.partitions"]),
            (CFG_TOPIC, c.name("-nosuch"), ["retention.ms"]),
        ],
    )
    dc(c, "13.bad_resource_type", v, [(99, t, None)])
    dc(c, "14.invalid_topic_name", v, [(CFG_TOPIC, c.name("-bad name!"), None)])
    dc(
        c,
        "15.internal_topic",
        v,
        [
            (
                CFG_TOPIC,
                "__consumer_offsets",
                ["cleanup.policy", "segment.bytes", "compression.type", "retention.ms"],
            )
        ],
        synonyms=True,
    )


def _alter(
    c: Case,
    api: str,
    v: int,
    step: str,
    resources: Any,
    validate_only: Any,
    with_op: Any,
    timeout: Any = RESPONSE_TIMEOUT,
) -> Any:
    cfg = (
        (lambda k, op, val: dict(name=k, config_operation=op, value=val))
        if with_op
        else (lambda k, val: dict(name=k, value=val))
    )
    r = c.call(
        api,
        v,
        dict(
            resources=[
                dict(resource_type=rt, resource_name=rn, configs=[cfg(*x) for x in cfgs])
                for rt, rn, cfgs in resources
            ],
            validate_only=validate_only,
        ),
        step,
        timeout=timeout,
    )
    if not validate_only and any_ok(r, "responses.error_code"):
        c.barrier()
    return r


@family("alter_configs", V["AlterConfigs"])
def alter_configs_case(c: Case, v: int) -> None:
    node = str(c.probe.node_id)
    t = c.topic("-t")
    keys = ["retention.ms", "cleanup.policy", "segment.ms"]

    def ac(step: str, resources: Any, validate_only: Any = False, timeout: Any = RESPONSE_TIMEOUT) -> Any:
        return _alter(c, "AlterConfigs", v, step, resources, validate_only, False, timeout)

    ac("01.set_two", [(CFG_TOPIC, t, [("retention.ms", "5000"), ("cleanup.policy", "compact")])])
    dc(c, "02.describe", 4, [(CFG_TOPIC, t, keys)])
    ac("03.replace_with_one", [(CFG_TOPIC, t, [("segment.ms", "600000")])])
    dc(c, "04.describe_replaced", 4, [(CFG_TOPIC, t, keys)])
    ac("05.unknown_key", [(CFG_TOPIC, t, [("no.such.key", "1")])])
    ac("06.bad_value", [(CFG_TOPIC, t, [("retention.ms", "abc")])])
    ac("07.null_value", [(CFG_TOPIC, t, [("retention.ms", None)])])
    ac("08.validate_only", [(CFG_TOPIC, t, [("retention.ms", "7777")])], validate_only=True)
    dc(c, "09.describe_after_validate_only", 4, [(CFG_TOPIC, t, keys)])
    ac("10.unknown_topic", [(CFG_TOPIC, c.name("-nosuch"), [("retention.ms", "5000")])])
    ac(
        "11.broker_read_only_validate_only",
        [(CFG_BROKER, node, [("log.dirs", "/tmp/elsewhere")])],
        validate_only=True,
    )
    ac(
        "12.broker_dynamic_validate_only",
        [(CFG_BROKER, node, [("log.cleaner.threads", "2")])],
        validate_only=True,
    )
    ac(
        "13.broker_unknown_key_validate_only",
        [(CFG_BROKER, node, [("no.such.broker.key", "1")])],
        validate_only=True,
    )
    if v == V["AlterConfigs"][-1]:
        # Kafka 3.9.0 never answers this one (IllegalStateException: Duplicate key, in its error path), so
        # it runs at one version only, with a 3 s limit
        ac(
            "14.same_resource_twice",
            [(CFG_TOPIC, t, [("retention.ms", "3600000")]), (CFG_TOPIC, t, [("retention.ms", "7200000")])],
            timeout=3.0,
        )
    ac("15.empty_configs_resets_all", [(CFG_TOPIC, t, [])])
    dc(c, "16.describe_reset", 4, [(CFG_TOPIC, t, keys)])


@family("incremental_alter_configs", V["IncrementalAlterConfigs"])
def incremental_alter_configs_case(c: Case, v: int) -> None:
    node = str(c.probe.node_id)
    t = c.topic("-t", configs=[("cleanup.policy", "delete")])
    keys = ["retention.ms", "cleanup.policy", "max.message.bytes"]

    def iac(step: str, cfgs: Any, validate_only: Any = False, rt: Any = CFG_TOPIC, rn: Any = None) -> Any:
        return _alter(
            c, "IncrementalAlterConfigs", v, step, [(rt, t if rn is None else rn, cfgs)], validate_only, True
        )

    def desc(step: str) -> None:
        dc(c, step, 4, [(CFG_TOPIC, t, keys)])

    iac("01.set", [("retention.ms", SET, "5000")])
    desc("02.describe")
    iac("03.append_list", [("cleanup.policy", APPEND, "compact")])
    desc("04.describe")
    iac("05.append_present_value", [("cleanup.policy", APPEND, "compact")])
    iac("06.subtract_list", [("cleanup.policy", SUBTRACT, "delete")])
    desc("07.describe")
    iac("08.subtract_absent_value", [("cleanup.policy", SUBTRACT, "delete")])
    iac("09.delete", [("retention.ms", DELETE, None)])
    desc("10.describe")
    iac("11.delete_not_set", [("max.message.bytes", DELETE, None)])
    iac("12.append_non_list", [("retention.ms", APPEND, "5")])
    iac("13.subtract_non_list", [("retention.ms", SUBTRACT, "5")])
    iac("14.unknown_key", [("no.such.key", SET, "1")])
    iac("15.delete_unknown_key", [("no.such.key", DELETE, None)])
    iac("16.bad_value", [("retention.ms", SET, "abc")])
    iac("17.bad_enum_value", [("cleanup.policy", SET, "shred")])
    iac("18.bad_operation", [("retention.ms", 7, "5000")])
    iac("19.duplicate_key", [("retention.ms", SET, "1000"), ("retention.ms", SET, "2000")])
    iac("20.set_null_value", [("retention.ms", SET, None)])
    iac("21.validate_only", [("retention.ms", SET, "7777")], validate_only=True)
    desc("22.describe_after_validate_only")
    iac("23.unknown_topic", [("retention.ms", SET, "5000")], rn=c.name("-nosuch"))
    iac("24.broker_read_only", [("log.dirs", SET, "/tmp/elsewhere")], rt=CFG_BROKER, rn=node)
    iac(
        "25.broker_dynamic_validate_only",
        [("log.cleaner.threads", SET, "2")],
        validate_only=True,
        rt=CFG_BROKER,
        rn=node,
    )
    iac(
        "26.cluster_default_validate_only",
        [("log.retention.ms", SET, "604800000")],
        validate_only=True,
        rt=CFG_BROKER,
        rn="",
    )
    iac(
        "27.broker_unknown_key",
        [("no.such.broker.key", SET, "1")],
        validate_only=True,
        rt=CFG_BROKER,
        rn=node,
    )


@family("delete_records", V["DeleteRecords"])
def delete_records_case(c: Case, v: int) -> None:
    t = c.topic("-t", parts=2)
    c.produce("setup.produce_10", 7, t, 0, recs("r", 10))

    dr = c.stepper("DeleteRecords", v)

    dr("01.in_range_5", [(t, [(0, 5)])])
    dr("02.to_high_watermark", [(t, [(0, -1)])])
    dr("03.beyond_high_watermark", [(t, [(0, 50)])])
    dr("04.below_low_watermark", [(t, [(0, 2)])])
    dr("05.empty_partition", [(t, [(1, 0)])])
    dr("06.unknown_partition", [(t, [(7, 0)])])
    dr("07.unknown_topic", [(c.name("-nosuch"), [(0, 0)])])
    dr("08.mixed", [(t, [(1, 0), (9, 0)]), (c.name("-nosuch"), [(0, 0)])])
    dr("09.negative_offset", [(t, [(0, -5)])])
    list_offsets(c, "10.list_offsets_earliest_after", 9, t, [(0, -2), (1, -2)])
    fetch(c, "11.fetch_below_log_start", 11, t, [0])
    c.produce("12.produce_after", 7, t, 0, recs("s", 1, TS0 + 20000))


@family("list_offsets", V["ListOffsets"])
def list_offsets_case(c: Case, v: int) -> None:
    t = c.topic("-t", parts=2)
    for i, ts in enumerate((1000, 5000, 3000)):
        c.produce(f"setup.produce_{i}", 7, t, 0, [(b"k%d" % i, b"v%d" % i, TS0 + ts)])

    def lo(step: str, specs: Any, **kw: Any) -> Any:
        return list_offsets(c, step, v, t, specs, **kw)

    lo("01.earliest", [(0, -2)])
    lo("02.latest", [(0, -1)])
    lo("03.timestamp_between", [(0, TS0 + 1500)])
    lo("04.timestamp_exact_first", [(0, TS0 + 1000)])
    lo("05.timestamp_4000", [(0, TS0 + 4000)])
    lo("06.timestamp_after_all", [(0, TS0 + 99999)])
    lo("07.timestamp_0", [(0, 0)])
    lo("08.max_timestamp", [(0, -3)])
    lo("09.earliest_local", [(0, -4)])
    lo("10.latest_tiered", [(0, -5)])
    lo("11.both_partitions_latest", [(0, -1), (1, -1)])
    lo("12.empty_partition_timestamp", [(1, TS0)])
    lo("13.unknown_partition", [(5, -1)])
    list_offsets(c, "14.unknown_topic", v, c.name("-nosuch"), [(0, -1)])
    lo("15.duplicate_partition", [(0, -1), (0, -2)])
    if v >= 4:
        lo("16.future_leader_epoch", [(0, -1, 7)])
        lo("17.current_leader_epoch_0", [(0, -1, 0)])
    lo("18.read_committed_latest", [(0, -1)], isolation=1)
    lo("19.negative_timestamp_-7", [(0, -7)])


class ClassicMember:
    """A classic-protocol consumer (JoinGroup v5 / SyncGroup v3 / OffsetCommit v7 / LeaveGroup v3)."""

    def __init__(self, c: Case, name: Any, group: Any, topics: Any) -> None:
        self.c, self.name, self.group, self.topics = c, name, group, topics
        self.member_id, self.gen = "", -1

    def join(self, step: str) -> Any:
        f = dict(
            group_id=self.group,
            session_timeout_ms=30000,
            rebalance_timeout_ms=30000,
            member_id=self.member_id,
            group_instance_id=None,
            protocol_type="consumer",
            protocols=[dict(name="range", metadata=subscription(self.name, self.topics))],
            reason=None,
        )
        r = self.c.call("JoinGroup", 5, f, step, self.name)
        if r is not None and r.error_code in (0, 79) and r.member_id:
            self.member_id = r.member_id
        if r is not None and r.error_code == 0:
            self.gen = r.generation_id
        return r

    def join_sync(self, step: str) -> Any:
        r = self.join(step + ".join")
        if r is not None and r.error_code == 79:
            r = self.join(step + ".rejoin")
        return self.c.call(
            "SyncGroup",
            3,
            dict(
                group_id=self.group,
                generation_id=self.gen,
                member_id=self.member_id,
                group_instance_id=None,
                assignments=[
                    dict(member_id=self.member_id, assignment=assignment(self.name, self.topics[0], [0, 1]))
                ],
            ),
            step + ".sync",
            self.name,
        )

    def heartbeat(self, step: str) -> Any:
        return self.c.call(
            "Heartbeat",
            3,
            dict(
                group_id=self.group, generation_id=self.gen, member_id=self.member_id, group_instance_id=None
            ),
            step,
            self.name,
        )

    def commit(self, step: str, topics: Any, gen: Any = None, member_id: Any = None) -> Any:
        return self.c.call(
            "OffsetCommit",
            7,
            dict(
                group_id=self.group,
                generation_id_or_member_epoch=self.gen if gen is None else gen,
                member_id=self.member_id if member_id is None else member_id,
                group_instance_id=None,
                topics=[
                    dict(
                        name=t,
                        partitions=[
                            dict(
                                partition_index=p,
                                committed_offset=o,
                                committed_leader_epoch=-1,
                                committed_metadata="m",
                            )
                            for p, o in ps
                        ],
                    )
                    for t, ps in topics
                ],
            ),
            step,
            self.name,
        )

    def leave(self, step: str) -> Any:
        return self.c.call(
            "LeaveGroup",
            3,
            dict(
                group_id=self.group,
                members=[dict(member_id=self.member_id, group_instance_id=None, reason=None)],
            ),
            step,
            self.name,
        )


@family("offset_delete", V["OffsetDelete"])
def offset_delete_case(c: Case, v: int) -> None:
    t, t2 = c.topic("-t", parts=2), c.topic("-t2")
    g = c.name("-g")
    m = ClassicMember(c, "A", g, [t])
    m.join_sync("setup.A")
    m.commit("setup.commit", [(t, [(0, 5), (1, 6)]), (t2, [(0, 7)])])

    od = c.stepper("OffsetDelete", v)

    def of(step: str) -> None:
        c.call("OffsetFetch", 7, dict(group_id=g, topics=None, require_stable=False), step)

    od("01.subscribed_topic", g, [(t, [0])])
    od("02.not_subscribed_topic", g, [(t2, [0])])
    of("03.offset_fetch_all")
    od("04.mixed", g, [(t, [1]), (t2, [0])])
    od("05.unknown_partition", g, [(t, [9])])
    od("06.unknown_topic", g, [(c.name("-nosuch"), [0])])
    od("07.unknown_group", c.name("-nosuch-g"), [(t, [0])])
    od("08.empty_group_id", "", [(t, [0])])
    m.leave("09.leave")
    od("10.after_leave_subscribed_topic", g, [(t, [0, 1])])
    of("11.offset_fetch_all_after")
    gs = c.name("-simple")
    x = ClassicMember(c, "X", gs, [t])
    x.commit("setup.simple_commit", [(t, [(0, 1)])], gen=-1, member_id="")
    od("12.simple_group", gs, [(t, [0])])


@family("describe_cluster", V["DescribeCluster"])
def describe_cluster_case(c: Case, v: int) -> None:
    d = c.stepper("DescribeCluster", v)

    d("01.plain")
    d("02.authorized_operations", include_cluster_authorized_operations=True)
    if v >= 1:
        d("03.endpoint_type_controller", endpoint_type=2)
        d("04.endpoint_type_unknown", endpoint_type=9)


@family("describe_log_dirs", V["DescribeLogDirs"])
def describe_log_dirs_case(c: Case, v: int) -> None:
    t = c.topic("-t", parts=2)
    c.produce("setup.produce", 7, t, 0, recs("d", 3))

    d = c.stepper("DescribeLogDirs", v)

    d("01.topic_partitions", [dict(topic=t, partitions=[0, 1, 9])])
    d("02.all_topics", None)
    d("03.unknown_topic", [dict(topic=c.name("-nosuch"), partitions=[0])])
    d("04.empty_list", [])
    d("05.empty_partition_list", [dict(topic=t, partitions=[])])


@family("elect_leaders", V["ElectLeaders"])
def elect_leaders_case(c: Case, v: int) -> None:
    t = c.topic("-t", parts=2)

    el = c.stepper("ElectLeaders", v)

    el("01.preferred", [(t, [0, 1])])
    if v >= 1:
        el("02.unclean", [(t, [0])], et=1)
    el("03.unknown_partition", [(t, [9])])
    el("04.unknown_topic", [(c.name("-nosuch"), [0])])
    el("05.all_partitions_null", None)
    el("06.empty_list", [])
    if v >= 1:
        el("07.bad_election_type", [(t, [0])], et=5)
    el("08.internal_topic", [("__consumer_offsets", [0])])


@family("metadata", V["Metadata"])
def metadata_case(c: Case, v: int) -> None:
    t = c.topic("-t")
    md(c, "01.consumer_offsets", v, ["__consumer_offsets"])
    md(c, "02.transaction_state", v, ["__transaction_state"])
    md(c, "03.internal_and_case_topic", v, ["__consumer_offsets", "__transaction_state", t])
    md(c, "04.all_topics", v, None)
    auto = c.name("-auto")
    md(c, "05.auto_create", v, [auto], auto=True)
    c.wait_topic(auto)
    md(c, "06.auto_created", v, [auto], auto=True)
    if v >= 4:
        md(c, "07.no_auto_create", v, [c.name("-noauto")], auto=False)
    md(c, "08.invalid_name_auto_create", v, [c.name("-bad name!")], auto=True)
    if v >= 8:
        md(c, "09.topic_authorized_operations", v, ["__consumer_offsets", t], topic_ops=True)
    if v >= 10:
        md(c, "10.by_topic_id", v, None, ids=[c.topic_ids.get(t)])
        md(c, "11.unknown_topic_id", v, None, ids=[BOGUS_UUID])
    if v >= 1:
        md(c, "12.empty_list", v, [])


# --------------------------------------------------------------------------- internal topics


@case("internal.produce")
def internal_produce_case(c: Case) -> None:
    for v in V["Produce"]:
        for topic in ("__consumer_offsets", "__transaction_state"):
            c.produce(f"{topic.strip('_')}.v{v}", v, topic, 0, recs("x", 1))
    c.produce("consumer_offsets.v7.acks1", 7, "__consumer_offsets", 0, recs("y", 1), acks=1)
    c.produce("consumer_offsets.v7.unknown_partition", 7, "__consumer_offsets", 9, recs("z", 1))


@case("internal.topic_ops")
def internal_topic_ops_case(c: Case) -> None:
    create_topics(c, "01.create_consumer_offsets", 7, [ct("__consumer_offsets", 1)])
    create_topics(c, "02.create_transaction_state", 7, [ct("__transaction_state", 1)])
    create_topics(c, "03.create_cluster_metadata", 7, [ct("__cluster_metadata", 1)])
    name = "__" + c.prefix
    r = create_topics(c, "04.create_double_underscore_name", 7, [ct(name, 1)])
    if ok_all(r, "topics.error_code"):
        c.wait_topic(name)
    md(c, "05.metadata_double_underscore_name", 12, [name, "__cluster_metadata"])
    dc(
        c,
        "06.describe_configs_consumer_offsets",
        4,
        [
            (
                CFG_TOPIC,
                "__consumer_offsets",
                [
                    "cleanup.policy",
                    "compression.type",
                    "segment.bytes",
                    "retention.ms",
                    "min.insync.replicas",
                ],
            )
        ],
    )
    dc(
        c,
        "07.describe_configs_transaction_state",
        4,
        [
            (
                CFG_TOPIC,
                "__transaction_state",
                [
                    "cleanup.policy",
                    "compression.type",
                    "segment.bytes",
                    "retention.ms",
                    "min.insync.replicas",
                ],
            )
        ],
    )
    list_offsets(c, "08.list_offsets_transaction_state_earliest", 9, "__transaction_state", [(0, -2)])


@case("internal.alter_consumer_offsets", final=True)
def internal_alter_case(c: Case) -> None:
    co = "__consumer_offsets"

    def iac(step: str, cfgs: Any, validate_only: Any = False) -> Any:
        return _alter(c, "IncrementalAlterConfigs", 1, step, [(CFG_TOPIC, co, cfgs)], validate_only, True)

    def cp(step: str, count: Any, validate_only: Any = False) -> Any:
        return c.step("CreatePartitions", 3, step, [(co, count, None)], validate_only)

    iac("01.incremental_set_retention", [("retention.ms", SET, "1209600000")])
    dc(c, "02.describe_configs", 4, [(CFG_TOPIC, co, ["retention.ms", "cleanup.policy"])])
    iac("03.incremental_delete_retention", [("retention.ms", DELETE, None)])
    iac("04.incremental_bad_cleanup_policy", [("cleanup.policy", SET, "shred")])
    iac(
        "05.incremental_cleanup_delete_validate_only", [("cleanup.policy", SET, "delete")], validate_only=True
    )
    cp("06.create_partitions_validate_only_3", 3, validate_only=True)
    cp("07.create_partitions_shrink_0", 0)
    if ok_all(cp("08.create_partitions_grow_2", 2), "results.error_code"):
        c.wait_topic(co, 2)
    md(c, "09.metadata", 12, [co])
    r = c.call(
        "DeleteTopics", 6, dict(topics=[dict(name=co, topic_id=None)], timeout_ms=30000), "10.delete_topics"
    )
    if ok_all(r, "responses.error_code"):
        c.wait_gone(co)
    md(c, "11.metadata_after_delete", 12, [co])


# --------------------------------------------------------------------------- idempotence and transactions


@family("init_producer_id", V["InitProducerId"])
def init_producer_id_case(c: Case, v: int) -> None:
    tid = c.name("-tx")

    ip = c.stepper("InitProducerId", v)

    r1 = ip("01.idempotent", None)
    ip("02.idempotent_again", None)
    ip("03.transactional", tid)
    r4 = ip("04.transactional_again_bumps_epoch", tid)
    ip("05.timeout_0", c.name("-tx0"), timeout=0)
    ip("06.timeout_negative", c.name("-txneg"), timeout=-5)
    ip("07.timeout_above_max", c.name("-txmax"), timeout=900001)
    ip("08.timeout_max", c.name("-txmaxok"), timeout=900000)
    ip("09.empty_transactional_id", "")
    ip("10.idempotent_timeout_0", None, timeout=0)
    if v >= 3 and r4 is not None and r1 is not None:
        r = ip("11.kip360_bump_with_current_epoch", tid, pid=r4.producer_id, epoch=r4.producer_epoch)
        cur = r.producer_epoch if r is not None and r.error_code == 0 else r4.producer_epoch
        ip("12.kip360_stale_epoch", tid, pid=r4.producer_id, epoch=cur - 1)
        ip("13.kip360_future_epoch", tid, pid=r4.producer_id, epoch=cur + 5)
        ip("14.kip360_wrong_producer_id", tid, pid=BOGUS_PID, epoch=0)
        ip("15.kip360_producer_id_without_epoch", tid, pid=r4.producer_id, epoch=-1)
        ip("16.kip360_idempotent_with_producer_id", None, pid=r1.producer_id, epoch=0)
    describe_transactions(c, "17.describe", [tid, c.name("-tx0"), c.name("-txmaxok")])


@family("idempotent", V["Produce"])
def idempotent_case(c: Case, v: int) -> None:
    t = c.topic("-t")
    r = c.call(
        "InitProducerId",
        4,
        dict(transactional_id=None, transaction_timeout_ms=60000),
        "setup.init_producer_id",
    )
    pid, ep = (r.producer_id, r.producer_epoch) if r is not None else (-1, -1)

    def p(
        step: str,
        seq: Any,
        n: Any,
        tag: Any,
        epoch: Any = None,
        pid_: Any = None,
        txn: Any = False,
        ts: Any = 0,
    ) -> Any:
        return c.produce(
            step,
            v,
            t,
            0,
            recs(tag, n, TS0 + ts),
            pid=pid if pid_ is None else pid_,
            epoch=ep if epoch is None else epoch,
            seq=seq,
            txn=txn,
        )

    p("01.seq0_two_records", 0, 2, "a")
    p("02.seq2", 2, 1, "b", ts=2000)
    p("03.duplicate_of_seq2", 2, 1, "b", ts=2000)
    p("04.duplicate_of_first_batch", 0, 2, "a")
    p("05.gap_seq10", 10, 1, "c")
    p("06.seq3", 3, 1, "d", ts=3000)
    p("07.overlapping_seq1", 1, 1, "e")
    p("08.seq4_two_records", 4, 2, "f", ts=4000)
    p("09.unknown_producer_id_seq5", 5, 1, "g", epoch=0, pid_=BOGUS_PID)
    p("10.bumped_epoch_seq0", 0, 1, "h", epoch=ep + 1, ts=6000)
    p("11.old_epoch", 6, 1, "i", epoch=ep)
    p("12.bumped_epoch_seq1", 1, 1, "j", epoch=ep + 1, ts=7000)
    p("13.new_epoch_nonzero_seq", 3, 1, "k", epoch=ep + 2)
    c.produce("14.plain_no_producer_id", v, t, 0, recs("l", 1, TS0 + 8000))
    p("15.transactional_flag_without_transaction", 2, 1, "m", epoch=ep + 1, txn=True)
    fetch(c, "16.fetch_all", 11, t, [0])
    describe_producers(c, "17.describe_producers", [(t, [0])])
    list_offsets(c, "18.latest", 9, t, [(0, -1)])


class Txn:
    def __init__(self, c: Case, tid: Any, prof: Any, conn: Any = "A") -> None:
        self.c, self.tid, self.conn = c, tid, conn
        self.v = TXN[prof] if isinstance(prof, str) else prof
        self.pid, self.epoch = -1, -1
        self.seq: dict[Any, int] = {}

    def _init_fields(self, timeout: Any) -> Any:
        return dict(
            transactional_id=self.tid, transaction_timeout_ms=timeout, producer_id=-1, producer_epoch=-1
        )

    def _absorb(self, r: Any) -> Any:
        if r is not None and r.error_code == 0:
            self.pid, self.epoch, self.seq = r.producer_id, r.producer_epoch, {}
        return r

    def init(self, step: str, timeout: Any = 60000) -> Any:
        return self._absorb(
            self.c.call(
                "InitProducerId", self.v["InitProducerId"], self._init_fields(timeout), step, self.conn
            )
        )

    def init_until_ok(self, step: str, timeout: Any = 60000) -> Any:
        """Retry InitProducerId (unrecorded) while it answers CONCURRENT_TRANSACTIONS; record the last
        answer."""
        t_end = time.monotonic() + WAIT_LIMIT
        while True:
            p = self.c.send(
                "InitProducerId", self.v["InitProducerId"], self._init_fields(timeout), self.conn
            ).read()
            if p.ok and p.resp.error_code in (51, 15, 14) and time.monotonic() < t_end:
                time.sleep(0.05)
                continue
            self.c.record_pending(step, p)
            return self._absorb(p.resp if p.ok else None)

    def add_partitions(self, step: str, tps: Any, pid: Any = None, epoch: Any = None, tid: Any = None) -> Any:
        topics = [dict(name=n, partitions=list(ps)) for n, ps in tps]
        f = dict(
            v3_and_below_transactional_id=self.tid if tid is None else tid,
            v3_and_below_producer_id=self.pid if pid is None else pid,
            v3_and_below_producer_epoch=self.epoch if epoch is None else epoch,
            v3_and_below_topics=topics,
        )
        return self.c.call("AddPartitionsToTxn", self.v["AddPartitionsToTxn"], f, step, self.conn)

    def produce(
        self,
        step: str,
        topic: Any,
        part: Any,
        n: Any,
        tag: Any,
        epoch: Any = None,
        seq: Any = None,
        pid: Any = None,
        txn: Any = True,
        ts: Any = 0,
    ) -> Any:
        key = (topic, part)
        s = self.seq.get(key, 0) if seq is None else seq
        r = self.c.produce(
            step,
            self.v["Produce"],
            topic,
            part,
            recs(tag, n, TS0 + ts),
            pid=self.pid if pid is None else pid,
            epoch=self.epoch if epoch is None else epoch,
            seq=s,
            txn=txn,
            tid=self.tid,
            conn=self.conn,
        )
        if (
            seq is None
            and epoch is None
            and pid is None
            and ok_all(r, "responses.partition_responses.error_code")
        ):
            self.seq[key] = s + n
        return r

    def add_offsets(self, step: str, group: Any, epoch: Any = None, tid: Any = None) -> Any:
        return self.c.call(
            "AddOffsetsToTxn",
            self.v["AddOffsetsToTxn"],
            dict(
                transactional_id=self.tid if tid is None else tid,
                producer_id=self.pid,
                producer_epoch=self.epoch if epoch is None else epoch,
                group_id=group,
            ),
            step,
            self.conn,
        )

    def commit_offsets(self, step: str, group: Any, topic: Any, parts: Any, epoch: Any = None) -> Any:
        return self.c.call(
            "TxnOffsetCommit",
            self.v["TxnOffsetCommit"],
            dict(
                transactional_id=self.tid,
                group_id=group,
                producer_id=self.pid,
                producer_epoch=self.epoch if epoch is None else epoch,
                generation_id=-1,
                member_id="",
                group_instance_id=None,
                topics=[
                    dict(
                        name=topic,
                        partitions=[
                            dict(
                                partition_index=p,
                                committed_offset=o,
                                committed_leader_epoch=-1,
                                committed_metadata=f"m{p}",
                            )
                            for p, o in parts
                        ],
                    )
                ],
            ),
            step,
            self.conn,
        )

    def end_fields(self, commit: Any, epoch: Any = None, tid: Any = None, pid: Any = None) -> Any:
        return dict(
            transactional_id=self.tid if tid is None else tid,
            producer_id=self.pid if pid is None else pid,
            producer_epoch=self.epoch if epoch is None else epoch,
            committed=commit,
        )

    def end(self, step: str, commit: Any = True, epoch: Any = None, tid: Any = None, pid: Any = None) -> Any:
        return self.c.call(
            "EndTxn", self.v["EndTxn"], self.end_fields(commit, epoch, tid, pid), step, self.conn
        )

    def settle(self) -> Any:
        """Wait (unrecorded) until the transaction is no longer in a Prepare* state: EndTxn answers once
        PrepareCommit/PrepareAbort is logged; the markers are written afterwards."""

        def done() -> Any:
            r = self.c.quiet("DescribeTransactions", 0, dict(transactional_ids=[self.tid]))
            return (
                r is not None
                and r.transaction_states
                and r.transaction_states[0].transaction_state
                not in ("PrepareCommit", "PrepareAbort", "PrepareEpochFence")
            )

        return self.c.poll(f"transaction {self.tid} to complete", done)


TXN_PROFILES = ("t0", "t2", "t4")


@family("txn.commit", TXN_PROFILES)
def txn_commit_case(c: Case, prof: Any) -> None:
    v = TXN[prof]
    t = c.topic("-t", parts=2)
    g = c.name("-g")
    tx = Txn(c, c.name("-tx"), prof)
    find_coordinator(c, "01.find_coordinator", v["FindCoordinator"], tx.tid, key_type=1)
    tx.init("02.init_producer_id")
    tx.add_partitions("03.add_partitions", [(t, [0, 1])])
    tx.add_partitions("04.add_partitions_again", [(t, [0])])
    tx.produce("05.produce_p0", t, 0, 2, "c0")
    tx.produce("06.produce_p1", t, 1, 1, "c1")
    tx.add_offsets("07.add_offsets_to_txn", g)
    tx.commit_offsets("08.txn_offset_commit", g, t, [(0, 2), (1, 1)])
    describe_transactions(c, "09.describe_ongoing", [tx.tid])
    fetch(c, "10.fetch_read_committed_ongoing", v["Fetch"], t, [0, 1], isolation=1)
    fetch(c, "11.fetch_read_uncommitted_ongoing", v["Fetch"], t, [0, 1], isolation=0)
    list_offsets(
        c, "12.list_offsets_latest_read_committed", v["ListOffsets"], t, [(0, -1), (1, -1)], isolation=1
    )
    offset_fetch(
        c, "13.offset_fetch_require_stable_pending", v["OffsetFetch"], g, t, [0, 1], require_stable=True
    )
    offset_fetch(c, "14.offset_fetch_pending", v["OffsetFetch"], g, t, [0, 1])
    tx.end("15.end_txn_commit", True)
    tx.settle()
    describe_transactions(c, "16.describe_after_commit", [tx.tid])
    fetch(c, "17.fetch_read_committed_after_commit", v["Fetch"], t, [0, 1], isolation=1)
    list_offsets(
        c, "18.list_offsets_latest_read_committed_after", v["ListOffsets"], t, [(0, -1), (1, -1)], isolation=1
    )
    offset_fetch(
        c, "19.offset_fetch_require_stable_after", v["OffsetFetch"], g, t, [0, 1], require_stable=True
    )
    describe_producers(c, "20.describe_producers", [(t, [0, 1])])
    tx.end("21.end_txn_commit_again", True)
    tx.end("22.end_txn_abort_after_commit", False)


@family("txn.abort", TXN_PROFILES)
def txn_abort_case(c: Case, prof: Any) -> None:
    v = TXN[prof]
    t = c.topic("-t")
    tx = Txn(c, c.name("-tx"), prof)
    tx.init("01.init_producer_id")
    tx.add_partitions("02.add_partitions", [(t, [0])])
    tx.produce("03.produce_to_commit", t, 0, 2, "ok")
    tx.end("04.end_txn_commit", True)
    tx.settle()
    tx.add_partitions("05.add_partitions_second_txn", [(t, [0])])
    tx.produce("06.produce_to_abort", t, 0, 2, "ab", ts=5000)
    fetch(c, "07.fetch_read_committed_before_abort", v["Fetch"], t, [0], isolation=1)
    tx.end("08.end_txn_abort", False)
    tx.settle()
    describe_transactions(c, "09.describe_after_abort", [tx.tid])
    fetch(c, "10.fetch_read_committed_after_abort", v["Fetch"], t, [0], isolation=1)
    fetch(c, "11.fetch_read_uncommitted_after_abort", v["Fetch"], t, [0], isolation=0)
    fetch(c, "12.fetch_read_committed_from_offset_4", v["Fetch"], t, [0], isolation=1, offsets={0: 4})
    list_offsets(c, "13.list_offsets_latest_read_committed", v["ListOffsets"], t, [(0, -1)], isolation=1)
    tx.end("14.end_txn_abort_again", False)
    tx.end("15.end_txn_commit_after_abort", True)
    describe_producers(c, "16.describe_producers", [(t, [0])])


@family("txn.fencing", TXN_PROFILES)
def txn_fencing_case(c: Case, prof: Any) -> None:
    v = TXN[prof]
    t = c.topic("-t")
    g = c.name("-g")
    tid = c.name("-tx")
    a, b = Txn(c, tid, prof, conn="A"), Txn(c, tid, prof, conn="B")
    a.init("01.A.init_producer_id")
    a.add_partitions("02.A.add_partitions", [(t, [0])])
    a.produce("03.A.produce", t, 0, 1, "a")
    b.init("04.B.init_while_A_ongoing")
    b.init_until_ok("05.B.init_retry")
    describe_transactions(c, "06.describe", [tid])
    a.produce("07.A.produce_old_epoch", t, 0, 1, "a2", seq=1, epoch=a.epoch)
    a.add_partitions("08.A.add_partitions_old_epoch", [(t, [0])])
    a.add_offsets("09.A.add_offsets_old_epoch", g)
    a.commit_offsets("10.A.txn_offset_commit_old_epoch", g, t, [(0, 1)])
    a.end("11.A.end_txn_old_epoch", True)
    b.add_partitions("12.B.add_partitions", [(t, [0])])
    b.produce("13.B.produce", t, 0, 1, "b")
    b.end("14.B.end_txn_commit", True)
    b.settle()
    fetch(c, "15.fetch_read_committed", v["Fetch"], t, [0], isolation=1)
    if v["InitProducerId"] >= 3:
        for step, ep in (
            ("16.init_stale_epoch_kip360", b.epoch - 1),
            ("17.init_future_epoch_kip360", b.epoch + 5),
        ):
            c.call(
                "InitProducerId",
                v["InitProducerId"],
                dict(
                    transactional_id=tid, transaction_timeout_ms=60000, producer_id=b.pid, producer_epoch=ep
                ),
                step,
                "B",
            )
    a.end("18.A.end_txn_abort_old_epoch", False)
    describe_producers(c, "19.describe_producers", [(t, [0])])


@family("txn.errors", TXN_PROFILES)
def txn_errors_case(c: Case, prof: Any) -> None:
    t = c.topic("-t", parts=2)
    g = c.name("-g")
    nosuch = c.name("-tx-nosuch")
    tx = Txn(c, c.name("-tx"), prof)
    tx.init("01.init_producer_id")
    tx.end("02.end_txn_commit_without_txn", True)
    tx.end("03.end_txn_abort_without_txn", False)
    tx.end("04.end_txn_unknown_transactional_id", True, tid=nosuch)
    tx.add_partitions("05.add_partitions_unknown_transactional_id", [(t, [0])], tid=nosuch)
    tx.add_partitions("06.add_partitions_wrong_producer_id", [(t, [0])], pid=BOGUS_PID)
    tx.add_partitions("07.add_partitions_future_epoch", [(t, [0])], epoch=tx.epoch + 1)
    tx.add_partitions("08.add_partitions_unknown_topic", [(t, [0]), (c.name("-nosuch"), [0])])
    tx.add_partitions("09.add_partitions_unknown_partition", [(t, [7])])
    tx.produce("10.produce_partition_not_in_txn", t, 1, 1, "x", seq=0)
    tx.add_offsets("11.add_offsets_unknown_transactional_id", g, tid=nosuch)
    tx.commit_offsets("12.txn_offset_commit_without_add_offsets", g, t, [(0, 1)])
    tx.add_partitions("13.add_partitions_ok", [(t, [0])])
    tx.produce("14.produce_sequence_gap", t, 0, 1, "y", seq=5)
    tx.produce("15.produce_non_transactional_batch_in_txn", t, 0, 1, "z", seq=0, txn=False)
    tx.end("16.end_txn_wrong_producer_id", True, pid=BOGUS_PID)
    tx.end("17.end_txn_abort", False)
    tx.settle()
    r = c.call(
        "InitProducerId",
        tx.v["InitProducerId"],
        dict(transactional_id=None, transaction_timeout_ms=60000),
        "18.init_idempotent",
    )
    if r is not None and r.error_code == 0:
        tx.add_partitions(
            "19.add_partitions_with_idempotent_producer_id",
            [(t, [0])],
            pid=r.producer_id,
            epoch=r.producer_epoch,
        )


@family("txn.list_describe", V["ListTransactions"])
def txn_list_describe_case(c: Case, v: int) -> None:
    t = c.topic("-t", parts=2)
    t1 = Txn(c, c.name("-tx-ongoing"), "t4", conn="A")
    t1.init("setup.ongoing.init")
    t1.add_partitions("setup.ongoing.add_partitions", [(t, [0])])
    t1.produce("setup.ongoing.produce", t, 0, 1, "o")
    t2 = Txn(c, c.name("-tx-committed"), "t4", conn="B")
    t2.init("setup.committed.init")
    t2.add_partitions("setup.committed.add_partitions", [(t, [1])])
    t2.produce("setup.committed.produce", t, 1, 1, "c")
    t2.end("setup.committed.end_txn", True)
    t2.settle()
    t3 = Txn(c, c.name("-tx-empty"), "t4", conn="C")
    t3.init("setup.empty.init")

    lt = c.stepper("ListTransactions", v)

    lt("01.list_all")
    lt("02.state_ongoing", states=["Ongoing"])
    lt("03.state_complete_commit_and_empty", states=["CompleteCommit", "Empty"])
    lt("04.producer_id", pids=[t2.pid])
    lt("05.unknown_state", states=["NoSuchState"])
    lt("06.unknown_producer_id", pids=[BOGUS_PID])
    if v >= 1:
        lt("07.duration_1h", duration=3600000)
        lt("08.duration_0", duration=0)
    describe_transactions(c, "09.describe_three_and_unknown", [t1.tid, t2.tid, t3.tid, c.name("-tx-nosuch")])
    describe_transactions(c, "10.describe_empty_list", [])
    describe_transactions(c, "11.describe_duplicate", [t1.tid, t1.tid])
    describe_producers(c, "12.describe_producers", [(t, [0, 1, 9])])
    describe_producers(c, "13.describe_producers_unknown_topic", [(c.name("-nosuch"), [0])])
    t1.end("cleanup.abort", False)
    t1.settle()


@family("txn.add_partitions_batched", V["AddPartitionsToTxn"][3:])
def txn_add_partitions_batched_case(c: Case, v: int) -> None:
    t = c.topic("-t", parts=2)
    tx = Txn(c, c.name("-tx"), "t4")
    tx.init("setup.init_producer_id")

    ap = c.stepper("AddPartitionsToTxn", v)

    ap("01.verify_only_not_added", [(tx.tid, tx.pid, tx.epoch, True, [(t, [0])])])
    ap("02.add", [(tx.tid, tx.pid, tx.epoch, False, [(t, [0])])])
    ap("03.verify_only_added", [(tx.tid, tx.pid, tx.epoch, True, [(t, [0])])])
    ap(
        "04.two_transactions",
        [
            (tx.tid, tx.pid, tx.epoch, False, [(t, [1])]),
            (c.name("-tx-nosuch"), BOGUS_PID, 0, False, [(t, [0])]),
        ],
    )
    ap("05.wrong_epoch_verify_only", [(tx.tid, tx.pid, tx.epoch + 1, True, [(t, [0])])])
    describe_transactions(c, "06.describe", [tx.tid])
    tx.end("cleanup.abort", False)
    tx.settle()


@case("txn.interleaved")
def txn_interleaved_case(c: Case) -> None:
    """Two transactional producers on one partition: B commits while A is open, then A aborts."""
    v = TXN["t4"]
    t = c.topic("-t")
    a, b = Txn(c, c.name("-tx-a"), "t4", conn="A"), Txn(c, c.name("-tx-b"), "t4", conn="B")
    a.init("01.A.init")
    b.init("02.B.init")
    a.add_partitions("03.A.add_partitions", [(t, [0])])
    b.add_partitions("04.B.add_partitions", [(t, [0])])
    a.produce("05.A.produce", t, 0, 1, "a1")
    b.produce("06.B.produce", t, 0, 1, "b1", ts=1000)
    a.produce("07.A.produce", t, 0, 1, "a2", ts=2000)
    fetch(c, "08.fetch_read_committed_both_open", v["Fetch"], t, [0], isolation=1)
    b.end("09.B.end_txn_commit", True)
    b.settle()
    fetch(c, "10.fetch_read_committed_A_open", v["Fetch"], t, [0], isolation=1)
    list_offsets(c, "11.list_offsets_read_committed_A_open", v["ListOffsets"], t, [(0, -1)], isolation=1)
    c.call(
        "ListTransactions",
        1,
        dict(state_filters=[], producer_id_filters=[], duration_filter=-1),
        "12.list_transactions",
    )
    a.end("13.A.end_txn_abort", False)
    a.settle()
    fetch(c, "14.fetch_read_committed_after", v["Fetch"], t, [0], isolation=1)
    fetch(c, "15.fetch_read_committed_from_offset_2", v["Fetch"], t, [0], isolation=1, offsets={0: 2})
    describe_producers(c, "16.describe_producers", [(t, [0])])


@case("txn.group_offsets")
def txn_group_offsets_case(c: Case) -> None:
    """TxnOffsetCommit v3+ carries the consumer's group generation and member id (KIP-447)."""
    t = c.topic("-t", parts=2)
    g = c.name("-g")
    m = ClassicMember(c, "K", g, [t])
    m.join_sync("setup.classic")
    tx = Txn(c, c.name("-tx"), "t4")
    tx.init("01.init_producer_id")
    tx.add_offsets("02.add_offsets_to_txn", g)

    def toc(step: str, v: int, gen: Any, member: Any, instance: Any = None, parts: Any = ((0, 4),)) -> Any:
        return c.call(
            "TxnOffsetCommit",
            v,
            dict(
                transactional_id=tx.tid,
                group_id=g,
                producer_id=tx.pid,
                producer_epoch=tx.epoch,
                generation_id=gen,
                member_id=member,
                group_instance_id=instance,
                topics=[
                    dict(
                        name=t,
                        partitions=[
                            dict(
                                partition_index=p,
                                committed_offset=o,
                                committed_leader_epoch=-1,
                                committed_metadata="gm",
                            )
                            for p, o in parts
                        ],
                    )
                ],
            ),
            step,
        )

    toc("03.member_generation_ok", 4, m.gen, m.member_id)
    toc("04.wrong_generation", 4, m.gen + 1, m.member_id)
    toc("05.unknown_member", 4, m.gen, BOGUS)
    toc("06.unknown_static_instance", 4, m.gen, m.member_id, instance="no-such-instance")
    toc("07.no_member_info_v4", 4, -1, "", parts=((1, 2),))
    toc("08.no_member_info_v2", 2, -1, "", parts=((1, 3),))
    tx.end("09.end_txn_commit", True)
    tx.settle()
    offset_fetch(c, "10.offset_fetch", 8, g, t, [0, 1], require_stable=True)
    m.heartbeat("11.classic_heartbeat")


@case("txn.pipelined")
def txn_pipelined_case(c: Case) -> None:
    """EndTxn and the next transactional request written back to back on one connection: the second
    request reaches the coordinator while the markers of the first may still be in flight."""
    t = c.topic("-t")
    tx = Txn(c, c.name("-tx"), "t4")
    tx.init("01.init")
    tx.add_partitions("02.add_partitions", [(t, [0])])
    tx.produce("03.produce", t, 0, 1, "x")
    p1 = c.send("EndTxn", 4, tx.end_fields(True))
    p2 = c.send(
        "AddPartitionsToTxn",
        3,
        dict(
            v3_and_below_transactional_id=tx.tid,
            v3_and_below_producer_id=tx.pid,
            v3_and_below_producer_epoch=tx.epoch,
            v3_and_below_topics=[dict(name=t, partitions=[0])],
        ),
    )
    c.record_pending("04.end_txn_commit", p1.read())
    c.record_pending("05.add_partitions_right_after_end_txn", p2.read())
    tx.settle()
    describe_transactions(c, "06.describe", [tx.tid])
    tx.end("cleanup.abort", False)
    tx.settle()


# --------------------------------------------------------------------------- ACLs


@family("acls", V["CreateAcls"])
def acls_case(c: Case, v: int) -> None:
    t, pre, g, tx = c.name("-t"), c.name("-"), c.name("-g"), c.name("-tx")
    alice, bob, carol, dave = (f"User:{u}-{c.prefix}" for u in ("alice", "bob", "carol", "dave"))

    def acl(rt: Any, rn: Any, pt: Any, pr: Any, host: Any, op: Any, perm: Any) -> Any:
        return dict(
            resource_type=rt,
            resource_name=rn,
            resource_pattern_type=pt,
            principal=pr,
            host=host,
            operation=op,
            permission_type=perm,
        )

    def create(step: str, creations: Any) -> Any:
        r = c.call("CreateAcls", v, dict(creations=creations), step)
        if any_ok(r, "results.error_code"):
            c.barrier()
        return r

    def flt(
        rt: Any = R_ANY,
        rn: Any = None,
        pt: Any = P_ANY,
        pr: Any = None,
        host: Any = None,
        op: Any = OP_ANY,
        perm: Any = PERM_ANY,
        delete: Any = False,
    ) -> Any:
        return dict(
            resource_type_filter=rt,
            resource_name_filter=rn,
            pattern_type_filter=pt,
            principal_filter=pr,
            host_filter=host,
            operation=op,
            permission_type=perm,
        )

    def describe(step: str, **kw: Any) -> Any:
        return c.call("DescribeAcls", v, flt(**kw), step)

    def delete(step: str, filters: Any) -> Any:
        r = c.call("DeleteAcls", v, dict(filters=filters), step)
        if r is not None and any(m.error_code == 0 for f in r.filter_results for m in f.matching_acls):
            c.barrier()
        return r

    create(
        "01.create_literal_topic_allow_read", [acl(R_TOPIC, t, P_LITERAL, alice, "*", OP_READ, PERM_ALLOW)]
    )
    create(
        "02.create_prefixed_topic_deny_write", [acl(R_TOPIC, pre, P_PREFIXED, bob, "*", OP_WRITE, PERM_DENY)]
    )
    create(
        "03.create_batch_group_cluster_txn",
        [
            acl(R_GROUP, g, P_LITERAL, alice, "*", OP_READ, PERM_ALLOW),
            acl(R_CLUSTER, "kafka-cluster", P_LITERAL, carol, "*", OP_DESCRIBE, PERM_ALLOW),
            acl(R_TXN, tx, P_LITERAL, alice, "10.0.0.1", OP_WRITE, PERM_ALLOW),
        ],
    )
    create("04.create_duplicate", [acl(R_TOPIC, t, P_LITERAL, alice, "*", OP_READ, PERM_ALLOW)])
    create("05.bad_pattern_match", [acl(R_TOPIC, t, P_MATCH, dave, "*", OP_READ, PERM_ALLOW)])
    create("06.bad_pattern_any", [acl(R_TOPIC, t, P_ANY, dave, "*", OP_READ, PERM_ALLOW)])
    create("07.bad_pattern_unknown", [acl(R_TOPIC, t, P_UNKNOWN, dave, "*", OP_READ, PERM_ALLOW)])
    create(
        "08.bad_principal_no_type", [acl(R_TOPIC, t, P_LITERAL, "dave-" + c.prefix, "*", OP_READ, PERM_ALLOW)]
    )
    create("09.bad_principal_empty", [acl(R_TOPIC, t, P_LITERAL, "", "*", OP_READ, PERM_ALLOW)])
    create(
        "10.principal_group_type",
        [acl(R_TOPIC, t, P_LITERAL, "Group:dave-" + c.prefix, "*", OP_READ, PERM_ALLOW)],
    )
    create("11.bad_operation_any", [acl(R_TOPIC, t, P_LITERAL, dave, "*", OP_ANY, PERM_ALLOW)])
    create("12.bad_permission_any", [acl(R_TOPIC, t, P_LITERAL, dave, "*", OP_READ, PERM_ANY)])
    create("13.bad_resource_type_any", [acl(R_ANY, t, P_LITERAL, dave, "*", OP_READ, PERM_ALLOW)])
    create(
        "14.bad_cluster_name",
        [acl(R_CLUSTER, "not-kafka-cluster", P_LITERAL, dave, "*", OP_DESCRIBE, PERM_ALLOW)],
    )
    create("15.empty_resource_name", [acl(R_TOPIC, "", P_LITERAL, dave, "*", OP_READ, PERM_ALLOW)])
    create("16.operation_invalid_for_resource", [acl(R_GROUP, g, P_LITERAL, dave, "*", 9, PERM_ALLOW)])
    create(
        "17.mixed_batch",
        [
            acl(R_TOPIC, c.name("-t2"), P_LITERAL, dave, "*", OP_READ, PERM_ALLOW),
            acl(R_TOPIC, t, P_MATCH, dave, "*", OP_READ, PERM_ALLOW),
        ],
    )
    describe("18.describe_any")
    describe("19.describe_literal_exact", rt=R_TOPIC, rn=t, pt=P_LITERAL)
    describe("20.describe_match", rt=R_TOPIC, rn=t, pt=P_MATCH)
    describe("21.describe_prefixed", rt=R_TOPIC, rn=pre, pt=P_PREFIXED)
    describe("22.describe_by_principal", pr=bob)
    describe("23.describe_by_host", host="10.0.0.1")
    describe("24.describe_by_operation_write", op=OP_WRITE)
    describe("25.describe_by_permission_deny", perm=PERM_DENY)
    describe("26.describe_no_match", rt=R_TOPIC, rn=c.name("-none"), pt=P_LITERAL)
    describe("27.describe_bad_pattern_unknown", pt=P_UNKNOWN)
    describe("28.describe_bad_resource_type_unknown", rt=0)
    delete(
        "29.delete_literal_exact", [flt(R_TOPIC, t, P_LITERAL, alice, "*", OP_READ, PERM_ALLOW, delete=True)]
    )
    delete("30.delete_by_principal_any_resource", [flt(pr=bob, delete=True)])
    delete("31.delete_no_match", [flt(R_TOPIC, c.name("-none"), P_LITERAL, delete=True)])
    delete(
        "32.delete_two_filters",
        [flt(R_GROUP, g, P_LITERAL, delete=True), flt(R_TXN, tx, P_ANY, host="10.0.0.1", delete=True)],
    )
    delete("33.delete_bad_filter", [flt(pt=P_UNKNOWN, pr=carol, delete=True)])
    describe("34.describe_after_delete")
    delete(
        "35.delete_rest",
        [flt(pr=carol, delete=True), flt(pr=dave, delete=True), flt(R_TOPIC, t, P_ANY, delete=True)],
    )
    describe("36.describe_final")


# --------------------------------------------------------------------------- SCRAM


@case("scram")
def scram_case(c: Case) -> None:
    alice, bob, carol, nobody = (f"{u}-{c.prefix}" for u in ("alice", "bob", "carol", "nobody"))

    dus = c.stepper("DescribeUserScramCredentials", 0)

    def aus(step: str, ups: Any = (), dels: Any = ()) -> Any:
        r = c.step("AlterUserScramCredentials", 0, step, ups, dels)
        if any_ok(r, "results.error_code"):
            c.barrier()
        return r

    dus("01.describe_all_none_yet", None)
    dus("02.describe_unknown_user", [nobody])
    aus("03.upsert_sha256", ups=[(alice, 1, 4096)])
    aus("04.upsert_sha512", ups=[(alice, 2, 8192)])
    dus("05.describe_alice", [alice])
    aus("06.iterations_too_low", ups=[(bob, 1, 1000)])
    aus("07.iterations_too_high", ups=[(bob, 1, 20000)])
    aus("08.unknown_mechanism_0", ups=[(bob, 0, 4096)])
    aus("09.unknown_mechanism_9", ups=[(bob, 9, 4096)])
    aus("10.empty_user_name", ups=[("", 1, 4096)])
    aus("11.delete_unknown_user", dels=[(nobody, 1)])
    aus("12.delete_mechanism_not_set", dels=[(alice, 9)])
    aus("13.upsert_and_delete_same_user", ups=[(bob, 1, 4096)], dels=[(bob, 1)])
    aus("14.batch_two_users", ups=[(bob, 1, 4096), (carol, 2, 4096)])
    dus("15.describe_all", None)
    dus("16.describe_duplicate_user", [alice, alice])
    dus("17.describe_known_and_unknown", [alice, nobody])
    aus("18.delete_sha256", dels=[(alice, 1)])
    dus("19.describe_alice_after_delete", [alice])
    aus("20.delete_rest", dels=[(alice, 2), (bob, 1), (carol, 2)])
    dus("21.describe_all_after_cleanup", None)
    dus("22.describe_empty_list", [])


# --------------------------------------------------------------------------- client quotas


@family("quotas", V["DescribeClientQuotas"])
def quotas_case(c: Case, v: int) -> None:
    u, cl = "u-" + c.prefix, "c-" + c.prefix

    dq = c.stepper("DescribeClientQuotas", v)

    def aq(step: str, entries: Any, validate_only: Any = False) -> Any:
        r = c.step("AlterClientQuotas", v, step, entries, validate_only)
        if not validate_only and any_ok(r, "entries.error_code"):
            c.barrier()
        return r

    dq("01.describe_user_none", [("user", 0, u)])
    aq("02.set_user_producer_rate", [([("user", u)], [("producer_byte_rate", 1024, False)])])
    aq(
        "03.set_user_client_consumer_rate",
        [([("user", u), ("client-id", cl)], [("consumer_byte_rate", 2048, False)])],
    )
    aq("04.set_client_request_percentage", [([("client-id", cl)], [("request_percentage", 50, False)])])
    dq("05.describe_user_exact", [("user", 0, u)])
    dq("06.describe_user_exact_strict", [("user", 0, u)], strict=True)
    dq("07.describe_user_and_client", [("user", 0, u), ("client-id", 0, cl)])
    dq("08.describe_client_specified", [("client-id", 2, None)])
    dq("09.describe_user_default", [("user", 1, None)])
    dq("10.describe_unknown_entity_type", [("bogus-type", 0, "x")])
    dq("11.describe_bad_match_type", [("user", 7, u)])
    dq("12.describe_duplicate_entity_type", [("user", 0, u), ("user", 0, u)])
    dq("13.describe_exact_with_null_match", [("user", 0, None)])
    aq("14.validate_only", [([("user", u)], [("consumer_byte_rate", 4096, False)])], validate_only=True)
    dq("15.describe_after_validate_only", [("user", 0, u)], strict=True)
    aq("16.unknown_key", [([("user", u)], [("no_such_quota", 1, False)])])
    aq("17.non_integer_byte_rate", [([("user", u)], [("producer_byte_rate", 1.5, False)])])
    aq("18.negative_value", [([("user", u)], [("producer_byte_rate", -5, False)])])
    aq("19.unknown_entity_type", [([("bogus-type", "x")], [("producer_byte_rate", 1, False)])])
    aq("20.ip_entity", [([("ip", "192.0.2.1")], [("connection_creation_rate", 10, False)])])
    aq("21.ip_invalid", [([("ip", "not-an-ip")], [("connection_creation_rate", 10, False)])])
    aq("22.ip_with_user", [([("ip", "192.0.2.1"), ("user", u)], [("connection_creation_rate", 10, False)])])
    aq("23.byte_rate_key_on_ip", [([("ip", "192.0.2.2")], [("producer_byte_rate", 10, False)])])
    aq("24.empty_entity", [([], [("producer_byte_rate", 1, False)])])
    aq(
        "25.duplicate_key_in_ops",
        [([("user", u)], [("producer_byte_rate", 1, False), ("producer_byte_rate", 2, False)])],
    )
    aq("26.remove_user_producer_rate", [([("user", u)], [("producer_byte_rate", 0, True)])])
    aq("27.remove_absent", [([("user", u)], [("producer_byte_rate", 0, True)])])
    dq("28.describe_after_remove", [("user", 0, u)])
    aq(
        "29.cleanup",
        [
            ([("user", u), ("client-id", cl)], [("consumer_byte_rate", 0, True)]),
            ([("client-id", cl)], [("request_percentage", 0, True)]),
            ([("ip", "192.0.2.1")], [("connection_creation_rate", 0, True)]),
            ([("user", u)], [("producer_byte_rate", 0, True), ("consumer_byte_rate", 0, True)]),
        ],
    )
    dq("30.describe_after_cleanup", [("user", 0, u)])


# --------------------------------------------------------------------------- KIP-848


class CMember:
    """A KIP-848 consumer: ConsumerGroupHeartbeat v0 on its own connection."""

    def __init__(self, c: Case, name: Any, group: Any, topics: Any) -> None:
        self.c, self.name, self.group, self.topics = c, name, group, topics
        self.member_id, self.epoch = "", 0
        self.assigned: list[Any] = []

    def owned(self) -> Any:
        return list(self.assigned)

    def hb(
        self,
        step: str,
        epoch: Any = None,
        member_id: Any = None,
        topics: Any = None,
        owned: Any = None,
        rebalance: Any = -1,
        assignor: Any = None,
        group: Any = None,
        instance: Any = None,
        absorb: Any = True,
    ) -> Any:
        tp = None if owned is None else [dict(topic_id=i, partitions=list(ps)) for i, ps in owned]
        f = dict(
            group_id=self.group if group is None else group,
            member_id=self.member_id if member_id is None else member_id,
            member_epoch=self.epoch if epoch is None else epoch,
            instance_id=instance,
            rack_id=None,
            rebalance_timeout_ms=rebalance,
            subscribed_topic_names=topics,
            server_assignor=assignor,
            topic_partitions=tp,
        )
        r = self.c.call("ConsumerGroupHeartbeat", 0, f, step, self.name)
        if absorb and r is not None and r.error_code == 0:
            if r.member_id:
                self.member_id = r.member_id
            self.epoch = r.member_epoch
            if r.assignment is not None:
                self.assigned = [(tp.topic_id, sorted(tp.partitions)) for tp in r.assignment.topic_partitions]
        return r

    def join(self, step: str, **kw: Any) -> Any:
        kw.setdefault("topics", self.topics)
        kw.setdefault("rebalance", 30000)
        kw.setdefault("owned", [])
        return self.hb(step, epoch=0, **kw)


def cg_describe(c: Case, step: str, groups: Any, ops: Any = False) -> Any:
    return c.call(
        "ConsumerGroupDescribe", 0, dict(group_ids=list(groups), include_authorized_operations=ops), step
    )


@case("kip848.flow")
def kip848_flow_case(c: Case) -> None:
    t = c.topic("-t", parts=2)
    c.wait_group_coordinator(t, 2)
    g = c.name("-g")
    a, b = CMember(c, "A", g, [t]), CMember(c, "B", g, [t])
    a.join("01.A.join")
    a.hb("02.A.ack_assignment", owned=a.owned())
    cg_describe(c, "03.describe_one_member", [g])
    b.join("04.B.join")
    a.hb("05.A.heartbeat_gets_revocation")
    a.hb("06.A.ack_revocation", owned=a.owned())
    b.hb("07.B.heartbeat_gets_partition", owned=b.owned())
    b.hb("08.B.ack_assignment", owned=b.owned())
    cg_describe(c, "09.describe_two_members", [g])
    c.call(
        "DescribeGroups",
        5,
        dict(groups=[g], include_authorized_operations=False),
        "10.describe_groups_classic_api",
    )
    c.call("ListGroups", 5, dict(states_filter=[], types_filter=[]), "11.list_groups")

    def commit(step: str, epoch: Any) -> Any:
        return c.call(
            "OffsetCommit",
            9,
            dict(
                group_id=g,
                generation_id_or_member_epoch=epoch,
                member_id=a.member_id,
                group_instance_id=None,
                topics=[
                    dict(
                        name=t,
                        partitions=[
                            dict(
                                partition_index=p,
                                committed_offset=3,
                                committed_leader_epoch=-1,
                                committed_metadata="",
                            )
                            for (p,) in [(x,) for x in a.assigned[0][1]]
                        ]
                        if a.assigned
                        else [],
                    )
                ],
            ),
            step,
            "A",
        )

    commit("12.offset_commit_member_epoch", a.epoch)
    commit("13.offset_commit_stale_epoch", a.epoch - 1)
    commit("14.offset_commit_future_epoch", a.epoch + 1)
    offset_fetch(
        c, "15.offset_fetch_with_member_epoch", 9, g, t, [0, 1], member_id=a.member_id, member_epoch=a.epoch
    )
    a.hb("16.A.fenced_epoch", epoch=a.epoch + 5, absorb=False)
    a.hb("17.unknown_member", member_id=BOGUS, epoch=1, absorb=False)
    a.hb("18.A.heartbeat_after_fenced_attempt")
    b.hb("19.B.leave", epoch=-1, absorb=False)
    b.hb("20.B.heartbeat_after_leave", absorb=False)
    a.hb("21.A.heartbeat_after_B_left")
    a.hb("22.A.ack", owned=a.owned())
    cg_describe(c, "23.describe_after_leave", [g])
    a.hb("24.A.leave", epoch=-1, absorb=False)
    cg_describe(c, "25.describe_empty", [g])


@case("kip848.static")
def kip848_static_case(c: Case) -> None:
    t = c.topic("-t", parts=2)
    c.wait_group_coordinator(t, 2)
    g = c.name("-g")
    a, a2 = CMember(c, "A", g, [t]), CMember(c, "A2", g, [t])
    a.join("01.A.join_static", instance="i1")
    a.hb("02.A.ack_assignment", owned=a.owned(), instance="i1")
    a2.join("03.A2.join_same_instance_while_active", instance="i1", absorb=False)
    cg_describe(c, "04.describe", [g])
    a.hb("05.A.leave_temporarily", epoch=-2, instance="i1", absorb=False)
    cg_describe(c, "06.describe_after_temporary_leave", [g])
    a2.join("07.A2.rejoin_same_instance", instance="i1")
    a.hb("08.A.old_member_id_heartbeat", instance="i1", absorb=False)
    a2.hb("09.A2.ack_assignment", owned=a2.owned(), instance="i1")
    cg_describe(c, "10.describe_after_rejoin", [g])
    a2.hb("11.A2.leave", epoch=-1, instance="i1", absorb=False)
    cg_describe(c, "12.describe_after_leave", [g])


@case("kip848.errors")
def kip848_errors_case(c: Case) -> None:
    t = c.topic("-t")
    c.wait_group_coordinator(t, 1)
    g = c.name("-g")
    x = CMember(c, "X", g, [t])
    x.join("01.join_without_subscription", topics=None, absorb=False)
    x.join("02.join_empty_group_id", group="", absorb=False)
    x.join("03.join_without_rebalance_timeout", rebalance=-1, absorb=False)
    x.join("04.join_unknown_assignor", assignor="no-such-assignor", absorb=False)
    x.join("05.join_with_owned_partitions", owned=[(c.topic_ids.get(t), [0])], absorb=False)
    x.join("06.join_unknown_member_id_epoch_0", member_id=BOGUS, absorb=False)
    x.hb("07.empty_member_id_epoch_1", member_id="", epoch=1, absorb=False)
    x.hb("08.epoch_minus_2_without_instance_id", member_id=BOGUS, epoch=-2, absorb=False)
    x.hb("09.epoch_minus_3", member_id=BOGUS, epoch=-3, absorb=False)
    y = CMember(c, "Y", c.name("-g-unknown-topic"), [c.name("-nosuch")])
    y.join("10.join_unknown_topic")
    z = CMember(c, "Z", c.name("-g-empty-sub"), [])
    z.join("11.join_empty_subscription")
    w = CMember(c, "W", c.name("-g-range"), [t])
    w.join("12.join_range_assignor", assignor="range")
    gc = c.name("-g-classic")
    m = ClassicMember(c, "K", gc, [t])
    m.join_sync("setup.classic")
    v = CMember(c, "V", gc, [t])
    v.join("13.join_classic_group_with_member")
    m.heartbeat("14.classic_member_heartbeat_after")
    cg_describe(c, "15.describe_classic_group", [gc])
    cg_describe(c, "16.describe_unknown_group", [c.name("-g-nosuch")])
    cg_describe(c, "17.describe_empty_group_id", [""])
    cg_describe(c, "18.describe_authorized_operations", [w.group], ops=True)
    k2 = ClassicMember(c, "K2", w.group, [t])
    k2.join("19.classic_join_on_consumer_group")
    c.call(
        "DescribeGroups",
        5,
        dict(groups=[gc, c.name("-g-nosuch")], include_authorized_operations=False),
        "20.describe_groups_classic_api",
    )
    x.hb("cleanup.X.leave", member_id=BOGUS, epoch=-1, absorb=False)
    for mem, step in (
        (y, "cleanup.Y.leave"),
        (z, "cleanup.Z.leave"),
        (w, "cleanup.W.leave"),
        (v, "cleanup.V.leave"),
    ):
        if mem.member_id:
            mem.hb(step, epoch=-1, absorb=False)


# --------------------------------------------------------------------------- driver


class Probe:
    def __init__(self, bootstrap: Any, out: Any, only: Any = None, trace: Any = False) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.addr = (host, int(port))
        self.out, self.only, self.trace = out, only, trace
        self.t0 = time.monotonic()
        self.token = "r" + os.urandom(4).hex()
        self.now_ms = int(time.time() * 1000)
        self.node_id = None
        self.barriers = 0
        self.n_records = 0
        self.case_ids: list[str] = []

    def setup(self) -> None:
        """Learn the node id, and make sure both coordinators are loaded (unrecorded)."""
        c = Case(self, "setup")
        r = c.quiet(
            "Metadata",
            12,
            dict(topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False),
        )
        if r is None:
            raise RuntimeError(f"no Metadata answer from {self.addr[0]}:{self.addr[1]}")
        brokers = [b for b in r.brokers if (b.host, b.port) == self.addr] or list(r.brokers)
        self.node_id = brokers[0].node_id
        warm = f"p2-{self.token}-warm"
        steps = [
            ("FindCoordinator", 3, dict(key=warm, key_type=0), lambda r: r.error_code == 0),
            (
                "DescribeGroups",
                5,
                dict(groups=[warm], include_authorized_operations=False),
                lambda r: r.groups and r.groups[0].error_code not in (14, 15, 16),
            ),
            ("FindCoordinator", 3, dict(key=warm, key_type=1), lambda r: r.error_code == 0),
            (
                "InitProducerId",
                4,
                dict(transactional_id=warm, transaction_timeout_ms=60000),
                lambda r: r.error_code == 0,
            ),
        ]
        for api, v, f, good in steps:

            def answered(api: str = api, v: int = v, f: Any = f, good: Any = good) -> bool:
                r = c.quiet(api, v, f)
                return r is not None and bool(good(r))

            c.poll(f"setup {api}", answered, limit=60)
        c.close()

    def emit(self, rec: Any) -> None:
        self.out.write(json.dumps(rec) + "\n")
        self.n_records += 1

    def run(self) -> Any:
        self.setup()
        todo = [x for x in CASES if not self.only or any(o in x[0] for o in self.only)]
        todo = [x for x in todo if not x[2]] + [x for x in todo if x[2]]
        for cid, fn, _final in todo:
            c = Case(self, cid)
            try:
                fn(c)
            except Exception as e:
                import traceback

                traceback.print_exc()
                c.emit({"case": cid, "step": "exception", "outcome": f"{type(e).__name__}: {e}"})
            finally:
                c.close()
            self.case_ids.append(cid)
            for rec in c.records:
                self.emit(rec)
            self.out.flush()
        return time.monotonic() - self.t0
