"""Regular-expression subscriptions, with RE2/J's semantics as Kafka resolves them.

Kafka compiles `SubscribedTopicRegex` with RE2/J and keeps the topics the whole name
matches. Python's `re` differs from RE2 (backreferences, lookarounds, possessive forms, and
its own escapes), so this uses RE2 itself through `google-re2`: a pattern Kafka refuses is
refused here, and one it accepts matches the same names.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from kafka_shim.protocol.internal_topics import INTERNAL_TOPICS

# Internal topics are never a subscription's: Kafka's consumers exclude them by default.


class InvalidRegex(ValueError):
    pass


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    import re2  # 25 ms of import: paid by the first regex subscription, not by start-up

    options = re2.Options()
    options.log_errors = False  # a client's bad pattern is its error, not a line in the broker's log
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        raise InvalidRegex(
            f"SubscribedTopicRegex {pattern} is not a valid regular expression: {exc}"
        ) from exc


def check(pattern: str) -> None:
    """InvalidRegex if RE2 cannot compile `pattern`."""
    _compiled(pattern)


def matching(pattern: str, names: Iterable[str]) -> frozenset[str]:
    regex = _compiled(pattern)
    return frozenset(n for n in names if n not in INTERNAL_TOPICS and regex.fullmatch(n) is not None)
