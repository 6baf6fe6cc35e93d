"""A consumer group's epoch, the metadata of the topics it subscribes to, its regular
expressions' resolution, and its target assignment (in Kafka's GroupMetadataManager, with the
assignment computed as its TargetAssignmentBuilder does). The coordinator calls these when a
member's subscription or the topics change; each adds the records of what it changed to `out`.
"""

from __future__ import annotations

from kafka_shim.protocol import consumer_group_records as kind
from kafka_shim.shim.coordinator.consumer import records, subscriptions
from kafka_shim.shim.coordinator.consumer.assignors import ASSIGNORS
from kafka_shim.shim.coordinator.consumer.group import ConsumerGroup
from kafka_shim.shim.coordinator.consumer.types import Output, TopicInfo, Topics, normalized

REGEX_RESOLUTION = "regex"  # the timer kind of a group's pending regex resolution


def bump_group_epoch(group: ConsumerGroup, out: Output) -> None:
    group.group_epoch += 1
    out.records.append(records.group_epoch(group.group_id, group.group_epoch))


def refresh_subscriptions(group: ConsumerGroup, topics: Topics, out: Output) -> bool:
    """Forget the regexes no member uses any more and take the subscribed topics' metadata
    again; True if it changed (the group epoch must move: topics came, went or grew)."""
    used = group.used_regexes()
    for regex in list(group.resolved_regexes):
        if regex not in used:
            group.resolve(regex, None)
            out.records.append(records.tombstone(kind.REGULAR_EXPRESSION, group.group_id, regex))
    return _refresh_metadata(group, topics, out)


def ask_regex_resolution(
    group: ConsumerGroup, topics: Topics, now: int, out: Output, min_interval_ms: int
) -> None:
    """Kafka resolves a group's regexes off the heartbeat (an executor task whose result a
    later write applies), all together and at most once per REGEX_BATCH_REFRESH_MIN_INTERVAL_MS,
    when one is unresolved or a topic one of them matches was created since: here a timer
    due at once stands for that task, so the heartbeat that brings a new regex is answered
    without its topics (librdkafka's 0045 resubscribe test expects the literal topics first)
    and topics created within the interval come in one rebalance (its 0113 n_wildcard)."""
    used = group.used_regexes()
    last = group.regexes_resolved_at
    if not used or group.regex_resolution_pending:
        return
    if last is not None and now <= last + min_interval_ms:
        return
    resolved = group.resolved_regexes
    due = any(r not in resolved for r in used)
    if not due:
        names = list(topics.names())
        due = any(not subscriptions.matching(r, names) <= resolved[r] for r in used)
    if due:
        group.regex_resolution_pending = True
        out.timers.append(((REGEX_RESOLUTION, group.group_id, ""), now))


def resolve_regexes(group: ConsumerGroup, topics: Topics, now: int, out: Output) -> None:
    """Kafka's handleRegularExpressionsResult: every regex in use recorded with what it
    matches now; the group epoch moves if one matches other topics or the metadata moved."""
    group.regex_resolution_pending = False
    used = group.used_regexes()
    if not used:
        return  # its members left or changed their minds meanwhile
    names = list(topics.names())
    changed = False
    for regex in sorted(used):
        matched = subscriptions.matching(regex, names)
        changed = changed or group.resolved_regexes.get(regex) != matched
        group.resolve(regex, matched)
        out.records.append(
            records.regular_expression(group.group_id, regex, matched, group.group_epoch + 1, now)
        )
    group.regexes_resolved_at = now if group.resolved_regexes else None
    if _refresh_metadata(group, topics, out) or changed:
        bump_group_epoch(group, out)


def _refresh_metadata(group: ConsumerGroup, topics: Topics, out: Output) -> bool:
    changed = False
    metadata: dict[str, TopicInfo] = {}
    for name in group.subscribed_topics():
        info = topics.by_name(name)
        if info is not None and info.partitions > 0:
            metadata[name] = info
    if metadata != group.subscription_metadata:
        group.subscription_metadata = metadata
        out.records.append(records.partition_metadata(group.group_id, metadata))
        changed = True
    return changed


def compute_target(group: ConsumerGroup, out: Output, default_assignor: str) -> None:
    members = list(group.members.values())
    assignor = ASSIGNORS[group.preferred_assignor(default_assignor)]
    instance_ids = {m.member_id: m.instance_id for m in members}
    subscribed = group.subscriptions(members)
    computed = assignor(subscribed, group.subscription_metadata, group.target, instance_ids)
    for member in members:
        assignment = normalized(computed.get(member.member_id, {}))
        if member.member_id not in group.target or assignment != normalized(group.target[member.member_id]):
            out.records.append(records.target_member(group.group_id, member.member_id, assignment))
        group.target[member.member_id] = assignment
    group.assignment_epoch = group.group_epoch
    out.records.append(records.target_epoch(group.group_id, group.assignment_epoch))
