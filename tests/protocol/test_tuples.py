"""new_tuple builds a NamedTuple without its __new__; fields_given guards the order it is given
(protocol.tuples)."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from kafka_shim.protocol.tuples import fields_given, new_tuple


class Pair(NamedTuple):
    topic: str
    partition: int


class PairGrown(NamedTuple):  # Pair with a field added, defaulted: Pair(...) calls still work
    topic: str
    partition: int
    epoch: int = -1


def test_a_tuple_built_with_every_field_equals_the_constructors() -> None:
    fields_given(Pair, "topic", "partition")
    built = new_tuple(Pair, ("t", 3))
    assert type(built) is Pair and built == Pair("t", 3) and built.partition == 3


def test_a_field_added_with_a_default_fails_the_declaration() -> None:
    with pytest.raises(TypeError, match="PairGrown"):
        fields_given(PairGrown, "topic", "partition")


def test_fields_given_in_another_order_fail_the_declaration() -> None:
    with pytest.raises(TypeError, match="Pair"):
        fields_given(Pair, "partition", "topic")
