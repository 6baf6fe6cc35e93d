"""NamedTuples built on the hot paths without their Python `__new__`.

A NamedTuple's constructor is a Python function (the `__new__` it generates, which fills the
defaults): a frame per tuple. `new_tuple(Cls, (a, b))` is `tuple.__new__` itself, the C call
under it: 157 -> 70 ns for two fields, where `Cls._make((a, b))` takes 119 (timeit, 3.11,
min of 5). It fills no default and checks no count: the tuple given must hold every field, in
the class's order. So a module that builds a class this way declares that order with
`fields_given(Cls, "a", "b", ...)` at import, beside the construction: a field added (even
with a default), removed, renamed or moved fails every import of that module, not as a tuple
silently one short or misaligned.

Declared here, the lowest layer, so that protocol, storage and shim use the one way.
"""

from __future__ import annotations

from typing import Any

new_tuple = tuple.__new__


def fields_given(cls: type[tuple[Any, ...]], *names: str) -> None:
    """Fail unless `cls`'s fields are `names`, in this order: what `new_tuple(cls, ...)` is
    given where this is declared."""
    fields = getattr(cls, "_fields", None)
    if fields != names:
        raise TypeError(f"{cls.__name__} is built as {names} but declares {fields}: build it again")
