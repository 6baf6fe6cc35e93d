"""EndTxn's checks (Kafka's TransactionCoordinator.endTransaction): whether a request may end
the transaction, is a retry to answer again, or is refused; pure, the coordinator acts on it."""

from __future__ import annotations

from typing import NamedTuple

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.transactions.state import COMPLETING, MAX_EPOCH, TransactionMetadata, TxnState
from kafka_shim.shim.transactions.types import ProducerIdAndEpoch


class EndNow(NamedTuple):
    """The transaction goes to PrepareCommit / PrepareAbort; `no_partitions` for a TV2 abort
    with no transaction open (Kafka still wants a start time then)."""

    no_partitions: bool = False


def end_check(
    meta: TransactionMetadata, producer_id: int, producer_epoch: int, commit: bool, tv2: bool
) -> ProducerIdAndEpoch | EndNow:
    """The answer to an EndTxn that changes nothing (an error, or a retry's same answer), or
    EndNow. Under TV2 the epoch is bumped when a transaction ends: a request one epoch behind
    is a retry whose answer was lost, and after an overflow the retry comes from the old id."""
    state = meta.state
    retry_on_bump = tv2 and meta.producer_epoch == producer_epoch + 1
    retry_on_overflow = (
        tv2
        and meta.previous_producer_id == producer_id
        and producer_epoch == MAX_EPOCH - 1
        and meta.producer_epoch == 0
    )
    retry = retry_on_bump or retry_on_overflow
    if tv2 and state in COMPLETING:
        valid_epoch = retry_on_bump
    elif tv2 and state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
        valid_epoch = retry or producer_epoch == meta.producer_epoch
    else:
        valid_epoch = producer_epoch == meta.producer_epoch
    if meta.producer_id != producer_id and not retry_on_overflow:
        return ProducerIdAndEpoch(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    if not valid_epoch:
        return ProducerIdAndEpoch(ErrorCode.PRODUCER_FENCED)
    same = ProducerIdAndEpoch(ErrorCode.NONE, meta.producer_id, meta.producer_epoch)
    invalid = ProducerIdAndEpoch(ErrorCode.INVALID_TXN_STATE)
    if state is TxnState.ONGOING:
        return EndNow()
    if state is TxnState.COMPLETE_COMMIT:
        if commit:
            return same if retry or not tv2 else invalid
        return EndNow(no_partitions=True) if tv2 and not retry else invalid
    if state is TxnState.COMPLETE_ABORT:
        if commit:
            return invalid
        return same if retry or not tv2 else EndNow(no_partitions=True)
    if state in COMPLETING:
        concurrent = (state is TxnState.PREPARE_COMMIT) == commit
        return ProducerIdAndEpoch(ErrorCode.CONCURRENT_TRANSACTIONS) if concurrent else invalid
    if state is TxnState.EMPTY and tv2 and not commit:
        return EndNow(no_partitions=True)
    return invalid
