"""The instance types of a local whose bindings disagree, marked as a union (see its
uses in ``value_types`` and ``scopes``). A module of its own: mypyc, which compiles those,
cannot compile a class that inherits from ``list``; imported from here it is a plain Python
class."""

from __future__ import annotations

from knoxidx.core.symbols import Symbol


class TypeUnion(list[Symbol]):
    """The instance types of a local whose bindings that may reach a use disagree (`x = Cast()`
    on one branch, `x = x.asc()` on another): a member read on it is each type's, as a type
    checker's union has it."""

    __slots__ = ()
