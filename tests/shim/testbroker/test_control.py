"""The test broker's front ends on a running broker: the control endpoint and `kafka-shim ctl`,
the Python controls (BrokerThread), a rules file, each action on the wire, recorded requests,
and the broker's clock expiring a session."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.cli import ctl
from kafka_shim.shim.cli import main as cli
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from tests.batches import batch
from tests.helpers import subscription, wait_until
from tests.wire import WireClient

FETCH, COMMIT, METADATA, JOIN, HEARTBEAT, SYNC = 1, 8, 3, 11, 12, 14


@pytest.fixture(scope="module", autouse=True)
def topic_t(faults_broker_thread: BrokerThread) -> None:
    faults_broker_thread.call(lambda: faults_broker_thread.broker.topics.create("t", 1, {}))


@pytest.fixture
def broker(faults_broker: BrokerThread) -> BrokerThread:
    return faults_broker


def run_ctl(broker: BrokerThread, capsys: pytest.CaptureFixture[str], *words: str) -> Any:
    code = cli.main(["ctl", "--url", broker.server.control_urls[0], *words])  # as `kafka-shim ctl`
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def commit(client: WireClient, group: str) -> int:
    body = {
        "group_id": group,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 3}]}],
    }
    return int(client.request(COMMIT, 8, body).topics[0].partitions[0].error_code)


def test_ctl_adds_lists_and_clears_rules_and_each_firing_is_logged(
    broker: BrokerThread, capsys: pytest.CaptureFixture[str]
) -> None:
    added = run_ctl(
        broker,
        capsys,
        "fault",
        "add",
        "api=OffsetCommit",
        "group=g",
        "error=REBALANCE_IN_PROGRESS",
        "times=1",
    )
    assert added[0]["times"] == 1 and added[0]["active"]
    with WireClient(broker.bootstrap) as client:
        assert commit(client, "other") == ErrorCode.NONE
        assert commit(client, "g") == ErrorCode.REBALANCE_IN_PROGRESS
        assert commit(client, "g") == ErrorCode.NONE
    assert run_ctl(broker, capsys, "fault", "list")[0]["fired"] == 1
    firing = run_ctl(broker, capsys, "fault", "firings")[-1]
    assert (firing["api"], firing["error"], firing["client_id"]) == (
        "OffsetCommit",
        "REBALANCE_IN_PROGRESS",
        "wire-test",
    )
    assert run_ctl(broker, capsys, "fault", "clear") == {"cleared": 1}
    assert run_ctl(broker, capsys, "fault", "list") == []


def test_a_refused_command_exits_1_with_the_reason_and_an_unreachable_one_2(
    broker: BrokerThread, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ctl.main(["--url", broker.server.control_urls[0], "fault", "add", "api=Nope", "error=6"]) == 1
    assert "no API 'Nope'" in capsys.readouterr().err
    assert ctl.main(["--url", broker.server.control_urls[0], "fault", "clear", "999"]) == 1
    assert ctl.main(["--url", "http://127.0.0.1:1", "clock"]) == 2
    assert ctl.main(["fault", "bogus"]) == 2


def test_close_and_no_answer_and_delay(broker: BrokerThread) -> None:
    metadata = {"topics": None}
    broker.add_fault(api="Metadata", client_id="wire-test", action="close", times=1)
    with WireClient(broker.bootstrap) as client:
        client.send_raw(client.frame(METADATA, 9, metadata))
        assert client.is_closed_by_peer()
    broker.add_fault(api="Metadata", action="no_answer", times=1)
    with WireClient(broker.bootstrap, timeout_s=0.3) as client:
        client.send_raw(client.frame(METADATA, 9, metadata))
        with pytest.raises(socket.timeout):
            client.receive_frame()
    rule = broker.add_fault(api="Metadata", delay_ms=50, times=1)
    with WireClient(broker.bootstrap) as client:
        assert client.request(METADATA, 9, metadata).brokers  # the real answer, late
    assert [each["fired"] for each in broker.faults() if each["id"] == rule] == [1]


def test_recorded_requests_are_queried_by_match_keys(
    broker: BrokerThread, capsys: pytest.CaptureFixture[str]
) -> None:
    with WireClient(broker.bootstrap) as client:
        commit(client, "recorded")
    found = broker.requests(api="OffsetCommit", group="recorded")
    assert [entry.request.topics[0].partitions[0].committed_offset for entry in found] == [3]
    assert found[0].response["topics"][0]["partitions"][0]["error_code"] == 0
    over_http = run_ctl(broker, capsys, "requests", "api=OffsetCommit", "group=recorded", "limit=1")
    assert over_http[0]["request"]["group_id"] == "recorded" and over_http[0]["fault_rule"] is None
    assert ctl.main(["--url", broker.server.control_urls[0], "requests", "colour=red"]) == 1


def test_advancing_the_clock_expires_a_session_at_once(
    broker: BrokerThread, capsys: pytest.CaptureFixture[str]
) -> None:
    with WireClient(broker.bootstrap) as client:
        join = {
            "group_id": "clocked",
            "session_timeout_ms": 6000,
            "rebalance_timeout_ms": 6000,
            "member_id": "",
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": subscription("t")}],
        }
        required = client.request(JOIN, 5, join)
        assert required.error_code == ErrorCode.MEMBER_ID_REQUIRED
        joined = client.request(JOIN, 5, {**join, "member_id": required.member_id})
        assert joined.error_code == 0
        sync = {
            "group_id": "clocked",
            "generation_id": joined.generation_id,
            "member_id": joined.member_id,
            "assignments": [],
        }
        assert client.request(SYNC, 3, sync).error_code == 0
        beat = {"group_id": "clocked", "generation_id": joined.generation_id, "member_id": joined.member_id}
        assert client.request(HEARTBEAT, 3, beat).error_code == 0
        before = run_ctl(broker, capsys, "clock")["now_ms"]
        advanced = run_ctl(broker, capsys, "clock", "advance", "7")
        assert advanced["now_ms"] - before >= 7000
        assert client.request(HEARTBEAT, 3, beat).error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_rules_file_is_loaded_at_start(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps([{"api": "Heartbeat", "error": "REBALANCE_IN_PROGRESS", "times": 3}]))
    thread = BrokerThread(BrokerConfig(host="127.0.0.1", port=0, fault_rules_file=path)).start()
    try:
        assert [(rule["api"], rule["error"], rule["times"]) for rule in thread.faults()] == [
            ("Heartbeat", "REBALANCE_IN_PROGRESS", 3)
        ]
    finally:
        thread.stop()


def test_advancing_the_clock_applies_retention_to_memory_topics_at_once(broker: BrokerThread) -> None:
    def create_and_fill() -> None:
        topic = broker.broker.topics.create(
            "short-lived", 1, {"retention.ms": "60000", "segment.bytes": "14"}
        )
        now = broker.broker.clock()
        for value in (b"1", b"2"):
            topic.partitions[0].append(batch(value, base_timestamp=now))

    broker.call(create_and_fill)

    def start() -> int:
        log = broker.call(lambda: broker.broker.topics.partition("short-lived", 0))
        assert log is not None
        return broker.call(lambda: log.log_start_offset)

    assert start() == 0
    broker.advance_clock(61)
    wait_until(lambda: start() == 2, "retention.ms passed on the broker's clock", deadline_s=5)


def fetch(client: WireClient, topic: str, max_wait_ms: int) -> Any:
    partition = {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}
    body = {
        "max_wait_ms": max_wait_ms,
        "min_bytes": 1,
        "session_epoch": -1,
        "topics": [{"topic": topic, "partitions": [partition]}],
    }
    return client.request(FETCH, 12, body).responses[0].partitions[0]


def test_pause_fetch_holds_back_records_until_cleared_and_long_polls_run_on_wall_time(
    broker: BrokerThread,
) -> None:
    broker.call(lambda: broker.broker.topics.create("paused", 1, {}).partitions[0].append(batch(b"held")))
    rule = broker.add_fault(action="pause_fetch", topic="paused", partition=0)
    broker.freeze_clock()  # a long poll waits on wall time: a frozen clock does not hold it
    try:
        with WireClient(broker.bootstrap) as client:
            held = fetch(client, "paused", max_wait_ms=100)
            assert (held.records, held.high_watermark) == (b"", 1)
            broker.clear_faults(rule)
            assert fetch(client, "paused", max_wait_ms=100).records  # the record, now
    finally:
        broker.resume_clock()


def test_a_trace_file_gets_every_request_and_answer_as_json_lines(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    thread = BrokerThread(BrokerConfig(host="127.0.0.1", port=0, trace_file=trace)).start()
    try:
        with WireClient(thread.bootstrap) as client:
            client.request(METADATA, 9, {"topics": None})
    finally:
        thread.stop()
        thread.broker.close()
    [line] = [json.loads(text) for text in trace.read_text().splitlines()]
    assert (line["api"], line["version"], line["client_id"]) == ("Metadata", 9, "wire-test")
    assert line["response"]["brokers"][0]["port"] == int(thread.bootstrap.rsplit(":", 1)[1])


@pytest.mark.parametrize(
    ("argv", "refused"),
    [
        (["--control", "nowhere"], "is not HOST:PORT"),
        (["--record-requests", "-1"], "--record-requests -1 is negative"),
        (["--fault-rules", "{rules}"], "a JSON list of rules"),
    ],
)
def test_the_command_line_refuses_bad_test_broker_flags(
    argv: list[str], refused: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text('{"error": 6}')
    words = ["--memory", "--port", "0", *(word.replace("{rules}", str(rules)) for word in argv)]
    assert cli.main(words) == 2
    assert refused in capsys.readouterr().err


def test_the_command_line_reads_the_test_broker_flags() -> None:
    config = cli.config_from_args(
        cli.build_parser().parse_args(
            ["--memory", "--control", "--record-requests", "50", "--trace-file", "t.jsonl"]
        )
    )
    assert (config.control_listener, config.record_requests, config.trace_file) == (
        cli.DEFAULT_CONTROL,
        50,
        Path("t.jsonl"),
    )


def test_a_rule_and_a_query_can_name_one_of_several_brokers() -> None:
    thread = BrokerThread(BrokerConfig(host="127.0.0.1", port=0, brokers=2, record_requests=10)).start()
    try:
        thread.add_fault(api="Metadata", broker=1, action="close")
        with WireClient(thread.address(0)) as first, WireClient(thread.address(1)) as second:
            assert first.request(METADATA, 9, {"topics": None}).brokers
            second.send_raw(second.frame(METADATA, 9, {"topics": None}))
            assert second.is_closed_by_peer()
        assert [entry.node_id for entry in thread.requests(api="Metadata")] == [0]
        assert thread.requests(api="Metadata", broker=1) == []
    finally:
        thread.stop()


def test_advancing_past_offsets_retention_expires_an_empty_groups_offsets(broker: BrokerThread) -> None:
    with WireClient(broker.bootstrap) as client:
        assert commit(client, "forgotten") == ErrorCode.NONE
    offsets = lambda: broker.call(lambda: broker.broker.groups.fetch_offsets("forgotten", None))  # noqa: E731
    assert len(offsets()) == 1
    broker.advance_clock(7 * 24 * 3600 + 600)  # offsets.retention.minutes (7 days) and a check
    assert offsets() == {}


def test_ctl_pointed_at_a_server_that_is_not_the_control_endpoint_says_so_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A web server of something else (the console's port, say): its HTML answer is one line
    naming the URL (exit 2), its refusal one line too (exit 1), never a JSONDecodeError."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Html(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/clock" else 404)
            self.send_header("content-type", "text/html")
            self.end_headers()
            self.wfile.write(b"<!doctype html>\n<html><body>something else</body></html>")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Html)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        assert ctl.main(["--url", url, "clock"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err and "JSONDecodeError" not in err
        assert err.startswith(f"kafka-shim ctl: {url}/clock answered HTTP 200 with something other than JSON")
        assert ctl.main(["--url", url, "fault", "list"]) == 1  # a refusal: its text, in one line
        assert capsys.readouterr().err == (
            "kafka-shim ctl: 404: <!doctype html> <html><body>something else</body></html>\n"
        )
    finally:
        server.shutdown()
        server.server_close()
