"""The broker's Prometheus metrics, in prometheus_client's exposition (served at /metrics).

Requests are counted on the request path in plain dicts (a dict increment per request, no
metric objects there: the path is benchmarked); everything else is read from the broker's
state when scraped (shim.web.views). Topic, partition and consumer-group metrics carry the names
and labels kafka_exporter gives them (kafka_consumergroup_lag{consumergroup,topic,partition},
kafka_topic_partition_current_offset{topic,partition}, ...), so Grafana dashboards built for
kafka_exporter work unchanged; the broker's own metrics are prefixed kafka_shim_.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from kafka_shim.shim.request_stats import LATENCY_BUCKETS, RequestStats, error_name
from kafka_shim.shim.web import views


class BrokerCollector(Collector):
    """Everything /metrics shows. `state` returns (topics, groups, broker count) when scraped."""

    def __init__(self, stats: RequestStats, state: Callable[[], views.ClusterView]) -> None:
        self.stats = stats
        self.state = state

    def collect(self) -> Iterator[Any]:
        yield from self._requests()
        yield from self._cluster(self.state())

    def _requests(self) -> Iterator[Any]:
        stats = self.stats
        requests = CounterMetricFamily(
            "kafka_shim_requests", "Requests served, by API and version", labels=["api", "version"]
        )
        errors = CounterMetricFamily(
            "kafka_shim_request_errors", "Error codes answered, by API and error", labels=["api", "error"]
        )
        latency = HistogramMetricFamily(
            "kafka_shim_request_duration_seconds",
            "Time from a request's parse to its answer, by API",
            labels=["api"],
        )
        for api, per_api in sorted(stats.apis.items()):
            for version, count in sorted(per_api.versions.items()):
                requests.add_metric([api, str(version)], count)
            for code, count in sorted(per_api.errors.items()):
                errors.add_metric([api, error_name(code)], count)
            cumulative, total = [], 0
            for bound, count in zip((*LATENCY_BUCKETS, float("inf")), per_api.buckets, strict=True):
                total += count
                cumulative.append(("+Inf" if bound == float("inf") else str(bound), total))
            latency.add_metric([api], cumulative, per_api.latency_sum)
        yield from (requests, errors, latency)
        for name, per_topic, what in (
            ("kafka_shim_topic_bytes_in", stats.bytes_in, "Record bytes produced"),
            ("kafka_shim_topic_bytes_out", stats.bytes_out, "Record bytes fetched"),
        ):
            family = CounterMetricFamily(name, f"{what}, by topic", labels=["topic"])
            for topic, count in sorted(per_topic.items()):
                family.add_metric([topic], count)
            yield family

    def _cluster(self, cluster: views.ClusterView) -> Iterator[Any]:
        yield GaugeMetricFamily(
            "kafka_brokers", "Number of Brokers in the Kafka Cluster.", value=cluster.brokers
        )
        partitions = GaugeMetricFamily(
            "kafka_topic_partitions", "Number of partitions for this Topic", labels=["topic"]
        )
        current = GaugeMetricFamily(
            "kafka_topic_partition_current_offset",
            "Current Offset of a Broker at Topic/Partition",
            labels=["topic", "partition"],
        )
        oldest = GaugeMetricFamily(
            "kafka_topic_partition_oldest_offset",
            "Oldest Offset of a Broker at Topic/Partition",
            labels=["topic", "partition"],
        )
        per_partition = {
            name: GaugeMetricFamily(name, help_text, labels=["topic", "partition"])
            for name, help_text in (
                ("kafka_topic_partition_leader", "Leader Broker ID of this Topic/Partition"),
                ("kafka_topic_partition_replicas", "Number of Replicas for this Topic/Partition"),
                (
                    "kafka_topic_partition_in_sync_replica",
                    "Number of In-Sync Replicas for this Topic/Partition",
                ),
                (
                    "kafka_topic_partition_under_replicated_partition",
                    "1 if Topic/Partition is under Replicated",
                ),
            )
        }
        for topic in cluster.topics:
            partitions.add_metric([topic.name], len(topic.partitions))
            for p in topic.partitions:
                labels = [topic.name, str(p.partition)]
                current.add_metric(labels, p.high_watermark)
                oldest.add_metric(labels, p.log_start_offset)
                per_partition["kafka_topic_partition_leader"].add_metric(labels, p.leader)
                per_partition["kafka_topic_partition_replicas"].add_metric(labels, len(p.replicas))
                per_partition["kafka_topic_partition_in_sync_replica"].add_metric(labels, len(p.isr))
                under = 1 if len(p.isr) < len(p.replicas) else 0
                per_partition["kafka_topic_partition_under_replicated_partition"].add_metric(labels, under)
        yield from (partitions, current, oldest, *per_partition.values())
        yield from self._groups(cluster.groups)

    @staticmethod
    def _groups(groups: list[views.GroupView]) -> Iterator[Any]:
        group_labels = ["consumergroup", "topic", "partition"]
        members = GaugeMetricFamily(
            "kafka_consumergroup_members", "Amount of members in a consumer group", labels=["consumergroup"]
        )
        current = GaugeMetricFamily(
            "kafka_consumergroup_current_offset",
            "Current Offset of a ConsumerGroup at Topic/Partition",
            labels=group_labels,
        )
        lag = GaugeMetricFamily(
            "kafka_consumergroup_lag",
            "Current Approximate Lag of a ConsumerGroup at Topic/Partition",
            labels=group_labels,
        )
        current_sum = GaugeMetricFamily(
            "kafka_consumergroup_current_offset_sum",
            "Current Offset of a ConsumerGroup at Topic for all partitions",
            labels=["consumergroup", "topic"],
        )
        lag_sum = GaugeMetricFamily(
            "kafka_consumergroup_lag_sum",
            "Current Approximate Lag of a ConsumerGroup at Topic for all partitions",
            labels=["consumergroup", "topic"],
        )
        state = GaugeMetricFamily(
            "kafka_shim_group_state", "1 for the state each group is in", labels=["group", "type", "state"]
        )
        for group in groups:
            members.add_metric([group.group_id], len(group.members))
            state.add_metric([group.group_id, group.group_type, group.state], 1)
            sums: dict[str, list[int]] = {}
            for offset in group.offsets:
                labels = [group.group_id, offset.topic, str(offset.partition)]
                current.add_metric(labels, offset.committed)
                topic_sums = sums.setdefault(offset.topic, [0, 0])
                topic_sums[0] += offset.committed
                if offset.lag is not None:
                    lag.add_metric(labels, offset.lag)
                    topic_sums[1] += offset.lag
            for topic, (committed, lagging) in sorted(sums.items()):
                current_sum.add_metric([group.group_id, topic], committed)
                lag_sum.add_metric([group.group_id, topic], lagging)
        yield from (members, current, lag, current_sum, lag_sum, state)
