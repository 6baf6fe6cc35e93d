"""A broker process asks another process's transaction coordinator before a transactional
write, as a Kafka partition leader asks the coordinator (AddPartitionsToTxnManager, KIP-890):
AddPartitionsToTxn v4 with verify_only before a Produce (v3-11) or TxnOffsetCommit (v0-4)
appends, v5 adding the partitions for a transaction-version-2 client (Produce v12+,
TxnOffsetCommit v5+), whose append adds them. A coordinator this process holds is asked
directly, as before (shim.handlers.produce, shim.handlers.txn_offset_commit)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from kafka_shim.protocol.errors import ErrorCode, error_code_of
from kafka_shim.protocol.internal_topics import OFFSETS_TOPIC
from kafka_shim.protocol.messages.add_partitions_to_txn import API as ADD_PARTITIONS_TO_TXN
from kafka_shim.protocol.messages.find_coordinator import TRANSACTION_KEY_TYPE
from kafka_shim.protocol.records import RecordsError, read_header
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.handlers import Handler, txn_offset_commit
from kafka_shim.shim.handlers import produce as produce_handler
from kafka_shim.shim.processes.peer import Peer, PeerCallError, PeerConnections

log = logging.getLogger("kafka_shim.processes")

VERIFY_VERSION, ADD_VERSION = 4, 5
TIMEOUT_S = 5.0  # the longest a write waits for the coordinator's answer
# What a write is answered when the coordinator cannot be asked: retriable for the client.
UNREACHABLE = ErrorCode.COORDINATOR_NOT_AVAILABLE


class CoordinatorChecks:
    def __init__(self, peer: Callable[[int], Peer | None], connections: PeerConnections) -> None:
        """`peer`: how to reach a broker's Kafka listener (None: no listener lets it in), over
        `connections` (kept between checks)."""
        self._peer = peer
        self._connections = connections

    async def check(
        self,
        ctx: RequestContext,
        transactional_id: str,
        batches: Iterable[tuple[TopicPartition, int, int]],
        add: bool,
    ) -> dict[TopicPartition, ErrorCode]:
        """The coordinator's answer for each (partition, producer id, epoch)."""
        by_producer: dict[tuple[int, int], list[TopicPartition]] = {}
        for tp, producer_id, epoch in batches:
            by_producer.setdefault((producer_id, epoch), []).append(tp)
        if not by_producer:
            return {}
        coordinator = ctx.broker.cluster.coordinator(TRANSACTION_KEY_TYPE, transactional_id)
        peer = self._peer(coordinator)
        every = [tp for partitions in by_producer.values() for tp in partitions]
        if peer is None:
            return dict.fromkeys(every, UNREACHABLE)
        transactions = []
        for (producer_id, epoch), partitions in by_producer.items():
            topics: dict[str, list[int]] = {}
            for tp in partitions:
                topics.setdefault(tp.topic, []).append(tp.partition)
            transactions.append(
                {
                    "transactional_id": transactional_id,
                    "producer_id": producer_id,
                    "producer_epoch": epoch,
                    "verify_only": not add,
                    "topics": [{"name": name, "partitions": ids} for name, ids in topics.items()],
                }
            )
        version = ADD_VERSION if add else VERIFY_VERSION
        try:
            body = {"transactions": transactions}
            answer = await self._connections.call(peer, ADD_PARTITIONS_TO_TXN, version, body, TIMEOUT_S)
        except PeerCallError as exc:
            log.warning("cannot ask the transaction coordinator of %r: %s", transactional_id, exc)
            return dict.fromkeys(every, UNREACHABLE)
        if answer.error_code != ErrorCode.NONE:  # CLUSTER_AUTHORIZATION_FAILED: see super.users
            refused = error_code_of(answer.error_code)
            log.warning(
                "the transaction coordinator of %r refused a broker's check: %s",
                transactional_id,
                refused.name,
            )
            return dict.fromkeys(every, refused)
        found: dict[TopicPartition, ErrorCode] = {}
        for txn in answer.results_by_transaction:
            for topic in txn.topic_results:
                for p in topic.results_by_partition:
                    found[TopicPartition(topic.name, p.partition_index)] = error_code_of(
                        p.partition_error_code
                    )
        return {tp: found.get(tp, UNREACHABLE) for tp in every}

    def produce(self, handler: Handler) -> Handler:
        """Produce: the transactional batches of a transaction coordinated elsewhere are checked
        (or, from v12, added) there first; the handler reads the answers from the context."""

        async def handle(ctx: RequestContext, body: Any) -> Any:
            transactional_id = body.transactional_id
            if transactional_id is None or ctx.coordinates(TRANSACTION_KEY_TYPE, transactional_id):
                return await handler.handle(ctx, body)
            add = ctx.api_version >= produce_handler.FIRST_IMPLICIT_ADD_VERSION
            ctx.transaction_checks = await self.check(ctx, transactional_id, _batches(ctx, body), add)
            try:
                return await handler.handle(ctx, body)
            finally:
                ctx.transaction_checks = None

        return replace(handler, handle=handle)

    def txn_offset_commit(self, handler: Handler) -> Handler:
        """TxnOffsetCommit: the group's `__consumer_offsets` partition checked (or, from v5,
        added) by the transaction's coordinator when another process is it."""

        async def handle(ctx: RequestContext, body: Any) -> Any:
            transactional_id = body.transactional_id
            if not transactional_id or ctx.coordinates(TRANSACTION_KEY_TYPE, transactional_id):
                return await handler.handle(ctx, body)
            partition = TopicPartition(
                OFFSETS_TOPIC, ctx.broker.group_service.offsets_log.partition_for(body.group_id)
            )
            add = ctx.api_version >= txn_offset_commit.FIRST_IMPLICIT_ADD_VERSION
            batch = (partition, body.producer_id, body.producer_epoch)
            code = (await self.check(ctx, transactional_id, [batch], add))[partition]
            return txn_offset_commit.respond(ctx, body, lambda *_: code)

        return replace(handler, handle=handle)


def _batches(ctx: RequestContext, body: Any) -> list[tuple[TopicPartition, int, int]]:
    """(partition, producer id, epoch) of each partition's first batch that is transactional,
    but for partitions where that producer's transaction is already open (Kafka verifies
    only a transaction's first batch in a partition: the handler checks it is still open);
    a batch that cannot be read, or a partition this process lacks, is left to the handler."""
    out = []
    topics = ctx.broker.topics
    by_id = ctx.api_version >= produce_handler.FIRST_TOPIC_ID_VERSION
    for topic in body.topic_data:
        found = topics.get_by_id(topic.topic_id) if by_id else topics.get(topic.name)
        if found is None:
            continue
        for p in topic.partition_data:
            log = found.partition(p.index)
            if log is None or not p.records:
                continue
            try:
                header = read_header(p.records)
            except RecordsError:
                continue
            producer_id, epoch = header.producer_id, header.producer_epoch
            if header.is_transactional and not log.producers.in_transaction(producer_id, epoch):
                out.append((TopicPartition(found.name, p.index), producer_id, epoch))
    return out
