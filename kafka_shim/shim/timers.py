"""The broker's timers: every coordinator's deadlines, and the housekeeping an in-memory broker
runs itself, fired by the server's timer task (shim.net.server) or at once when a test moves
the broker's clock (shim.testbroker.clock)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Protocol

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.testbroker.clock import BrokerClock
from kafka_shim.shim.timer_failures import TimerFailures
from kafka_shim.storage.cleaner_manager import CleanerCheckpoints
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.memory_compaction import clean_user_topics, expire_producers, retain_user_topics
from kafka_shim.storage.topics import TopicStore

if TYPE_CHECKING:  # loaded after the Kafka listener answers (shim.coordinator_loading)
    from kafka_shim.shim.coordinator_loading import Coordinators
    from kafka_shim.shim.groups.service import GroupService
    from kafka_shim.shim.transactions.service import TransactionService

# The broker's logger (Kafka's kafka.server.BrokerServer, shim.config.broker_loggers).
log = logging.getLogger("kafka_shim.shim.broker")


class TimedBroker(Protocol):
    """What the timers read of the broker (shim.broker.Broker is one), each at call time: the
    configuration in force and the transaction coordinator are replaced while it runs."""

    @property
    def config(self) -> BrokerConfig: ...

    @property
    def topics(self) -> TopicStore: ...

    @property
    def group_service(self) -> GroupService: ...

    @property
    def broker_clock(self) -> BrokerClock: ...

    @property
    def clock(self) -> Callable[[], int]: ...

    @property
    def transactions(self) -> TransactionService: ...

    @property
    def timer_failures(self) -> TimerFailures: ...

    @property
    def coordinators(self) -> Coordinators: ...


class BrokerTimers:
    def __init__(self, broker: TimedBroker, in_memory: bool) -> None:
        self._broker = broker
        config, now = broker.config, broker.clock()
        # In memory (--memory), user topics' retention runs every log.retention.check.interval.ms
        # of the broker's clock and the cleaner every log.cleaner.backoff.ms (storage.memory_compaction,
        # with the cleaner's checkpoints); producers idle for producer.id.expiration.ms are
        # forgotten every producer.id.expiration.check.interval.ms. On disk, the store's
        # housekeeper does all three.
        self._memory_check_at = now + config.log_retention_check_interval_ms if in_memory else None
        self._memory_clean_at = now + self._cleaner_backoff_ms if in_memory else None
        self._producer_expiry_at = (
            now + config.producer_id_expiration_check_interval_ms if in_memory else None
        )
        self.cleaner_checkpoints = CleanerCheckpoints()

    def watch_deadlines(self) -> int | None:
        """The earliest deadline, for the server's timer task, which sleeps until it:
        `deadline_sooner_than` then says whether a request has set one sooner."""
        return _earliest(
            self._broker.group_service.effects.deadlines.watch(),
            self._broker.transactions.next_deadline(),
            self._memory_check_at,
            self._memory_clean_at,
            self._producer_expiry_at,
        )

    def advance_clock(self, seconds: float) -> int:
        """Move the broker's clock on and fire what falls due before returning, so a test sees
        the expired sessions, aborted transactions and retained logs at once; the new now."""
        now = self._broker.broker_clock.advance(seconds)
        self.tick(now)
        return now

    def clock_moved(self) -> None:
        """The broker's clock was advanced (or resumed): the retention check of in-memory logs
        runs at once, as if its interval had passed, so what the advance expired goes now."""
        if self._memory_check_at is not None:
            self._memory_check_at = self._memory_clean_at = self._producer_expiry_at = self._broker.clock()

    def deadline_sooner_than(self, at: float) -> bool:
        """Whether a deadline earlier than `at` has been set since `watch_deadlines`. Cheap,
        it runs after every request: the group deadlines (heartbeats reschedule one per
        request) are not looked at unless one was set before `at`."""
        return self._broker.coordinators.deadline_sooner_than(at)  # loaded ones: it loads none

    def tick(self, now: int) -> None:
        """Fire every coordinator's due deadlines (transactions they end get their markers).
        A deadline whose records cannot be written (a full disk) fires again
        COORDINATOR_RETRY_BACKOFF_MS later; the broker goes on serving meanwhile. Nothing
        raises out of here: each kind of work that fails is logged once (shim.timer_failures)
        and runs again on its own schedule, so one bad deadline neither stops the loop nor
        spins it."""
        broker = self._broker
        failures = broker.timer_failures
        groups = broker.group_service

        def group_deadline(key: Hashable, now: int) -> None:
            failures.run("group deadline", lambda: groups.deadline_passed(key, now))

        groups.effects.deadlines.fire_due(now, group_deadline)
        failures.run("transaction deadline", lambda: self._transaction_deadlines(now))
        self._memory_housekeeping(now)

    def _memory_housekeeping(self, now: int) -> None:
        config, topics, failures = self._broker.config, self._broker.topics, self._broker.timer_failures
        if self._memory_check_at is not None and now >= self._memory_check_at:
            self._memory_check_at = now + config.log_retention_check_interval_ms
            failures.run("retention check", lambda: retain_user_topics(topics, now))
        if self._memory_clean_at is not None and now >= self._memory_clean_at:
            self._memory_clean_at = now + self._cleaner_backoff_ms
            checkpoints = self.cleaner_checkpoints
            failures.run("log cleaner", lambda: clean_user_topics(topics, now, checkpoints))
        if self._producer_expiry_at is not None and now >= self._producer_expiry_at:
            self._producer_expiry_at = now + config.producer_id_expiration_check_interval_ms
            expiration_ms = config.producer_id_expiration_ms
            failures.run("producer expiry", lambda: expire_producers(topics, now, expiration_ms))

    @property
    def _cleaner_backoff_ms(self) -> int:
        return max(self._broker.config.log_cleaner_backoff_ms, 1)  # Kafka allows 0: no busy loop here

    def _transaction_deadlines(self, now: int) -> None:
        try:
            self._broker.transactions.tick(now)
        except StorageError as exc:
            log.error("a transaction deadline at %d is retried later: %s", now, exc.message)


def _earliest(*deadlines: int | None) -> int | None:
    return min((d for d in deadlines if d is not None), default=None)
