"""What the supervisor tells a broker process (shim.processes): which broker it is, the
listening sockets it inherits, where every broker is advertised, where the controller keeps its
catalog. Passed as JSON in one environment variable."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass

SPEC_ENV = "KAFKA_SHIM_BROKER_PROCESS"

Address = tuple[str, int]


@dataclass(frozen=True)
class NodeSpec:
    argv: list[str]  # the command line, re-read by the process (without --process-per-broker)
    position: int  # 0 is the controller
    node_id: int
    data_dir: str  # this broker's own directory
    controller_dir: str  # the controller's, whose catalog the others follow
    fds: dict[str, int]  # listener name -> inherited listening socket
    bound: dict[str, Address]  # listener name -> where that socket is bound
    endpoints: dict[int, dict[str, Address]]  # node id -> listener name -> advertised address
    ready_fd: int  # written to once the process serves, then closed
    offsets_partitions: int  # __consumer_offsets partitions every process places groups by
    transaction_partitions: int  # __transaction_state partitions every process places ids by
    views_fd: int | None = None  # the console's private channel (shim.processes.view_service)
    # The schema registry's listening socket, bound by the supervisor (only the controller's)
    registry_fd: int | None = None

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> NodeSpec:
        raw = json.loads(os.environ[SPEC_ENV])

        def address(value: list[object]) -> Address:
            return str(value[0]), int(str(value[1]))

        return cls(
            argv=list(raw["argv"]),
            position=int(raw["position"]),
            node_id=int(raw["node_id"]),
            data_dir=raw["data_dir"],
            controller_dir=raw["controller_dir"],
            fds={name: int(fd) for name, fd in raw["fds"].items()},
            bound={name: address(value) for name, value in raw["bound"].items()},
            endpoints={
                int(node): {name: address(value) for name, value in listeners.items()}
                for node, listeners in raw["endpoints"].items()
            },
            ready_fd=int(raw["ready_fd"]),
            offsets_partitions=int(raw["offsets_partitions"]),
            transaction_partitions=int(raw["transaction_partitions"]),
            views_fd=None if raw.get("views_fd") is None else int(raw["views_fd"]),
            registry_fd=None if raw.get("registry_fd") is None else int(raw["registry_fd"]),
        )
