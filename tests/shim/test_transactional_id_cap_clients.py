"""transactional.id.max.count through librdkafka: past the cap, a new transactional producer
works and the least recently used idle id goes; its producer, back, is told
INVALID_PRODUCER_ID_MAPPING as after Kafka's transactional.id.expiration.ms, which librdkafka
treats as abortable: after abort_transaction it commits again."""

from __future__ import annotations

from dataclasses import replace

import pytest
from confluent_kafka import KafkaException, Producer

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread

pytestmark = pytest.mark.clients


def test_past_the_cap_new_producers_work_and_an_expired_one_recovers_by_aborting() -> None:
    broker = BrokerThread(replace(BrokerConfig(host="127.0.0.1", port=0), max_transactional_ids=2)).start()
    try:
        producers = {}
        for name in ("t1", "t2", "t3"):
            producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": name})
            producer.init_transactions(10)
            producer.begin_transaction()
            producer.produce("orders", name.encode())
            producer.commit_transaction(10)
            producers[name] = producer

        def kept() -> list[str]:
            listings, _ = broker.broker.transactions.list_transactions((), (), -1, 0)
            return sorted(listing.transactional_id for listing in listings)

        assert broker.call(kept) == ["t2", "t3"]
        t1 = producers["t1"]
        t1.begin_transaction()
        t1.produce("orders", b"again")
        with pytest.raises(KafkaException) as refused:
            t1.commit_transaction(10)
        error = refused.value.args[0]
        assert error.name() == "INVALID_PRODUCER_ID_MAPPING" and error.txn_requires_abort()
        t1.abort_transaction(10)
        t1.begin_transaction()
        t1.produce("orders", b"again")
        t1.commit_transaction(10)
        assert broker.call(kept) == ["t1", "t3"]
    finally:
        broker.stop()
