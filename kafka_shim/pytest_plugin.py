"""pytest plugin: in-process kafka-shim brokers on free ports, no Docker needed.

    def test_my_consumer(kafka_shim):
        kafka_shim.create_topic("orders", partitions=3)
        consumer = KafkaConsumer("orders", bootstrap_servers=kafka_shim.bootstrap, group_id="g")
        ...
        assert kafka_shim.committed("g") == {("orders", 0): 42, ...}

Fixtures: `kafka_shim` (a broker per test), `kafka_shim_session` (one per session, so one per
xdist worker) and `kafka_shim_factory(config={...}, **settings)`. Broker configs go by Kafka's
own names, as `kafka-shim --config` takes them: the ini option `kafka_shim_config` (one
`key=value` per line) for every broker of the project, then the factory's `config` mapping.

The `pytest11` entry point loads this module into every pytest run of a project that has
kafka-shim installed, used or not; so at load it imports pytest and the standard library only,
and the broker (Trio, construct, storage) is imported when a fixture first starts one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from kafka_shim.controls import BrokerControls

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker
    from kafka_shim.shim.net.running import BrokerThread
    from kafka_shim.shim.net.server import Server

INI_OPTION = "kafka_shim_config"
# A fixture's broker keeps its last requests for `requests(...)` queries (a test asserts what
# its application sent); the command line keeps none unless asked (--record-requests).
FIXTURE_RECORDED_REQUESTS = 1000
T = TypeVar("T")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        INI_OPTION,
        "kafka-shim broker configs for every kafka_shim fixture: Kafka names, one key=value per line",
        type="linelist",
        default=[],
    )


class KafkaShim(BrokerControls):
    """A running in-process broker: where to connect, and thin helpers over its own state.

    The helpers run on the broker's thread between requests, so they are safe while clients
    are connected, and callable from sync tests and from inside asyncio or Trio tests. The test
    broker's controls (fault rules, the clock, recorded requests, stopping brokers and moving
    leaders of several) come from BrokerControls.
    """

    def __init__(self, thread: BrokerThread) -> None:
        self._thread = thread
        self._stopped = False

    @property
    def bootstrap(self) -> str:
        """Where clients connect ("127.0.0.1:PORT"): their `bootstrap.servers`."""
        return self._thread.bootstrap

    @property
    def broker(self) -> Broker:
        """The broker's state (topics, groups, config) for tests that look inside."""
        return self._thread.broker

    @property
    def control_url(self) -> str:
        """The control endpoint's URL (start the broker with control_listener="127.0.0.1:0")."""
        if not self._thread.server.control_urls:
            raise RuntimeError('no control endpoint: start the broker with control_listener="127.0.0.1:0"')
        return self._thread.server.control_urls[0]

    @property
    def schema_registry_url(self) -> str:
        """The broker's schema registry ("http://127.0.0.1:PORT", Confluent's REST API,
        docs/schema-registry.md): started on a free port on first use unless the broker was
        started with schema_registry_listener; its schemas live in the broker's `_schemas`."""
        import time

        server = self._thread.server
        if not server.schema_registry_urls and self.broker.config.schema_registry_listener is None:
            self._thread.call(lambda: server.start_schema_registry("127.0.0.1:0"))
        deadline = time.monotonic() + 10.0
        while not server.schema_registry_urls:
            if server.schema_registry_failure is not None:
                raise RuntimeError(f"the schema registry is not served: {server.schema_registry_failure}")
            if time.monotonic() > deadline:
                raise RuntimeError("the schema registry did not start within 10 s")
            time.sleep(0.01)
        return server.schema_registry_urls[0]

    def controlled(self) -> Broker:
        return self._thread.broker

    def controlled_server(self) -> Server:
        return self._thread.server

    def call(self, fn: Callable[[], T], timeout_s: float = 10.0) -> T:
        return self._thread.call(fn, timeout_s)

    def create_topic(
        self, name: str, partitions: int | None = None, config: Mapping[str, object] | None = None
    ) -> None:
        """Create topic `name` as CreateTopics would: `num.partitions` partitions unless given,
        topic configs by Kafka name (e.g. {"cleanup.policy": "compact"}). An existing topic, an
        illegal name or count, or a bad config raises StorageError naming Kafka's error."""
        configs = {key: kafka_text(value) for key, value in (config or {}).items()}
        self._thread.call(lambda: self._thread.broker.topics.create(name, partitions, configs))

    def committed(self, group_id: str) -> dict[tuple[str, int], int]:
        """What `group_id` has committed: {(topic, partition): offset}, as an OffsetFetch for
        all partitions answers; empty for a group that committed nothing."""
        fetched = self._thread.call(lambda: self._thread.broker.groups.fetch_offsets(group_id, None))
        return {(tp.topic, tp.partition): committed.offset for tp, committed in fetched.items()}

    def stop(self) -> None:
        """Stop the broker and release its storage as the command line does at exit: logs
        flushed and closed, the data directory marked shut down cleanly and unlocked, so a
        broker can start on it again in this process (a restart). Stopping twice is one stop."""
        if self._stopped:
            return
        self._thread.stop()
        if self._thread._thread.is_alive():  # its storage is still in use: not safe to close
            raise RuntimeError("kafka-shim did not stop within 10 s")
        self._stopped = True
        self._thread.broker.close()


def kafka_text(value: object) -> str:
    """A config value as `--config` spells it: strings as given, True as "true", 3 as "3"."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def ini_configs(pytestconfig: pytest.Config) -> dict[str, str]:
    from kafka_shim.shim.config.broker_config import ConfigError, parse_assignment

    pairs: dict[str, str] = {}
    for line in pytestconfig.getini(INI_OPTION):
        try:
            name, value = parse_assignment(line)
        except ConfigError as exc:
            raise ConfigError(f"ini option {INI_OPTION}: {exc}") from exc
        pairs[name] = value
    return pairs


def start_broker(kafka_configs: Mapping[str, object], settings: Mapping[str, Any]) -> KafkaShim:
    """A started in-memory broker on a free port. `kafka_configs` go by Kafka's names through the
    one config registry; `settings` are BrokerConfig fields, the broker's command-line flags
    (e.g. busy_poll_us, max_request_bytes, data_dir), applied after them."""
    from kafka_shim.shim.config.broker_config import BrokerConfig, apply_kafka_configs
    from kafka_shim.shim.net.running import BrokerThread

    fields = {field.name for field in dataclasses.fields(BrokerConfig)}
    for name in settings:
        if name not in fields:
            raise TypeError(
                f"kafka_shim_factory: no setting {name!r}; Kafka config names go in "
                f"config={{{name!r}: ...}}, keywords are BrokerConfig fields: {', '.join(sorted(fields))}"
            )
    config = apply_kafka_configs(
        BrokerConfig(host="127.0.0.1", port=0, record_requests=FIXTURE_RECORDED_REQUESTS),
        {name: kafka_text(value) for name, value in kafka_configs.items()},
    )
    return KafkaShim(BrokerThread(dataclasses.replace(config, **settings)).start())


@pytest.fixture
def kafka_shim_factory(pytestconfig: pytest.Config) -> Iterator[Callable[..., KafkaShim]]:
    """`start(config={"num.partitions": "3"}, **settings)` starts a broker, stopped after the test.

    `config` maps Kafka config names to values, over the ini option's; keywords set the
    broker's own flags (BrokerConfig fields such as busy_poll_us), over both."""
    with ExitStack() as started:

        def start(config: Mapping[str, object] | None = None, **settings: Any) -> KafkaShim:
            shim = start_broker({**ini_configs(pytestconfig), **(config or {})}, settings)
            started.callback(shim.stop)
            return shim

        yield start


@pytest.fixture
def kafka_shim(kafka_shim_factory: Callable[..., KafkaShim]) -> KafkaShim:
    """A broker of this test's own, with the ini option's configs."""
    return kafka_shim_factory()


@pytest.fixture(scope="session")
def kafka_shim_session(pytestconfig: pytest.Config) -> Iterator[KafkaShim]:
    """One broker for the whole session (under xdist, one per worker), with the ini option's
    configs. Tests share its topics and groups: give each its own names."""
    shim = start_broker(ini_configs(pytestconfig), {})
    yield shim
    shim.stop()
