"""The command line's storage choices, as a user meets them: the listening
line names the storage, refusals are one clear line and no traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from kafka_shim.shim.broker import Broker
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.storage.disk_log import DiskLog
from tests.batches import batch

REPO = Path(__file__).resolve().parents[3]


def shim(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "kafka_shim", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )


def listening_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    return proc.stdout.readline()


def stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    return err


def test_no_flags_keep_data_in_the_xdg_data_dir(tmp_path: Path) -> None:
    config = config_from_args(build_parser().parse_args([]))
    assert config.data_dir is not None and config.data_dir.name == "kafka-shim"
    proc = shim(env={"XDG_DATA_HOME": str(tmp_path)})
    line = listening_line(proc)
    assert f"(storage: {tmp_path / 'kafka-shim'}, fsync every 1000 ms)" in line
    assert "Traceback" not in stop(proc)
    assert (tmp_path / "kafka-shim" / ".clean-shutdown").exists()


def test_memory_and_fsync_choices_are_named_in_the_listening_line(tmp_path: Path) -> None:
    proc = shim("--memory")
    assert "(storage: in memory)" in listening_line(proc)
    stop(proc)
    proc = shim("--data-dir", str(tmp_path), "--fsync", "always")
    assert f"(storage: {tmp_path}, fsync always)" in listening_line(proc)
    stop(proc)
    config = config_from_args(build_parser().parse_args(["--fsync-interval-ms", "50"]))
    assert config.log_flush_interval_ms == 50


def test_a_second_broker_on_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    first = shim("--data-dir", str(tmp_path))
    assert "listening on" in listening_line(first)
    second = subprocess.run(
        [sys.executable, "-m", "kafka_shim", "--port", "0", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=20,
    )
    stop(first)
    assert second.returncode == 1
    assert second.stderr.startswith(
        f"kafka-shim: data directory {tmp_path} is in use by another kafka-shim (pid "
    )
    assert "Traceback" not in second.stderr


def test_corruption_refuses_to_start_until_truncate_corrupt(tmp_path: Path) -> None:
    broker = Broker(BrokerConfig(data_dir=tmp_path))
    log = broker.topics.create("t").partitions[0]
    assert isinstance(log, DiskLog)
    for value in (b"a", b"b", b"c"):
        log.append(batch(value))
    broker.close()
    segment = tmp_path / "t-0" / ("0" * 20 + ".log")
    data = bytearray(segment.read_bytes())
    data[len(batch(b"a").data) + 40] ^= 1
    segment.write_bytes(bytes(data))
    (tmp_path / ".clean-shutdown").unlink()  # as after a crash
    refused = subprocess.run(
        [sys.executable, "-m", "kafka_shim", "--port", "0", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=20,
    )
    assert refused.returncode == 1
    assert refused.stderr.startswith(f"kafka-shim: corrupt record batch in {segment} at byte ")
    assert "Traceback" not in refused.stderr
    proc = shim("--data-dir", str(tmp_path), "--truncate-corrupt")
    assert "listening on" in listening_line(proc)
    assert "--truncate-corrupt: truncated" in stop(proc)


def test_opening_an_empty_data_dir_creates_no_logs(tmp_path: Path) -> None:
    # Opening costs nothing to scan: no topic, no partition directory, not even the
    # offsets topic until a group first needs it. (Its time is measured by bench.storage.)
    broker = Broker(BrokerConfig(data_dir=tmp_path / "fresh"))
    try:
        assert sorted(p.name for p in (tmp_path / "fresh").iterdir()) == [".lock", "meta.properties"]
        assert broker.topics.get("__consumer_offsets") is None
    finally:
        broker.close()
