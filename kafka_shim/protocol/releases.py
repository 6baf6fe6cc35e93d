"""The Apache Kafka releases this broker emulates (`--emulate`), one row each.

A row is what a single KRaft broker of that release answers where releases differ: the
ApiVersions range of every API this broker has a handler for, the feature levels it
supports and finalizes on a fresh cluster, and the broker settings whose defaults changed.
Handlers never ask which release runs; they read the row. A new release is a new row.

Sources, per row: the API ranges of `clients/src/main/resources/common/message/*.json`
(`validVersions`) at the release's tag, as franz-go's `pkg/kversion` tabulates them per
broker release (the 3.9 row also matches the ApiVersions answer recorded from Kafka 3.9.0 in
kafka-golden/probe2); the feature levels of `server-common/.../server/common/*Version.java`
(`LATEST_PRODUCTION`; a feature whose newest production level is 0 is not advertised, as in
`BrokerFeatures.defaultSupportedFeatures`); the defaults of `GroupCoordinatorConfig`.

Rows list the APIs of Kafka's that this broker has (or is building) handlers for, not the
inter-broker and controller-to-controller ones; of the KRaft APIs, those a broker answers
admin clients (DescribeQuorum, UnregisterBroker, Add/RemoveRaftVoter), as Kafka's brokers
forward them to the controller. share.version (KIP-932) is a feature from 4.1, finalized on a
fresh cluster from 4.2 (4.1's share groups were a preview, turned on with UpdateFeatures);
streams.version is left out until this broker serves streams groups: a client would
otherwise be told to use them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kafka_shim.protocol.settings import ASSIGNOR_CLASSES

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
TRANSACTION_VERSION = "transaction.version"
# transaction.version's levels as the transaction protocol knows them: TV2 bumps the epoch per
# transaction (KIP-890 part 2); below it, TV1.
TV1, TV2 = 0, 2
GROUP_VERSION = "group.version"
ELIGIBLE_LEADER_REPLICAS_VERSION = "eligible.leader.replicas.version"
SHARE_VERSION = "share.version"

PRODUCE_KEY = 0


@dataclass(frozen=True)
class Release:
    name: str
    # api key -> (lowest, highest) version a broker of the release serves (`validVersions`).
    api_ranges: Mapping[int, tuple[int, int]]
    # feature -> (lowest, highest) supported level; and the levels a new cluster finalizes.
    supported_features: Mapping[str, tuple[int, int]]
    finalized_features: Mapping[str, int]
    # broker setting -> this release's default (Kafka's text form), where it differs from
    # the newest release's (protocol.settings holds those).
    defaults: Mapping[str, str] = field(default_factory=dict)
    # api key -> the lowest version ApiVersions lists although the broker refuses it: Kafka
    # 4 lists Produce from 0 (librdkafka turns compression off otherwise, KAFKA-18659).
    advertised_minimums: Mapping[int, int] = field(default_factory=dict)
    # Groups have configs (KIP-848, 4.0): DESCRIBE_CONFIGS and ALTER_CONFIGS apply to them, so
    # a group's authorized operations include them (Kafka 3.9 answers 328, 4.0 3400).
    group_configs: bool = True
    # KIP-848 as Kafka 3.9 served it (ConsumerGroupHeartbeat and ConsumerGroupDescribe v0, before
    # regex subscriptions): a join must name topics (an empty or missing list is 42 "SubscribedTopicNames
    # must be set in first request."), ConsumerGroupDescribe refusals carry no message and an empty
    # group id is -1 (its null group id failed to serialize; fixed in 4.0.x, apache/kafka#20030).
    early_consumer_groups: bool = False
    # InitProducerId leaves the last transaction's start time in memory (DescribeTransactions
    # shows it) though its record says -1: the Scala TransactionMetadata.completeTransitionTo
    # of 3.9-4.1 copies no start time for Empty; 4.2's Java one (KAFKA-18884) copies it.
    init_keeps_transaction_start: bool = False
    # A share member leaving or closing its session gives back the delivery count of what it
    # held (fetched, never handled): Kafka 4.1's SharePartition.releaseAcquiredRecords
    # (KAFKA-17541). KAFKA-19972 (trunk, December 2025) counts it again, so that a consumer
    # crashing on a record cannot have it delivered forever.
    share_leaving_gives_back_deliveries: bool = False
    # OffsetDelete of an Empty group's last offsets removes the group at once: Kafka 3.9's Scala
    # GroupCoordinator.handleDeleteOffsets goes through cleanupGroupMetadata, which buries an
    # Empty group left without offsets. The new coordinator (4.0 on; 3.9 with the consumer
    # protocol enabled) only writes tombstones and leaves it to the periodic retention check.
    offset_delete_removes_empty_group: bool = False

    def advertised_range(self, api_key: int) -> tuple[int, int] | None:
        served = self.api_ranges.get(api_key)
        if served is None:
            return None
        return self.advertised_minimums.get(api_key, served[0]), served[1]


def _changed(
    base: Mapping[int, tuple[int, int]],
    minimums: Mapping[int, int] | None = None,
    maximums: Mapping[int, int] | None = None,
) -> dict[int, tuple[int, int]]:
    """`base` with some lowest and highest versions changed."""
    minimums, maximums = minimums or {}, maximums or {}
    return {key: (minimums.get(key, low), maximums.get(key, high)) for key, (low, high) in base.items()}


# Kafka 3.9.0 (metadata.version 21 = 3.9-IV0).
_RANGES_3_9: dict[int, tuple[int, int]] = {
    0: (0, 11),  # Produce
    1: (0, 17),  # Fetch
    2: (0, 9),  # ListOffsets
    3: (0, 12),  # Metadata
    8: (0, 9),  # OffsetCommit
    9: (0, 9),  # OffsetFetch
    10: (0, 6),  # FindCoordinator
    11: (0, 9),  # JoinGroup
    12: (0, 4),  # Heartbeat
    13: (0, 5),  # LeaveGroup
    14: (0, 5),  # SyncGroup
    15: (0, 5),  # DescribeGroups
    16: (0, 5),  # ListGroups
    17: (0, 1),  # SaslHandshake
    18: (0, 4),  # ApiVersions
    19: (0, 7),  # CreateTopics
    20: (0, 6),  # DeleteTopics
    21: (0, 2),  # DeleteRecords
    22: (0, 5),  # InitProducerId
    23: (0, 4),  # OffsetForLeaderEpoch
    24: (0, 5),  # AddPartitionsToTxn
    25: (0, 4),  # AddOffsetsToTxn
    26: (0, 4),  # EndTxn
    27: (0, 1),  # WriteTxnMarkers
    28: (0, 4),  # TxnOffsetCommit
    29: (0, 3),  # DescribeAcls
    30: (0, 3),  # CreateAcls
    31: (0, 3),  # DeleteAcls
    32: (0, 4),  # DescribeConfigs
    33: (0, 2),  # AlterConfigs
    34: (0, 2),  # AlterReplicaLogDirs
    35: (0, 4),  # DescribeLogDirs
    36: (0, 2),  # SaslAuthenticate
    37: (0, 3),  # CreatePartitions
    38: (0, 3),  # CreateDelegationToken
    39: (0, 2),  # RenewDelegationToken
    40: (0, 2),  # ExpireDelegationToken
    41: (0, 3),  # DescribeDelegationToken
    42: (0, 2),  # DeleteGroups
    43: (0, 2),  # ElectLeaders
    44: (0, 1),  # IncrementalAlterConfigs
    45: (0, 0),  # AlterPartitionReassignments
    46: (0, 0),  # ListPartitionReassignments
    47: (0, 0),  # OffsetDelete
    48: (0, 1),  # DescribeClientQuotas
    49: (0, 1),  # AlterClientQuotas
    50: (0, 0),  # DescribeUserScramCredentials
    51: (0, 0),  # AlterUserScramCredentials
    55: (0, 2),  # DescribeQuorum
    57: (0, 1),  # UpdateFeatures
    60: (0, 1),  # DescribeCluster
    61: (0, 0),  # DescribeProducers
    64: (0, 0),  # UnregisterBroker
    65: (0, 0),  # DescribeTransactions
    66: (0, 1),  # ListTransactions
    68: (0, 0),  # ConsumerGroupHeartbeat
    69: (0, 0),  # ConsumerGroupDescribe
    74: (0, 0),  # ListClientMetricsResources (ListConfigResources from 4.1)
    75: (0, 0),  # DescribeTopicPartitions
    80: (0, 0),  # AddRaftVoter
    81: (0, 0),  # RemoveRaftVoter
}

# Kafka 4.0: KIP-896 removed every version older than Kafka 2.1's, KIP-890's transaction
# versions and KIP-848's consumer group protocol became the defaults.
_RANGES_4_0 = _changed(
    _RANGES_3_9,
    minimums={0: 3, 1: 4, 2: 1, 8: 2, 9: 1, 11: 2, 19: 2, 20: 1, 23: 2, 27: 1, 29: 1, 30: 1, 31: 1}
    | {32: 1, 34: 1, 35: 1, 38: 1, 39: 1, 40: 1, 41: 1},
    maximums={0: 12, 2: 10, 3: 13, 15: 6, 26: 5, 28: 5, 57: 2, 60: 2, 68: 1, 69: 1},
)
# Kafka 4.1: JoinGroup v0-1 came back (KAFKA-19444); Produce by topic id (KIP-516); share
# groups (KIP-932) in preview.
_SHARE_GROUPS_4_1 = {
    76: (1, 1),  # ShareGroupHeartbeat
    77: (1, 1),  # ShareGroupDescribe
    78: (1, 1),  # ShareFetch
    79: (1, 1),  # ShareAcknowledge
    90: (0, 0),  # DescribeShareGroupOffsets
    91: (0, 0),  # AlterShareGroupOffsets
    92: (0, 0),  # DeleteShareGroupOffsets
}
_RANGES_4_1 = {
    **_changed(_RANGES_4_0, minimums={11: 0}, maximums={0: 13, 1: 18, 45: 1, 66: 2, 74: 1}),
    **_SHARE_GROUPS_4_1,
}
_RANGES_4_2 = _changed(_RANGES_4_1, maximums={2: 11, 8: 10, 9: 10, 27: 2, 78: 2, 79: 2, 80: 1, 90: 1})

_FEATURES_4: dict[str, tuple[int, int]] = {
    KRAFT_VERSION: (0, 1),
    TRANSACTION_VERSION: (0, 2),
    GROUP_VERSION: (0, 1),
    ELIGIBLE_LEADER_REPLICAS_VERSION: (0, 1),
}
# KIP-896 also dropped metadata.version levels below 7 (3.3-IV3).
_KRAFT_4_MINIMUM = 7
# Produce v0-2 are listed though refused (KAFKA-18659).
_PRODUCE_LISTED_FROM_0 = {PRODUCE_KEY: 0}


def _kafka_4(
    name: str,
    ranges: Mapping[int, tuple[int, int]],
    metadata_version: int,
    eligible_leader_replicas: int = 0,
    share_version: tuple[int, int] | None = None,
    init_keeps_transaction_start: bool = True,
    share_leaving_gives_back_deliveries: bool = False,
) -> Release:
    """A Kafka 4 row: its newest metadata.version, KIP-890's and KIP-848's levels finalized;
    `share_version`: (highest supported, finalized on a fresh cluster) from 4.1."""
    finalized = {METADATA_VERSION: metadata_version, TRANSACTION_VERSION: 2, GROUP_VERSION: 1}
    if eligible_leader_replicas:
        finalized[ELIGIBLE_LEADER_REPLICAS_VERSION] = eligible_leader_replicas
    features = {METADATA_VERSION: (_KRAFT_4_MINIMUM, metadata_version), **_FEATURES_4}
    if share_version is not None:
        features[SHARE_VERSION] = (0, share_version[0])
        if share_version[1]:
            finalized[SHARE_VERSION] = share_version[1]
    return Release(
        name,
        ranges,
        supported_features=features,
        finalized_features=finalized,
        advertised_minimums=_PRODUCE_LISTED_FROM_0,
        init_keeps_transaction_start=init_keeps_transaction_start,
        share_leaving_gives_back_deliveries=share_leaving_gives_back_deliveries,
    )


RELEASES: dict[str, Release] = {
    release.name: release
    for release in (
        Release(
            "3.9",
            _RANGES_3_9,
            supported_features={METADATA_VERSION: (1, 21), KRAFT_VERSION: (0, 1)},
            finalized_features={METADATA_VERSION: 21},
            defaults={
                "group.coordinator.rebalance.protocols": "classic",
                "group.consumer.migration.policy": "disabled",
                "group.consumer.assignors": ",".join(ASSIGNOR_CLASSES),
                # transaction.version is no feature of Kafka 3.9: its coordinator is level 0.
                "transaction.version": "0",
            },
            group_configs=False,
            early_consumer_groups=True,
            init_keeps_transaction_start=True,
            offset_delete_removes_empty_group=True,
        ),
        _kafka_4("4.0", _RANGES_4_0, metadata_version=25),
        # New clusters from 4.1 on have eligible leader replicas (KIP-966) turned on.
        _kafka_4(
            "4.1",
            _RANGES_4_1,
            metadata_version=27,
            eligible_leader_replicas=1,
            share_version=(1, 0),
            share_leaving_gives_back_deliveries=True,
        ),
        _kafka_4(
            "4.2",
            _RANGES_4_2,
            metadata_version=29,
            eligible_leader_replicas=1,
            share_version=(1, 1),
            init_keeps_transaction_start=False,
        ),
    )
}


def release_order(name: str) -> tuple[int, ...]:
    """A release name as a sortable tuple: "3.9" < "4.0" < "4.10"."""
    return tuple(int(part) for part in name.split("."))


NEWEST = max(RELEASES, key=release_order)


def _every_version_served() -> dict[int, tuple[int, int]]:
    """For each API, every version some listed release serves: the oldest release's floors
    (KIP-896's removals served again), the newest ceilings. What a broker started without
    --emulate serves, so that a client of any of these releases' days is served."""
    ranges: dict[int, tuple[int, int]] = {}
    for release in RELEASES.values():
        for key, (low, high) in release.api_ranges.items():
            known = ranges.get(key, (low, high))
            ranges[key] = (min(known[0], low), max(known[1], high))
    return ranges


EVERY_VERSION_SERVED = _every_version_served()
