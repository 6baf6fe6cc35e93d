"""The pytest plugin as a project that installed kafka-shim meets it: what loading it costs
(no broker code until a fixture starts a broker), the fixtures' scopes and clean-up, Kafka
configs from the ini option and the factory, the helpers against real clients, async tests."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from kafka_shim.pytest_plugin import KafkaShim
from kafka_shim.storage.errors import StorageError

pytest_plugins = ["pytester"]

REPO_ROOT = Path(__file__).resolve().parents[2]
# Inner pytest runs load this tree's plugin by module name, whatever kafka-shim the machine has
# installed (tests/kafka_shim/test_install.py checks the entry point of a built wheel).
THIS_PLUGIN = ("-p", "no:kafka_shim", "-p", "kafka_shim.pytest_plugin")
HEAVY_MODULES = ("trio", "construct", "kafka_shim.shim", "kafka_shim.protocol", "kafka_shim.storage")


def test_importing_the_plugin_imports_no_broker_code() -> None:
    probe = (
        "import sys, kafka_shim.pytest_plugin; "
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY_MODULES[:2]!r} "
        f"or m.startswith({HEAVY_MODULES[2:]!r})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_pytest_run_imports_the_broker_only_when_a_fixture_starts_one(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        f"""
        import sys

        HEAVY = {HEAVY_MODULES!r}

        def test_without_a_broker():
            assert [m for m in HEAVY if m in sys.modules] == []

        def test_with_a_broker(kafka_shim):
            assert [m for m in HEAVY if m in sys.modules] == list(HEAVY)
        """
    )
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))  # a fresh interpreter, this tree's kafka_shim
    # anyio's own plugin (installed with Starlette, the control endpoint's) imports Trio at load.
    result = pytester.runpytest_subprocess(
        *THIS_PLUGIN, "-p", "no:anyio", "-p", "no:cacheprovider", timeout=120
    )
    result.assert_outcomes(passed=2)


def refuses_connections(bootstrap: str) -> bool:
    host, port = bootstrap.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


def test_a_broker_per_test_one_per_session_all_stopped_afterwards(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from pathlib import Path

        seen = []

        def test_first(kafka_shim, kafka_shim_session):
            kafka_shim.create_topic("only-in-first")
            kafka_shim_session.create_topic("shared")
            seen.append((kafka_shim.bootstrap, kafka_shim_session.bootstrap))

        def test_second(kafka_shim, kafka_shim_session):
            ((first_own, first_session),) = seen
            assert kafka_shim.bootstrap != first_own
            assert kafka_shim.broker.topics.get("only-in-first") is None
            assert kafka_shim_session.bootstrap == first_session
            assert kafka_shim_session.broker.topics.get("shared") is not None
            Path("bootstraps").write_text(f"{first_own} {first_session} {kafka_shim.bootstrap}")
        """
    )
    pytester.runpytest(*THIS_PLUGIN).assert_outcomes(passed=2)
    bootstraps = (pytester.path / "bootstraps").read_text().split()
    assert len(set(bootstraps)) == 3
    assert all(refuses_connections(bootstrap) for bootstrap in bootstraps)


def test_kafka_configs_from_the_ini_option_then_the_factory(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        """
        [pytest]
        kafka_shim_config =
            num.partitions = 4
            group.initial.rebalance.delay.ms=3000
        """
    )
    pytester.makepyfile(
        """
        from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

        def described(bootstrap):
            admin = AdminClient({"bootstrap.servers": bootstrap})
            (future,) = admin.describe_configs([ConfigResource(ResourceType.BROKER, "0")]).values()
            return {name: entry.value for name, entry in future.result(timeout=10).items()}

        def test_fixtures_take_the_ini_option(kafka_shim, kafka_shim_session):
            for shim in (kafka_shim, kafka_shim_session):
                configs = described(shim.bootstrap)
                assert configs["num.partitions"] == "4"
                assert configs["group.initial.rebalance.delay.ms"] == "3000"

        def test_the_factory_overrides_it(kafka_shim_factory):
            shim = kafka_shim_factory(
                config={"num.partitions": 2, "auto.create.topics.enable": False}, busy_poll_us=0
            )
            configs = described(shim.bootstrap)
            assert configs["num.partitions"] == "2"
            assert configs["auto.create.topics.enable"] == "false"
            assert configs["group.initial.rebalance.delay.ms"] == "3000"
            assert shim.broker.config.busy_poll_us == 0
        """
    )
    pytester.runpytest(*THIS_PLUGIN).assert_outcomes(passed=2)


def test_bad_configs_are_refused_naming_what_is_wrong(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from kafka_shim.shim.config.broker_config import ConfigError

        def test_unknown_name(kafka_shim_factory):
            with pytest.raises(ConfigError, match="'num.partition' \\(did you mean num.partitions"):
                kafka_shim_factory(config={"num.partition": "3"})

        def test_bad_value(kafka_shim_factory):
            with pytest.raises(ConfigError, match="bad value 'many' for num.partitions"):
                kafka_shim_factory(config={"num.partitions": "many"})

        def test_a_kafka_name_as_a_keyword(kafka_shim_factory):
            with pytest.raises(TypeError, match=r"config=\\{'num.partitions'"):
                kafka_shim_factory(**{"num.partitions": "3"})
        """
    )
    pytester.runpytest(*THIS_PLUGIN).assert_outcomes(passed=3)


def test_a_bad_ini_line_fails_the_tests_that_start_a_broker(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nkafka_shim_config = num.partitions\n")
    pytester.makepyfile("def test_broker(kafka_shim):\n    pass\n\ndef test_plain():\n    pass\n")
    result = pytester.runpytest(*THIS_PLUGIN)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*ConfigError: ini option kafka_shim_config: expected KEY=VALUE*"])


def test_async_tests_use_the_fixtures_from_asyncio_and_trio(pytester: pytest.Pytester) -> None:
    # A minimal runner for coroutine tests, standing in for pytest-asyncio / pytest-trio.
    pytester.makeconftest(
        """
        import asyncio, functools, inspect
        import pytest, trio

        def pytest_configure(config):
            config.addinivalue_line("markers", "trio: run under trio.run instead of asyncio.run")

        @pytest.hookimpl(tryfirst=True)
        def pytest_pyfunc_call(pyfuncitem):
            if not inspect.iscoroutinefunction(pyfuncitem.obj):
                return None
            args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
            test = functools.partial(pyfuncitem.obj, **args)
            if pyfuncitem.get_closest_marker("trio"):
                trio.run(test)
            else:
                asyncio.run(test())
            return True
        """
    )
    pytester.makepyfile(
        """
        import asyncio, struct
        import pytest, trio
        from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

        async def test_aiokafka_commits_and_the_helper_reads_them(kafka_shim):
            kafka_shim.create_topic("events")
            producer = AIOKafkaProducer(bootstrap_servers=kafka_shim.bootstrap)
            await producer.start()
            try:
                await producer.send_and_wait("events", b"hello")
            finally:
                await producer.stop()
            consumer = AIOKafkaConsumer(
                "events", bootstrap_servers=kafka_shim.bootstrap, group_id="async-group",
                auto_offset_reset="earliest", enable_auto_commit=False,
            )
            await consumer.start()
            try:
                message = await asyncio.wait_for(consumer.getone(), 30)
                await consumer.commit()
            finally:
                await consumer.stop()
            assert message.value == b"hello"
            assert kafka_shim.committed("async-group") == {("events", 0): 1}

        @pytest.mark.trio
        async def test_inside_a_trio_loop(kafka_shim_session):
            kafka_shim_session.create_topic("from-trio", partitions=2)
            assert len(kafka_shim_session.broker.topics.get("from-trio").partitions) == 2
            assert kafka_shim_session.committed("no-such-group") == {}
            host, port = kafka_shim_session.bootstrap.rsplit(":", 1)
            stream = await trio.open_tcp_stream(host, int(port))
            async with stream:
                # ApiVersions v0, correlation id 7: the broker answers while this loop runs.
                await stream.send_all(struct.pack(">ihhih", 10, 18, 0, 7, -1))
                with trio.fail_after(10):
                    header = await stream.receive_some(8)
            assert struct.unpack(">ii", header)[1] == 7
        """
    )
    pytester.runpytest(*THIS_PLUGIN).assert_outcomes(passed=2)


def test_a_broker_on_disk_restarts_in_the_same_process(
    kafka_shim_factory: Callable[..., KafkaShim], tmp_path: Path
) -> None:
    """stop() releases the data directory (it stayed locked, and a broker started on it again
    in the same process was refused as DataDirInUse) after a clean shutdown."""
    first = kafka_shim_factory(data_dir=tmp_path)
    first.create_topic("kept", partitions=2)
    first.stop()
    again = kafka_shim_factory(data_dir=tmp_path)  # the factory stops both at the end: once each
    assert len(again.broker.topics.get("kept").partitions) == 2  # type: ignore[union-attr]


def test_create_topic_makes_what_clients_see(kafka_shim: KafkaShim) -> None:
    kafka_shim.create_topic("orders", partitions=3, config={"cleanup.policy": "compact"})
    metadata = AdminClient({"bootstrap.servers": kafka_shim.bootstrap}).list_topics(timeout=10)
    assert sorted(metadata.topics["orders"].partitions) == [0, 1, 2]
    assert kafka_shim.broker.topics.get("orders").configs == {"cleanup.policy": "compact"}  # type: ignore[union-attr]


def test_create_topic_refuses_as_create_topics_does(kafka_shim: KafkaShim) -> None:
    kafka_shim.create_topic("orders")
    with pytest.raises(StorageError, match="already exists"):
        kafka_shim.create_topic("orders")
    with pytest.raises(StorageError, match=r"cleanup\.policy"):
        kafka_shim.create_topic("audit", config={"cleanup.policy": "sometimes"})
    with pytest.raises(StorageError, match="invalid non-positive value"):
        kafka_shim.create_topic("empty", partitions=0)


def test_committed_reads_what_a_consumer_committed(kafka_shim: KafkaShim) -> None:
    kafka_shim.create_topic("orders", partitions=2)
    producer = Producer({"bootstrap.servers": kafka_shim.bootstrap})
    for number in range(5):
        producer.produce("orders", value=b"order %d" % number, partition=1)
    assert producer.flush(10) == 0
    consumer = Consumer(
        {"bootstrap.servers": kafka_shim.bootstrap, "group.id": "billing", "enable.auto.commit": False}
    )
    try:
        consumer.assign([TopicPartition("orders", 1, 0)])
        received: list[bytes | None] = []
        deadline = time.monotonic() + 20
        while len(received) < 5 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                received.append(message.value())
        assert len(received) == 5
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    assert kafka_shim.committed("billing") == {("orders", 1): 5}
    assert kafka_shim.committed("nobody") == {}
