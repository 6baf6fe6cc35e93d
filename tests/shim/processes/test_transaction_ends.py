"""EndTxn's wait in a broker process (shim.processes.transaction_ends), on trio's mock clock:
over as soon as the transaction completes, never longer than ANSWER_WITHIN_S."""

from __future__ import annotations

from typing import Any, cast

import pytest
import trio
import trio.testing

from kafka_shim.shim.processes.transaction_ends import ANSWER_WITHIN_S, TransactionEnds
from kafka_shim.shim.transactions.service import TransactionService


class Completing:
    """The one question TransactionEnds asks the transaction service."""

    def __init__(self) -> None:
        self.preparing: set[str] = set()

    def completing(self, transactional_id: str) -> bool:
        return transactional_id in self.preparing


def ends_over(completing: Completing) -> TransactionEnds:
    return TransactionEnds(lambda: cast(TransactionService, cast(Any, completing)))


def test_the_wait_ends_when_the_markers_complete_the_transaction() -> None:
    completing = Completing()
    completing.preparing.add("t")
    ends = ends_over(completing)

    async def main() -> None:
        async def markers_answer() -> None:
            await trio.sleep(0.002)
            ends.markers_answered()  # another transaction's: "t" still waits
            await trio.sleep(0.002)
            completing.preparing.discard("t")
            ends.markers_answered()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(markers_answer)
            started = trio.current_time()
            assert await ends.completed("t")
            assert trio.current_time() - started == pytest.approx(0.004)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_the_wait_is_bounded_and_a_completed_transaction_is_not_waited_for() -> None:
    completing = Completing()
    completing.preparing.add("held")
    ends = ends_over(completing)

    async def main() -> None:
        started = trio.current_time()
        assert not await ends.completed("held")  # a leader that does not answer
        assert trio.current_time() - started == pytest.approx(ANSWER_WITHIN_S)
        started = trio.current_time()
        assert await ends.completed("done")
        assert trio.current_time() == started

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
