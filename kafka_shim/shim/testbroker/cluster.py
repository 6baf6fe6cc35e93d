"""Several brokers in one process (`--brokers N`): one copy of the data, N listeners.

An emulated broker is a node id, a rack and a set of listeners; nothing is replicated. What
differs between the nodes is who leads each partition, and so who coordinates each group and
transactional id (the leader of its `__consumer_offsets` / `__transaction_state` partition, as
in Kafka). A request for a partition sent to another node is answered NOT_LEADER_OR_FOLLOWER,
a group or transaction request NOT_COORDINATOR, as Kafka answers them.

A topic's replicas are placed when it is created, as Kafka's StripedReplicaPlacer places them
(shim.controller.placement), and recorded with it; the internal topics (and topics recorded before replicas
were) are on every node, listed from a preferred leader that spreads leaders over the nodes. The
in-sync replicas are the running ones. Stopping a node moves each partition it led to the next
running replica, as Kafka's controller elects one; a node that starts again rejoins the ISR and
leads nothing until a partition is moved to it (Kafka's automatic preferred-leader rebalance,
every 300 s, is not emulated). Each leadership change
starts a new leader epoch in the partition's log, so clients' epoch fencing
(FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH) and OffsetForLeaderEpoch work as with Kafka.

Pure state: the server binds and closes the listeners; this only says who is running.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.internal_topics import OFFSETS_TOPIC, TRANSACTION_TOPIC, partition_for
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE
from kafka_shim.shim.controller.placement import StripedPlacer, UsableBroker, check_replication_factor
from kafka_shim.storage.internal_topics import INTERNAL_TOPICS
from kafka_shim.storage.log import PartitionLog
from kafka_shim.storage.topics import Topic, TopicStore

NO_LEADER = -1


class ClusterError(ValueError):
    """A control asked of the emulated cluster that cannot be done now (a stopped broker asked
    to lead, a running one to start...)."""


class ClusterNotFound(ClusterError):
    """A control naming a broker or partition that does not exist."""


def coordinator_key(group: str | None, transactional_id: str | None) -> tuple[int, str]:
    """(key type, key) of a control naming either a group or a transactional id."""
    if group is not None and transactional_id is None:
        return GROUP_KEY_TYPE, group
    if transactional_id is not None and group is None:
        return TRANSACTION_KEY_TYPE, transactional_id
    raise ClusterError("name one of group or transactional_id")


@dataclass
class Node:
    node_id: int
    rack: str | None
    running: bool = True
    # Listener name -> advertised (host, port), filled in by the server once bound.
    endpoints: dict[str, tuple[str, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Leadership:
    """Who leads a partition, for the topic incarnation it was decided for (None: the topic
    did not exist yet, as for a coordinator moved before its internal topic was created)."""

    topic_id: object
    leader: int


class Cluster:
    def __init__(
        self,
        node_ids: Sequence[int],
        racks: Sequence[str],
        topics: TopicStore,
        coordinator_partitions: Callable[[int], int],
    ) -> None:
        if not node_ids:
            raise ClusterError("a cluster needs at least one broker")
        self.nodes = {
            node_id: Node(node_id, racks[i % len(racks)] if racks else None)
            for i, node_id in enumerate(node_ids)
        }
        self._order = list(node_ids)
        # One broker: nothing is ever led elsewhere (every check short-cuts on this, and Metadata
        # of many partitions on the first, which it asks for each).
        self.single = len(self._order) == 1
        self.first = self._order[0]
        self._topics = topics
        # How many partitions a key type's internal topic has (created or to be created).
        self._coordinator_partitions = coordinator_partitions
        self._leaders: dict[tuple[str, int], Leadership] = {}
        # Called with a log whose leader changed: the server wakes its Fetch long polls,
        # which then answer NOT_LEADER_OR_FOLLOWER, as Kafka completes a delayed fetch.
        self.on_leader_change: Callable[[PartitionLog], None] = lambda log: None

    @property
    def controller_id(self) -> int:
        """The first running node (Metadata's and DescribeCluster's controller_id)."""
        return next((n for n in self._order if self.nodes[n].running), NO_LEADER)

    def running(self) -> list[Node]:
        return [self.nodes[n] for n in self._order if self.nodes[n].running]

    def registered(self) -> list[int]:
        """Every broker's id: a stopped one stays registered (fenced) in Kafka, and counts for
        replica placement (ClusterControlManager.usableBrokers)."""
        return list(self._order)

    # -- partitions ------------------------------------------------------------------------

    def place(self, name: str, count: int, replication_factor: int) -> list[list[int]] | None:
        """Replicas for `count` new partitions of topic `name` (tests: shim.controller.placement), or None
        for an internal topic, kept on every node so its coordinators fail over. Kafka draws the
        placer's offsets at random; here the draws are seeded by the name, so a topic's layout
        is the same in every run."""
        check_replication_factor(replication_factor, self._order, [n.node_id for n in self.running()])
        if name in INTERNAL_TOPICS:
            return None
        usable = [UsableBroker(n, self.nodes[n].rack, not self.nodes[n].running) for n in self._order]
        placer = StripedPlacer(usable, random.Random(zlib.crc32(name.encode())))
        return [placer.place(replication_factor) for _ in range(count)]

    def replicas(self, topic: str, index: int) -> list[int]:
        """The partition's replicas, its preferred leader first: as placed at its creation, or
        for a topic on every node, all of them from a preferred leader that spreads leaders as
        Kafka's placement does (by partition, from a start per topic)."""
        if self.single:
            return [self.first]
        found = self._topics.get(topic)
        if found is not None and found.replicas is not None and index < len(found.replicas):
            return found.replicas[index]
        order = self._order
        start = (zlib.crc32(topic.encode()) + index) % len(order)
        return order[start:] + order[:start]

    def reassign(self, topic: str, index: int, replicas: list[int]) -> None:
        """A reassignment, complete at once (one copy of the data: nothing to move): the
        partition's replicas are recorded; a leader no longer among them hands over to the
        first running one, as Kafka's controller elects from the target replicas."""
        found = self._topics.get(topic)
        log = found.partition(index) if found is not None else None
        if found is None or log is None:
            raise ClusterNotFound(f"no partition {topic}-{index}")
        current = [self.replicas(topic, i) for i in range(len(found.partitions))]
        current[index] = list(replicas)
        self._topics.set_replicas(topic, current)
        if self.leader(topic, index) not in replicas:
            self._elect(topic, index, log, next(iter(self.isr(topic, index)), NO_LEADER))

    def _running(self, node_id: int) -> bool:
        """Whether `node_id` runs (a replica recorded under another --brokers may name none)."""
        node = self.nodes.get(node_id)
        return node is not None and node.running

    def isr(self, topic: str, index: int) -> list[int]:
        return [n for n in self.replicas(topic, index) if self._running(n)]

    def offline(self, topic: str, index: int) -> list[int]:
        return [n for n in self.replicas(topic, index) if not self._running(n)]

    def leader(self, topic: str, index: int) -> int:
        """The partition's leader, NO_LEADER when no replica runs."""
        if self.single:
            return self.first
        decided = self._leaders.get((topic, index))
        if decided is not None and decided.topic_id in (None, self._topic_id(topic)):
            return decided.leader
        # Never decided (or decided for a deleted topic of the same name): the first running
        # replica, kept, so a node that starts later does not take it without a new epoch.
        leader = next(iter(self.isr(topic, index)), NO_LEADER)
        self._leaders[topic, index] = Leadership(self._topic_id(topic), leader)
        return leader

    def leader_error(
        self, node_id: int, topic: str, index: int, current_epoch: int, log: PartitionLog
    ) -> ErrorCode:
        """Kafka's check for a client's request to a partition (Partition.localLogWithEpochOrThrow):
        the client's leader epoch first (-1: not checked), then whether `node_id` leads it."""
        epoch = log.leader_epoch
        if current_epoch != -1 and current_epoch < epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        if current_epoch > epoch:
            return ErrorCode.UNKNOWN_LEADER_EPOCH
        if not self.single and self.leader(topic, index) != node_id:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        return ErrorCode.NONE

    def move_leader(self, topic: str, index: int, node_id: int) -> int:
        """Hand the partition's leadership to running node `node_id`; returns the new leader
        epoch. Clients still sending to the old leader get NOT_LEADER_OR_FOLLOWER."""
        self._running_node(node_id)
        found = self._topics.get(topic)
        log = found.partition(index) if found is not None else None
        if log is None:
            raise ClusterNotFound(f"no partition {topic}-{index}")
        if node_id not in self.replicas(topic, index):
            raise ClusterError(f"broker {node_id} holds no replica of {topic}-{index}")
        self._elect(topic, index, log, node_id)
        return log.leader_epoch

    def elect(self, topic: str, index: int, unclean: bool) -> ErrorCode:
        """ElectLeaders for one existing partition, as Kafka's controller answers it: a preferred
        election gives it back to its first replica if that runs; an unclean one is needed only
        without a leader, and possible only with a replica running."""
        leader = self.leader(topic, index)
        if unclean:
            return (
                ErrorCode.ELECTION_NOT_NEEDED
                if leader != NO_LEADER
                else ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
            )
        preferred = self.replicas(topic, index)[0]
        if leader == preferred:
            return ErrorCode.ELECTION_NOT_NEEDED
        if not self._running(preferred):
            return ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
        self.move_leader(topic, index, preferred)
        return ErrorCode.NONE

    def _elect(self, topic: str, index: int, log: PartitionLog | None, node_id: int) -> None:
        self._leaders[topic, index] = Leadership(self._topic_id(topic), node_id)
        if log is not None:
            log.begin_leader_epoch(log.leader_epoch + 1)
            self.on_leader_change(log)

    def _partitions(self) -> Iterator[tuple[Topic, int, PartitionLog]]:
        for topic in list(self._topics):
            for index, log in enumerate(topic.partitions):
                yield topic, index, log

    # -- coordinators ------------------------------------------------------------------------

    def coordinator_partition(self, key_type: int, key: str) -> tuple[str, int]:
        """The internal topic partition whose leader coordinates `key`, as Kafka places it."""
        topic = OFFSETS_TOPIC if key_type == GROUP_KEY_TYPE else TRANSACTION_TOPIC
        return topic, partition_for(key, self._coordinator_partitions(key_type))

    def coordinator(self, key_type: int, key: str) -> int:
        """The node coordinating a group (GROUP_KEY_TYPE) or transactional id; NO_LEADER if none runs."""
        if self.single:
            return self.first
        return self.leader(*self.coordinator_partition(key_type, key))

    def coordinates(self, node_id: int, key_type: int, key: str) -> bool:
        return self.single or self.coordinator(key_type, key) == node_id

    def move_coordinator(self, key_type: int, key: str, node_id: int) -> None:
        """Move `key`'s coordinator to running node `node_id` by moving the leadership of its
        internal topic partition (every other key of that partition moves with it, as in Kafka)."""
        self._running_node(node_id)
        topic, index = self.coordinator_partition(key_type, key)
        found = self._topics.get(topic)
        self._elect(topic, index, found.partition(index) if found is not None else None, node_id)

    # -- what the controls show --------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "controller": self.controller_id,
            "brokers": [
                {
                    "node_id": node.node_id,
                    "rack": node.rack,
                    "running": node.running,
                    "endpoints": {name: f"{host}:{port}" for name, (host, port) in node.endpoints.items()},
                }
                for node in (self.nodes[n] for n in self._order)
            ],
        }

    def partition_json(self, topic: str, index: int) -> dict[str, Any]:
        found = self._topics.get(topic)
        log = found.partition(index) if found is not None else None
        if log is None:
            raise ClusterNotFound(f"no partition {topic}-{index}")
        return {
            "topic": topic,
            "partition": index,
            "leader": self.leader(topic, index),
            "leader_epoch": log.leader_epoch,
            "replicas": self.replicas(topic, index),
            "isr": self.isr(topic, index),
            "offline": self.offline(topic, index),
        }

    # -- nodes -------------------------------------------------------------------------------

    def stop(self, node_id: int) -> None:
        """Mark the node stopped and elect a new leader (the next running replica) for each
        partition it led; with no replica running, the partition has none (LEADER_NOT_AVAILABLE)."""
        node = self._node(node_id)
        if not node.running:
            raise ClusterError(f"broker {node_id} is already stopped")
        led = [(t, i, log) for t, i, log in self._partitions() if self.leader(t.name, i) == node_id]
        node.running = False
        for topic, index, log in led:
            self._elect(topic.name, index, log, next(iter(self.isr(topic.name, index)), NO_LEADER))
        for key, decided in list(self._leaders.items()):
            if decided.topic_id is None and decided.leader == node_id:  # internal topics not yet created
                self._leaders[key] = Leadership(None, next(iter(self.isr(*key)), NO_LEADER))

    def start(self, node_id: int) -> None:
        """Mark the node running: it rejoins the ISR of what it holds and leads those of them
        that have no leader."""
        node = self._node(node_id)
        if node.running:
            raise ClusterError(f"broker {node_id} is already running")
        node.running = True
        for topic, index, log in self._partitions():
            if self.leader(topic.name, index) == NO_LEADER and node_id in self.replicas(topic.name, index):
                self._elect(topic.name, index, log, node_id)

    def _node(self, node_id: int) -> Node:
        node = self.nodes.get(node_id)
        if node is None:
            raise ClusterNotFound(f"no broker {node_id}; the brokers are {', '.join(map(str, self._order))}")
        return node

    def _running_node(self, node_id: int) -> None:
        if not self._node(node_id).running:
            raise ClusterError(f"broker {node_id} is stopped")

    def _topic_id(self, topic: str) -> object:
        found = self._topics.get(topic)
        return None if found is None else found.topic_id
