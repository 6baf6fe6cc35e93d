"""A timer whose work raises does not stop the broker (shim.timer_failures).

The seam is the broker's wall clock: its source jumps past Kafka's timestamp range (int64
milliseconds) while a confluent-kafka transaction is open. The transaction's timeout then
fires and its abort record cannot be encoded, which used to raise out of the timer task and
end the process. Now it is logged once, the deadline is retried later (nothing is left due,
so the timer task sleeps rather than spins) and the broker goes on answering clients.
"""

from __future__ import annotations

import logging

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from kafka_shim.storage.durability import wall_clock_ms
from tests.helpers import wait_until

pytestmark = pytest.mark.clients

PAST_KAFKA_TIMESTAMPS_MS = 1 << 64  # no int64 holds it


def test_a_transaction_timeout_that_cannot_be_written_is_logged_and_the_broker_serves_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    jump_ms = [0]
    thread = BrokerThread(
        BrokerConfig(host="127.0.0.1", port=0), clock=lambda: wall_clock_ms() + jump_ms[0]
    ).start()
    try:
        producer = Producer(
            {"bootstrap.servers": thread.bootstrap, "transactional.id": "t1", "transaction.timeout.ms": 2000}
        )
        producer.init_transactions(10)
        producer.begin_transaction()
        producer.produce("orders", b"in a transaction")
        assert producer.flush(10) == 0
        caplog.set_level(logging.ERROR, logger="kafka_shim.timers")
        jump_ms[0] = PAST_KAFKA_TIMESTAMPS_MS  # the open transaction's timeout is now long past

        failures = thread.broker.timer_failures.failures
        wait_until(
            lambda: thread.call(lambda: failures.get("transaction deadline", 0)) >= 1,
            "the transaction deadline failed",
            deadline_s=15,
        )
        broker = thread.broker
        # The failed abort is retried DEADLINE_RETRY_MS of broker time later: nothing is due.
        assert thread.call(lambda: (broker.timers.watch_deadlines() or 0) > broker.clock())
        errors = [r for r in caplog.records if r.name == "kafka_shim.timers"]
        assert len(errors) == 1 and "int too large" in errors[0].getMessage()
        described = thread.call(lambda: broker.transactions.describe("t1"))
        assert described is not None and described.state.name == "ONGOING"  # as its log says

        # The broker still answers: metadata and a plain produce.
        admin = AdminClient({"bootstrap.servers": thread.bootstrap})
        assert "orders" in admin.list_topics(timeout=10).topics
        plain = Producer({"bootstrap.servers": thread.bootstrap})
        delivered: list[object] = []
        plain.produce("orders", b"after", on_delivery=lambda err, msg: delivered.append(err))
        assert plain.flush(10) == 0 and delivered == [None]
    finally:
        thread.stop()
