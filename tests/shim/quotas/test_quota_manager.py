"""Kafka's quota rate and throttle-time math (ClientQuotaManager over a sampled Rate; the
connection creation rate of ConnectionQuotas), on a fake clock: the figures are worked out
by hand from Kafka's formulas."""

from __future__ import annotations

from kafka_shim.shim.quotas.client_quotas import CONNECTION_CREATION_RATE, ClientQuotas, entity_of
from kafka_shim.shim.quotas.manager import QuotaManager, SampledRate, java_round
from kafka_shim.shim.quotas.throttling import ClientQuotaEnforcement

TAGS = ("alice", "app")
START = 1_700_000_000_000


def test_a_first_burst_counts_as_spread_over_samples_minus_one_windows() -> None:
    rate = SampledRate(samples=11, window_ms=1000)
    rate.record(10_000, START)
    # No full window elapsed: the span is taken as (11 - 1) windows.
    assert rate.window_size_ms(START) == 10_000
    assert rate.per_second(START) == 1_000.0


def test_within_the_quota_no_throttle() -> None:
    manager = QuotaManager(samples=11, window_ms=1000)
    assert manager.record(TAGS, 1000.0, 10_000, START) == 0  # exactly the quota: acceptable


def test_over_the_quota_throttles_for_the_time_to_come_back_to_it() -> None:
    manager = QuotaManager(samples=11, window_ms=1000)
    # 20000 bytes over a 10 s window: 2000 B/s against 1000 B/s, (2000 - 1000) / 1000 * 10 s.
    assert manager.record(TAGS, 1000.0, 20_000, START) == 10_000


def test_throttle_time_uses_the_real_span_once_the_windows_are_full() -> None:
    manager = QuotaManager(samples=3, window_ms=1000)
    # +0: 1000 B over the minimum span of 2 windows = 500 B/s.
    assert manager.record(TAGS, 1000.0, 1000, START) == 0
    # +1000: 2000 B over 2000 ms = 1000 B/s, at the quota.
    assert manager.record(TAGS, 1000.0, 1000, START + 1000) == 0
    # +2000: a third sample; 3000 B over the 2000 ms since the oldest = 1500 B/s:
    # (1500 - 1000) / 1000 * 2000 ms.
    assert manager.record(TAGS, 1000.0, 1000, START + 2000) == 1000
    # +3000: the oldest sample is reused, the span starts at +1000 again: the same.
    assert manager.record(TAGS, 1000.0, 1000, START + 3000) == 1000


def test_old_samples_expire() -> None:
    manager = QuotaManager(samples=2, window_ms=1000)
    assert manager.record(TAGS, 100.0, 1000, START) > 0
    # samples * window later everything recorded before has expired.
    assert manager.record(TAGS, 100.0, 100, START + 2000) == 0


def test_unrecord_takes_the_bytes_back() -> None:
    manager = QuotaManager(samples=11, window_ms=1000)
    throttle = manager.record(TAGS, 1000.0, 20_000, START)
    assert throttle > 0
    manager.unrecord(TAGS, 20_000, START)
    assert manager.record(TAGS, 1000.0, 1_000, START) == 0


def test_sensors_are_per_tags() -> None:
    manager = QuotaManager(samples=11, window_ms=1000)
    assert manager.record(("alice", ""), 1000.0, 20_000, START) > 0
    assert manager.record(("bob", ""), 1000.0, 5_000, START) == 0


def test_a_producer_held_to_its_throttle_times_averages_the_quota() -> None:
    """A client that waits out every throttle time moves at about the quota."""
    manager = QuotaManager(samples=11, window_ms=1000)
    now, sent_after_warmup = START, 0
    while now < START + 60_000:
        # The first (samples - 1) windows' worth goes through at once, as with Kafka: count
        # from when the rate settled.
        if now >= START + 30_000:
            sent_after_warmup += 50_000
        now += max(manager.record(TAGS, 10_000.0, 50_000, now), 1)
    assert 9_000 < sent_after_warmup / 30 < 11_000


def test_max_bytes_in_window() -> None:
    assert QuotaManager(samples=11, window_ms=1000).max_bytes_in_window(1000.0) == 10_000


def test_java_round_rounds_half_up() -> None:
    assert java_round(2.5) == 3
    assert java_round(-2.5) == -2


def test_idle_sensors_are_forgotten() -> None:
    manager = QuotaManager(samples=2, window_ms=1000)
    for i in range(64):
        manager.record((f"u{i}", ""), 1000.0, 1, START)
    assert manager.sensor_count == 64
    manager.record(("late", ""), 1000.0, 1, START + 2000)
    assert manager.sensor_count == 1


def test_connection_creation_rate_of_an_ip_and_the_default_ip() -> None:
    store = ClientQuotas(
        {
            entity_of([("ip", "10.0.0.1")]): {CONNECTION_CREATION_RATE: 2.0},
            entity_of([("ip", None)]): {CONNECTION_CREATION_RATE: 100.0},
        }
    )
    quotas = ClientQuotaEnforcement(store, samples=2, window_ms=1000)
    # 2 per second over a one-window span: the third connection in that second is throttled
    # ((3 - 2) / 2 * 1000 ms), and not counted.
    assert [quotas.connection_throttle_ms("10.0.0.1", START) for _ in range(4)] == [0, 0, 500, 500]
    assert quotas.connection_throttle_ms("10.0.0.2", START) == 0  # the default IP entity's 100/s
    assert quotas.connection_throttle_ms("10.0.0.1", START + 2000) == 0
