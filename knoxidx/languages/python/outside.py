"""Which unresolved Python calls are of something outside the index: a builtin (`len`,
`isinstance`) no definition in scope shadows, and a method of a value whose type is known to
be outside it (`s.split()` of an `s: str`, `kwargs.setdefault()` of a `**kwargs`, `_().format`
of an imported `gettext`, `result.output.strip()` of a property declared `-> str`). What
resolution finds is unchanged: only the reason an unresolved call gives ("external" rather
than "unknown") is; a receiver of no known type stays unknown."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from knoxidx.core.facts import CALLBACK_OF, ELEMENT_OF, INJECTED, ITEMS_HEAD, UNKNOWN_VALUE, Binding
from knoxidx.core.symbols import DEFINITION_TAG, EXTERNAL_TAG, Symbol
from knoxidx.languages.python.decorators import alternatives
from knoxidx.parse import signatures as sig
from knoxidx.parse.file_index import CONSTANT, FUNCTION, VARIABLE
from knoxidx.parse.name_paths import type_path

if TYPE_CHECKING:
    from knoxidx.core.facts import NamePath
    from knoxidx.languages.protocol import ResolverView
    from knoxidx.parse.file_index import FileIndex

# the builtins a bare name may mean (not the module's own `__name__`, `__doc__`, ..)
BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("__") or n == "__import__")
BUILTINS: Symbol = (EXTERNAL_TAG, "python", "builtins")
# types that say nothing of what a value is outside the index (a class object, the class's
# own type, anything)
_ANY_TYPE = frozenset({"Any", "object", "Self", "Type", "type", "TypeVar"})
# the builtins whose call makes a value of a builtin type (`str(x)`, `open(p)`), not `type(x)`
# (a class, maybe the index's) nor `super()`: a call's result is otherwise of no known type
BUILTIN_VALUES = frozenset({"open"} | {
    n for n in BUILTIN_NAMES if isinstance(getattr(builtins, n), type)
    and n not in ("type", "super", "object", "property", "staticmethod", "classmethod")})
# what a `*args` and a `**kwargs` parameter hold: a builtin tuple, a builtin dict
_COLLECTED = frozenset({sig.VARIADIC, sig.VARIADIC_KEYWORD})


def outside_receiver(r: ResolverView, fi: FileIndex, path: NamePath, scope: int,
                     site: int) -> bool:
    """Whether the call ``path`` (unresolved, read in ``scope`` at ``site``) is of a method
    of a value whose every known type lies outside the index."""
    receiver = path[:-1]
    if not receiver or receiver[0] in ("?", ITEMS_HEAD):
        return False
    if len(receiver) == 1 and not receiver[0].endswith("()"):
        local = _local_types(r, fi, receiver[0], scope, site)
        if local is not None:
            return local
    last = receiver[-1]
    called = last.endswith("()")
    name = last.removesuffix("()")
    found, _ = r.resolve_path(fi, (*receiver[:-1], name), scope, site=site)
    return bool(found) and all(_held_outside(r, symbol, called, name) for symbol in found[:4])


def _local_types(r: ResolverView, fi: FileIndex, name: str, scope: int, site: int
                 ) -> bool | None:
    """Whether the local or parameter ``name`` of a function around ``scope`` holds values
    of types outside the index only; None where ``name`` is no such local."""
    defs = fi.facts.defs
    s = scope
    while s >= 0 and defs[s].kind == FUNCTION:
        parameters = defs[s].signature_data[0] if defs[s].signature_data else ()
        if any(p[0] == name and p[3] in _COLLECTED for p in parameters):
            return True  # `*args`, `**kwargs`
        first = fi.bindings.get((s, name))
        if first is not None:
            reached = fi.reaching(s, name, scope, site) if site else None
            bound = reached if reached is not None else (
                first, *fi.rebindings.get((s, name), ()))
            return bool(bound) and all(_bound_outside(r, fi, b) for b in bound)
        if any(p[0] == name for p in parameters):
            return False  # an untyped parameter: of no known type
        s = defs[s].parent
    return None


def _bound_outside(r: ResolverView, fi: FileIndex, b: Binding) -> bool:
    """Whether what the binding ``b`` holds is of a type outside the index: a declared type
    (`s: str`) or a call's result (`f = open(..)`) found outside it."""
    path = b.type_path
    if path == UNKNOWN_VALUE or path[0] == INJECTED or path[-1] == ELEMENT_OF \
            or path[-1][:1] == CALLBACK_OF:
        return False
    found, _ = r.resolve_path(fi, path, b.scope, want_type=not b.is_call)
    return bool(found) and all(_held_outside(r, symbol, b.is_call, path[-1])
                               for symbol in found[:4])


def _held_outside(r: ResolverView, symbol: Symbol, called: bool, name: str) -> bool:
    """Whether what ``symbol`` (read as ``name``) denotes is outside the index: it is
    itself (called: a builtin type's value), or it is a function (or a property) whose
    declared return type is, or a variable whose declared type is."""
    if symbol[0] == EXTERNAL_TAG:
        # what an outside function returns may be anything (`typing.cast(Group, x)`)
        return not called or (symbol == BUILTINS and name in BUILTIN_VALUES)
    if symbol[0] != DEFINITION_TAG:
        return False
    d = r.definition(symbol)
    if d is None:
        return False
    if d.kind == FUNCTION:
        declared = d.signature_data[1] if len(d.signature_data) > 1 else None
        read = called or (len(d.signature_data) > 3 and d.signature_data[3]
                          and _reads_as_value(d.signature_data[3]))
        return bool(read and declared) and _type_outside(r, symbol, d.parent, declared or "")
    if d.kind in (VARIABLE, CONSTANT) and not called and d.type_hint:
        declaring = r.index(symbol[1])
        return declaring is not None and _path_outside(r, declaring, d.parent, d.type_hint)
    return False


def _reads_as_value(decorators: tuple[str, ...]) -> bool:
    return any(d.rpartition(".")[2] in ("property", "cached_property") for d in decorators)


def _type_outside(r: ResolverView, symbol: Symbol, scope: int, declared: str) -> bool:
    """Whether every type the annotation ``declared`` may be (`str | None`: a str) is
    outside the index."""
    declaring = r.index(symbol[1])
    typed = [type_path(alternative, True) for alternative in alternatives(declared)]
    return declaring is not None and bool(typed) and all(
        t and _path_outside(r, declaring, scope, t) for t in typed)


def _path_outside(r: ResolverView, fi: FileIndex, scope: int, typed: NamePath) -> bool:
    if typed[-1] in _ANY_TYPE:
        return False
    found, _ = r.resolve_path(fi, typed, scope, want_type=True)
    return bool(found) and all(s[0] == EXTERNAL_TAG for s in found[:4])
