"""Take the console's screenshots in docs/img/: a broker with a topic of JSON orders and a group
of three consumers, its pages rendered by Debian's headless Chromium.

    python docs/screenshots.py
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread

OUT = Path(__file__).resolve().parent / "img"
PAGES = {
    "console-groups.png": "#/groups",
    "console-group.png": "#/group/billing",
    "console-records.png": "#/records/orders/0?limit=12",
    "console-topics.png": "#/topics",
}


def main() -> None:
    broker = BrokerThread(BrokerConfig(port=0, console_listener="127.0.0.1:0")).start()
    broker.call(lambda: broker.broker.topics.create("orders", 3, {}))
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for n in range(60):
        order = {"order": n, "customer": f"c{n % 7}", "amount": round(9.5 + n * 1.25, 2)}
        producer.produce("orders", json.dumps(order).encode(), key=f"c{n % 7}".encode(), partition=n % 3)
    producer.flush(10)
    members = []
    for n in range(3):
        member = Consumer(
            {"bootstrap.servers": broker.bootstrap, "group.id": "billing", "client.id": f"billing-{n}"}
        )
        member.subscribe(["orders"])
        members.append(member)
    deadline = time.monotonic() + 30
    while not all(m.assignment() for m in members) and time.monotonic() < deadline:
        for member in members:
            member.poll(0.1)
    for member in members:
        member.commit(offsets=[TopicPartition("orders", tp.partition, 12) for tp in member.assignment()])
    while not broker.server.console_urls:
        time.sleep(0.05)
    chromium = shutil.which("chromium") or "chromium"
    with tempfile.TemporaryDirectory() as profile:
        for name, route in PAGES.items():
            subprocess.run(
                [
                    chromium,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    f"--user-data-dir={profile}",
                    "--hide-scrollbars",
                    "--window-size=1280,720",
                    "--virtual-time-budget=3000",
                    f"--screenshot={OUT / name}",
                    f"{broker.server.console_urls[0]}/console{route}",
                ],
                check=True,
                capture_output=True,
                timeout=60,
            )
    for member in members:
        member.close()
    broker.stop()


if __name__ == "__main__":
    main()
