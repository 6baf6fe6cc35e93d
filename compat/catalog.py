"""Every scenario, in the order the matrix shows them."""

from __future__ import annotations

from compat import (
    scenarios_data,
    scenarios_groups,
    scenarios_kip848,
    scenarios_migration,
    scenarios_scale,
    scenarios_security,
    scenarios_share,
    scenarios_transactions,
)
from compat.scenario import Scenario

SCENARIOS: dict[str, Scenario] = {
    scenario.name: scenario
    for scenario in (
        Scenario("roundtrip", "produce, consume in a group, commit, read offsets", scenarios_data.roundtrip),
        Scenario(
            "commit-resume",
            "commit part way, the next consumer resumes there",
            scenarios_data.commit_and_resume,
        ),
        Scenario(
            "group-join-leave-crash",
            "3 members join; one leaves; one is SIGKILLed",
            scenarios_groups.join_leave_crash,
        ),
        Scenario(
            "static-membership",
            "a static member restarts: same partitions, no rebalance",
            scenarios_groups.static_restart,
            scenarios_groups.static_not_applicable,
        ),
        Scenario(
            "cooperative-sticky",
            "incremental rebalance: survivors keep their partitions",
            scenarios_groups.cooperative_sticky,
            scenarios_groups.needs_assignor("cooperative-sticky"),
        ),
        Scenario(
            "mixed-group",
            "Java + librdkafka + kafka-python members in one range group",
            scenarios_groups.mixed_group,
            scenarios_groups.mixed_not_applicable,
        ),
        Scenario(
            "admin",
            "create/delete topics; list/describe/delete groups; list/alter offsets",
            scenarios_data.admin,
            scenarios_data.admin_not_applicable,
        ),
        Scenario(
            "kip848",
            "group.protocol=consumer: round trip; join/leave/crash (uniform, range); regex",
            scenarios_kip848.kip848,
            scenarios_kip848.not_applicable,
        ),
        Scenario(
            "migration",
            "online migration: 3 classic members replaced one by one by consumer-protocol ones, and back",
            scenarios_migration.migration,
        ),
        Scenario(
            "transactions",
            "consume-transform-produce in transactions, 1 in 3 aborted: exactly once for read_committed",
            scenarios_transactions.transactions,
            scenarios_transactions.transactions_not_applicable,
        ),
        Scenario(
            "security",
            "mutual TLS, SASL_PLAINTEXT PLAIN, SASL_SSL SCRAM-SHA-512; an admin-made user; bad logins",
            scenarios_security.security,
        ),
        Scenario(
            "share-groups",
            "KIP-932: 2 share consumers share a topic; released records delivered again, each accepted once",
            scenarios_share.share_groups,
            scenarios_share.not_applicable,
        ),
        Scenario("groups-100x3", "100 groups x 3 members at once", scenarios_scale.groups_100x3, heavy=True),
        Scenario("group-of-50", "one group of 50 members", scenarios_scale.group_of_50, heavy=True),
    )
}
