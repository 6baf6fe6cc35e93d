"""A storm for the crash harness: one confluent-kafka transactional producer running
transactions of `RECORDS` records into `topic` (3 partitions) as fast as it can, one in
three aborted on purpose, until the broker is killed.

What a read_committed consumer must see after any restart: every record of every
transaction whose commit returned; no record of a transaction whose abort returned; and
each transaction whole or not at all (the one cut off by the crash may go either way,
depending on whether its PrepareCommit reached `__transaction_state`). The next round's
producer reuses the transactional id, so its init fences and aborts what was left open.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

RECORDS = 5
ABORT_EVERY = 3
TRANSACTION_TIMEOUT_MS = 3000


class TransactionStorm:
    def __init__(self, topic: str, round_number: int, transactional_id: str) -> None:
        self.topic = topic
        self.round = round_number
        self.transactional_id = transactional_id  # every round's: the next one fences the last
        self.committed: set[int] = set()
        self.aborted: set[int] = set()
        self._stop = threading.Event()
        self._recording = threading.Lock()  # held while a returned call is written down

    def _value(self, transaction: int, index: int) -> bytes:
        return b"r%d-t%d-%d" % (self.round, transaction, index)

    def start(self, bootstrap: str) -> None:
        threading.Thread(target=self._run, args=(bootstrap,), daemon=True).start()

    def acknowledged(self) -> int:
        return len(self.committed) + len(self.aborted)

    def stop(self) -> None:
        """What was acknowledged before the crash is final from here. The call the kill cut off
        waits out its own timeout (up to 10 s of a commit) in the storm's daemon thread, which
        the round does not wait for: whatever that call returns is not recorded, and a
        transaction cut off may go either way anyway."""
        with self._recording:
            self._stop.set()

    def _record(self, acknowledged: set[int], number: int) -> bool:
        """Write down a returned commit or abort; False once the round has stopped the storm."""
        with self._recording:
            if self._stop.is_set():
                return False
            acknowledged.add(number)
            return True

    def _run(self, bootstrap: str) -> None:
        from confluent_kafka import KafkaException, Producer

        producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "transactional.id": self.transactional_id,
                "transaction.timeout.ms": TRANSACTION_TIMEOUT_MS,
                "linger.ms": 1,
                "log_level": 0,
            }
        )
        try:
            producer.init_transactions(30)
            number = 0
            while True:
                commit = number % ABORT_EVERY != ABORT_EVERY - 1
                producer.begin_transaction()
                for index in range(RECORDS):
                    producer.produce(self.topic, self._value(number, index), key=b"%d" % index)
                if commit:
                    producer.commit_transaction(10)
                else:
                    producer.abort_transaction(10)
                if not self._record(self.committed if commit else self.aborted, number):
                    return
                number += 1
        except KafkaException:
            return  # the crash cut the transaction in flight off
        finally:
            producer.purge()
            producer.flush(0)

    def verify(self, bootstrap: str) -> None:
        from confluent_kafka import Consumer, TopicPartition

        assert self.committed, f"round {self.round}: no transaction committed before the crash"
        consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"verifier-{self.round}",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
            }
        )
        partitions = [TopicPartition(self.topic, p, 0) for p in range(3)]
        seen: Counter[int] = Counter()
        try:
            consumer.assign(partitions)
            # The transaction left open aborts at its timeout (or at the next init): then
            # the last stable offset reaches the high watermark on every partition.
            deadline = time.monotonic() + TRANSACTION_TIMEOUT_MS / 1000 + 20
            while time.monotonic() < deadline:
                for message in consumer.consume(num_messages=1000, timeout=0.2):
                    if message.error() is None:
                        round_, transaction, _ = (message.value() or b"").decode().split("-")
                        assert round_ == f"r{self.round}"
                        seen[int(transaction[1:])] += 1
                positions = consumer.position(partitions)
                highs = [consumer.get_watermark_offsets(tp, timeout=5)[1] for tp in partitions]
                if all(p.offset == high for p, high in zip(positions, highs, strict=True) if high > 0):
                    break
            else:
                raise AssertionError(f"round {self.round}: read_committed never reached the high watermark")
        finally:
            consumer.close()
        missing = sorted(self.committed - set(seen))
        assert not missing, f"round {self.round}: committed transactions lost: {missing[:10]}"
        leaked = sorted(self.aborted & set(seen))
        assert not leaked, (
            f"round {self.round}: aborted transactions visible to read_committed: {leaked[:10]}"
        )
        torn = {t: n for t, n in seen.items() if n != RECORDS}
        assert not torn, f"round {self.round}: transactions seen in part: {torn}"
