"""Byte-rate quota enforcement as Kafka's ClientQuotaManager does it, pure and clock-free.

Each sensor (a user / client-id pair, as `ClientQuotas.quota_for` tags it) keeps Kafka's
sampled `Rate`: `quota.window.num` samples of `quota.window.size.seconds` each. A request's
bytes are recorded first; if the rate over the retained window is then above the quota, the
throttle time is the time it takes for the rate to come back down to it:
(rate - quota) / quota * window, rounded as Java's Math.round. The server then answers at
once and stops reading the connection for that long (KIP-219).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from kafka_shim.shim.quotas.client_quotas import (
    CONNECTION_CREATION_RATE,
    CONSUMER_BYTE_RATE,
    PRODUCER_BYTE_RATE,
    ClientQuotas,
)


@dataclass
class _Sample:
    start_ms: int
    value: float = 0.0

    def reset(self, now: int) -> None:
        self.start_ms = now
        self.value = 0.0


@dataclass
class SampledRate:
    """Kafka's `Rate` over a `SampledTotal`: the sum of the retained samples divided by the
    time they span, counted as at least `samples - 1` full windows (so a first burst is not
    divided by a few milliseconds)."""

    samples: int
    window_ms: int
    _samples: list[_Sample] = field(default_factory=list)
    _current: int = 0
    last_record_ms: int = 0

    def record(self, value: float, now: int) -> None:
        self.last_record_ms = now
        sample = self._current_sample(now)
        if now - sample.start_ms >= self.window_ms:
            self._current = (self._current + 1) % self.samples
            if self._current >= len(self._samples):
                self._samples.append(_Sample(now))
            else:
                self._samples[self._current].reset(now)
            sample = self._samples[self._current]
        sample.value += value

    def _current_sample(self, now: int) -> _Sample:
        if not self._samples:
            self._samples.append(_Sample(now))
        return self._samples[self._current]

    def _purge(self, now: int) -> None:
        for sample in self._samples:
            if now - sample.start_ms >= self.samples * self.window_ms:
                sample.reset(now)

    def window_size_ms(self, now: int) -> int:
        self._purge(now)
        oldest = min(s.start_ms for s in self._samples) if self._samples else now
        elapsed = now - oldest
        full_windows = elapsed // self.window_ms
        if full_windows < self.samples - 1:
            elapsed += (self.samples - 1 - full_windows) * self.window_ms
        return max(elapsed, 1)

    def per_second(self, now: int) -> float:
        window_ms = self.window_size_ms(now)  # purges the expired samples first
        return sum(s.value for s in self._samples) / (window_ms / 1000)


def java_round(value: float) -> int:
    return math.floor(value + 0.5)


# Sensors are swept for idle ones when their number has doubled since the last sweep.
_FIRST_SWEEP_AT = 64


class QuotaManager:
    """One quota type's sensors (Kafka has one manager for produce, one for fetch). A sensor
    idle for the whole window measures 0 and is forgotten, as Kafka expires idle sensors:
    clients inventing client ids cannot grow the broker without bound."""

    def __init__(self, samples: int, window_ms: int) -> None:
        self.samples = samples
        self.window_ms = window_ms
        self._sensors: dict[tuple[str, str], SampledRate] = {}
        self._sweep_at = _FIRST_SWEEP_AT

    def _sensor(self, tags: tuple[str, str], now: int) -> SampledRate:
        sensor = self._sensors.get(tags)
        if sensor is None:
            if len(self._sensors) >= self._sweep_at:
                horizon = now - self.samples * self.window_ms
                self._sensors = {t: s for t, s in self._sensors.items() if s.last_record_ms > horizon}
                self._sweep_at = max(_FIRST_SWEEP_AT, 2 * len(self._sensors))
            sensor = self._sensors[tags] = SampledRate(self.samples, self.window_ms)
        return sensor

    @property
    def sensor_count(self) -> int:
        return len(self._sensors)

    def record(self, tags: tuple[str, str], quota: float, value: float, now: int) -> int:
        """Record `value` bytes; the throttle time in ms (0 while within the quota)."""
        sensor = self._sensor(tags, now)
        sensor.record(value, now)
        rate = sensor.per_second(now)
        if rate <= quota:
            return 0
        return java_round((rate - quota) / quota * sensor.window_size_ms(now))

    def unrecord(self, tags: tuple[str, str], value: float, now: int) -> None:
        """Take back a recorded value (a throttled fetch is answered without its data)."""
        self._sensor(tags, now).record(-value, now)

    def max_bytes_in_window(self, quota: float) -> int:
        """Kafka's getMaxValueInQuotaWindow: the most one fetch may return under `quota`."""
        return int(quota * (self.samples - 1) * self.window_ms / 1000)


class ClientQuotaEnforcement:
    """The broker's client quotas and one rate manager per enforced quota type."""

    def __init__(self, store: ClientQuotas, samples: int, window_ms: int) -> None:
        self.store = store
        self.window_ms = window_ms
        self.managers = {
            key: QuotaManager(samples, window_ms)
            for key in (PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE, CONNECTION_CREATION_RATE)
        }

    @property
    def active(self) -> bool:
        """Whether any quota is set (else the hot paths skip measuring)."""
        return bool(self.store.quotas)

    def connection_throttle_ms(self, ip: str, now: int) -> int:
        """0 to accept a new connection from `ip`; else how long to hold it before closing."""
        quota = self.store.ip_quota(ip) if self.active else None
        if quota is None:
            return 0
        manager = self.managers[CONNECTION_CREATION_RATE]
        throttle_ms = manager.record((ip, ""), quota, 1, now)
        if throttle_ms == 0:
            return 0
        manager.unrecord((ip, ""), 1, now)
        return min(throttle_ms, self.window_ms)

    def record(
        self, key: str, user: str, client_id: str, size: int, now: int
    ) -> tuple[int, Callable[[], None]]:
        """The throttle time for `size` more bytes, and how to take them back."""
        found = self.store.quota_for(user, client_id, key)
        if found is None:
            return 0, lambda: None
        quota, tags = found
        manager = self.managers[key]
        return manager.record(tags, quota, size, now), lambda: manager.unrecord(tags, size, now)
