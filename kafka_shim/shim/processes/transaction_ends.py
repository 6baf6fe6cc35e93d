"""EndTxn in a broker process answered once the transaction has completed, or ANSWER_WITHIN_S
after PrepareCommit / PrepareAbort was written, whichever is first. The answer is the one the
handler gave (NONE: the Prepare record is durable, as Kafka answers EndTxn); only its moment
changes. A transaction over partitions other processes lead completes when their leaders have
answered its WriteTxnMarkers (shim.processes.marker_sender), ~1 ms later: answered at once, a
producer's next AddPartitionsToTxn arrived while the markers were out, was refused
CONCURRENT_TRANSACTIONS and retried by librdkafka 20 ms later. The one-process broker writes
every marker before it answers and has no such wait."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import trio

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.handlers import Handler
from kafka_shim.shim.transactions.service import TransactionService

# The longest EndTxn waits for the markers: longer than librdkafka's 20 ms retry of a refused
# AddPartitionsToTxn (a wait that ends before it costs the producer nothing it would not have
# lost to that retry) and than a WriteTxnMarkers on a loaded machine (~1 ms, a few ms at worst),
# yet short against a client's request timeout: a leader that does not answer delays a commit
# by this much, after which the producer meets CONCURRENT_TRANSACTIONS as against Kafka.
ANSWER_WITHIN_S = 0.05


class TransactionEnds:
    """Wakes the EndTxns waiting for their transactions when markers are answered."""

    def __init__(self, transactions: Callable[[], TransactionService]) -> None:
        self._transactions = transactions
        self._changed = trio.Event()

    def markers_answered(self) -> None:
        """A leader's answer was reported to the coordinator: a transaction may have completed."""
        self._changed.set()
        self._changed = trio.Event()

    async def completed(self, transactional_id: str, within_s: float = ANSWER_WITHIN_S) -> bool:
        """Wait until the transaction is no longer PrepareCommit / PrepareAbort, at most
        `within_s`; whether it is."""
        with trio.move_on_after(within_s):
            while self._transactions().completing(transactional_id):
                await self._changed.wait()
            return True
        return not self._transactions().completing(transactional_id)

    def wrap(self, handler: Handler) -> Handler:
        """EndTxn's handler, its NONE answer held until the transaction completed (or the bound)."""

        async def handle(ctx: RequestContext, body: Any) -> Any:
            answer = await handler.handle(ctx, body)
            if answer is not None and answer.get("error_code") == ErrorCode.NONE:
                await self.completed(body.transactional_id)
            return answer

        return replace(handler, handle=handle)
