"""The test broker's control API: what the control endpoint serves, as plain functions.

Each `Endpoint` is one HTTP method and path and a function of the server (`Controlled`: its
`.broker`, and the emulated brokers' stop/start) and the request's parameters (path, query,
JSON body) returning JSON-able data; shim.testbroker.control_server serves them with an ASGI
stack in the broker's own event loop, so they run between Kafka requests and touch the
broker's state directly. `kafka-shim ctl` (shim.cli.ctl) is their command line.

To add controls (another concern of the test broker): write functions of this shape and add
their Endpoints to ENDPOINTS (and a command to shim.cli.ctl.COMMANDS); nothing else changes.

    GET    /faults                 the rules, with how often each fired
    POST   /faults                 add a rule (a spec, see shim.testbroker.faults) or a list of them
    DELETE /faults                 clear every rule
    DELETE /faults/{id}            clear one rule
    GET    /faults/firings         the latest firings, oldest first
    GET    /clock                  the broker's clock: now_ms, frozen, offset_ms
    POST   /clock/advance          {"seconds": 45}: move it on (fires what falls due)
    POST   /clock/freeze           stop it
    POST   /clock/resume           run it again from where it stands
    GET    /requests?api=&group=   recorded requests (match keys as rules take them), &limit=N
    DELETE /requests               forget the recorded requests
    GET    /cluster                the emulated brokers (--brokers): running or not, racks, addresses
    POST   /cluster/brokers/{id}/stop    stop one: its connections close, its ports refuse
    POST   /cluster/brokers/{id}/start   start it again on its ports
    GET    /cluster/partitions/{topic}/{partition}          leader, epoch, replicas, ISR
    POST   /cluster/partitions/{topic}/{partition}/leader   {"node": 2}: move the leader
    GET    /cluster/coordinator?group=g (or transactional_id=t)    who coordinates it
    POST   /cluster/coordinator    {"group": "g", "node": 1} (or "transactional_id"): move it
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kafka_shim.shim.security.authorization import ALTER, CLUSTER, Rule, whole
from kafka_shim.shim.testbroker.cluster import ClusterError, ClusterNotFound, coordinator_key
from kafka_shim.shim.testbroker.faults import FaultSpecError
from kafka_shim.shim.web.http_guard import INT32_MAX

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker


# The control endpoint's row: no Kafka API changes a broker's clock or faults, so it is an
# operator's, as Kafka's cluster-wide admin APIs are (ElectLeaders, AlterPartitionReassignments).
OPERATOR = Rule("kafka-shim's control endpoint (an operator's, as ElectLeaders)", (whole(ALTER, CLUSTER),))


class Controlled(Protocol):
    """What the control endpoint drives: the broker's state and its emulated brokers' start and
    stop. The server that starts the endpoint (shim.net.server.Server) is one and hands itself
    in, so nothing here imports the network side."""

    broker: Broker

    def stop_node(self, node_id: int) -> None: ...

    def start_node(self, node_id: int) -> None: ...


class ControlError(Exception):
    """A control request that cannot be carried out: its HTTP status and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ControlRequest:
    path: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    body: Any = None


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str  # Starlette's form: /faults/{rule_id:int}
    call: Callable[[Controlled, ControlRequest], Any]


def list_faults(server: Controlled, request: ControlRequest) -> Any:
    broker = server.broker
    return [rule.to_json() for rule in broker.faults.rules()]


def add_faults(server: Controlled, request: ControlRequest) -> Any:
    broker = server.broker
    specs = request.body if isinstance(request.body, list) else [request.body]
    try:
        return [broker.faults.add(spec).to_json() for spec in specs]
    except FaultSpecError as exc:
        raise ControlError(400, str(exc)) from exc


def clear_faults(server: Controlled, request: ControlRequest) -> Any:
    broker = server.broker
    rule_id = request.path.get("rule_id")
    try:
        return {"cleared": broker.faults.clear(None if rule_id is None else int(rule_id))}
    except KeyError:
        raise ControlError(404, f"no fault rule {rule_id}") from None


def list_firings(server: Controlled, request: ControlRequest) -> Any:
    broker = server.broker
    return [firing.to_json() for firing in broker.faults.firings]


def show_clock(server: Controlled, request: ControlRequest) -> Any:
    broker = server.broker
    return broker.broker_clock.to_json()


def advance_clock(server: Controlled, request: ControlRequest) -> Any:
    broker = server.broker
    body = request.body if isinstance(request.body, Mapping) else {}
    seconds = body.get("seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        raise ControlError(400, f'seconds: advance takes {{"seconds": N}} with N >= 0, got {request.body!r}')
    try:
        broker.timers.advance_clock(seconds)
    except ValueError as exc:  # beyond the clock's range
        raise ControlError(400, f"seconds: {exc}") from None
    return broker.broker_clock.to_json()


def freeze_clock(server: Controlled, request: ControlRequest) -> Any:
    broker = server.broker
    broker.broker_clock.freeze()
    return broker.broker_clock.to_json()


def resume_clock(server: Controlled, request: ControlRequest) -> Any:
    broker = server.broker
    broker.broker_clock.resume()
    return broker.broker_clock.to_json()


def recorded_requests(server: Controlled, request: ControlRequest) -> Any:
    broker = server.broker
    recorder = broker.recorder
    if recorder is None:
        raise ControlError(409, "requests are not recorded: start the broker with --record-requests N")
    spec: dict[str, Any] = {key: value for key, value in request.query.items() if key != "limit"}
    if "partition" in spec:
        spec["partition"] = _integer("partition", spec["partition"])
    limit = _integer("limit", request.query.get("limit", "0"))
    try:
        found = recorder.query(spec, broker.topic_name)
    except FaultSpecError as exc:
        raise ControlError(400, str(exc)) from exc
    return [entry.to_json() for entry in found[-limit if limit else 0 :]]


def forget_requests(server: Controlled, request: ControlRequest) -> Any:
    broker = server.broker
    if broker.recorder is not None:
        broker.recorder.clear()
    return {"cleared": True}


@contextmanager
def _cluster_refusals() -> Iterator[None]:
    """ClusterError as the endpoint answers it: 404 for what does not exist, 409 otherwise."""
    try:
        yield
    except ClusterNotFound as exc:
        raise ControlError(404, str(exc)) from exc
    except ClusterError as exc:
        raise ControlError(409, str(exc)) from exc


def show_cluster(server: Controlled, request: ControlRequest) -> Any:
    return server.broker.cluster.to_json()


def stop_broker(server: Controlled, request: ControlRequest) -> Any:
    with _cluster_refusals():
        server.stop_node(int(request.path["node_id"]))
    return server.broker.cluster.to_json()


def start_broker(server: Controlled, request: ControlRequest) -> Any:
    with _cluster_refusals():
        server.start_node(int(request.path["node_id"]))
    return server.broker.cluster.to_json()


def show_partition(server: Controlled, request: ControlRequest) -> Any:
    with _cluster_refusals():
        return server.broker.cluster.partition_json(request.path["topic"], int(request.path["partition"]))


def move_leader(server: Controlled, request: ControlRequest) -> Any:
    topic, partition = request.path["topic"], int(request.path["partition"])
    node = _node(request.body)
    cluster = server.broker.cluster
    with _cluster_refusals():
        cluster.move_leader(topic, partition, node)
        return cluster.partition_json(topic, partition)


def show_coordinator(server: Controlled, request: ControlRequest) -> Any:
    with _cluster_refusals():
        key_type, key = coordinator_key(request.query.get("group"), request.query.get("transactional_id"))
        return {"node": server.broker.cluster.coordinator(key_type, key)}


def move_coordinator(server: Controlled, request: ControlRequest) -> Any:
    body = request.body if isinstance(request.body, Mapping) else {}
    node = _node(body)
    cluster = server.broker.cluster
    with _cluster_refusals():
        key_type, key = coordinator_key(body.get("group"), body.get("transactional_id"))
        cluster.move_coordinator(key_type, key, node)
        return {"node": cluster.coordinator(key_type, key)}


def _node(body: Any) -> int:
    node = body.get("node") if isinstance(body, Mapping) else None
    if isinstance(node, bool) or not isinstance(node, int) or not 0 <= node <= INT32_MAX:
        raise ControlError(400, f'node: name the broker as {{"node": ID}}, got {body!r}')
    return node


def _integer(key: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ControlError(400, f"{key}: an integer, got {text!r}") from None
    if not 0 <= value <= INT32_MAX:
        raise ControlError(400, f"{key}: from 0 to {INT32_MAX}, got {text!r}")
    return value


ENDPOINTS: list[Endpoint] = [
    Endpoint("GET", "/faults", list_faults),
    Endpoint("POST", "/faults", add_faults),
    Endpoint("DELETE", "/faults", clear_faults),
    Endpoint("DELETE", "/faults/{rule_id:int}", clear_faults),
    Endpoint("GET", "/faults/firings", list_firings),
    Endpoint("GET", "/clock", show_clock),
    Endpoint("POST", "/clock/advance", advance_clock),
    Endpoint("POST", "/clock/freeze", freeze_clock),
    Endpoint("POST", "/clock/resume", resume_clock),
    Endpoint("GET", "/requests", recorded_requests),
    Endpoint("DELETE", "/requests", forget_requests),
    Endpoint("GET", "/cluster", show_cluster),
    Endpoint("POST", "/cluster/brokers/{node_id:int}/stop", stop_broker),
    Endpoint("POST", "/cluster/brokers/{node_id:int}/start", start_broker),
    Endpoint("GET", "/cluster/partitions/{topic}/{partition:int}", show_partition),
    Endpoint("POST", "/cluster/partitions/{topic}/{partition:int}/leader", move_leader),
    Endpoint("GET", "/cluster/coordinator", show_coordinator),
    Endpoint("POST", "/cluster/coordinator", move_coordinator),
]
