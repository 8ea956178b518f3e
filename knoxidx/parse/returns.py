"""What a function returns where it declares no type: what its `return` statements say.

A function without a return annotation (`def make(): return Foo()`, `def _clone(self): c =
self.__class__.__new__(self.__class__); ..; return c`) returns what each `return` with a value
holds: a binding named ``RETURNED[0]`` in the function's own scope for each, read as any
binding is (the resolver keeps the types where they agree), and ``RETURNED`` as the
function's ``type_hint``. A function with a `return` whose value's type is not read (`return
a, b`, an untyped local), a generator's `yield` or an `async def` (a coroutine) says nothing.
A generator's `yield` statements, read alike where the language says what one holds
(``yielded_value``), bind ``YIELDED[0]`` in its scope: what a pytest fixture written as a
generator gives the tests that ask for it.
"""

from __future__ import annotations

from typing import Any, cast

from knoxidx.core.facts import (
    OWN_MEMBERS,
    RETURNED,
    UNKNOWN_VALUE,
    YIELDED,
    Binding,
    Definition,
    NamePath,
)
from knoxidx.core.model import NodeKind
from knoxidx.languages.protocol import Language, ReadsReturns, TypesProperties
from knoxidx.parse.definitions import declared_type, enclosing, is_local

_FUNCTION = NodeKind.FUNCTION.value
_RETURNED = RETURNED[0]
_YIELDED = YIELDED[0]
_OWN = OWN_MEMBERS[0]


def returned_bindings(
    returns: list[Any], defs: list[Definition], spans: list[tuple[int, int, int]],
    bindings: list[Binding], local_names: dict[int, set[str]], plugin: ReadsReturns,
    self_names: frozenset[str], source: bytes,
) -> list[Binding]:
    """The RETURNED bindings of each function that declares no return type and whose every
    ``returns`` node (a `return`, or what makes it return no value of its own) reads a type;
    each such function's definition in ``defs`` gets RETURNED as its ``type_hint``."""
    returns.sort(key=_start)
    read: dict[int, list[tuple[NamePath, bool]] | None] = {}
    yielded: dict[int, list[tuple[NamePath, bool]] | None] = {}
    yielded_value = getattr(plugin, "yielded_value", None)
    for node, scope in zip(returns, enclosing(spans, [n.start_byte for n in returns]),
                           strict=True):
        if scope < 0 or defs[scope].kind != _FUNCTION or defs[scope].type_hint:
            continue
        if yielded_value is not None:
            values = yielded.setdefault(scope, [])
            if values is not None:
                value = yielded_value(node, source)
                if value is None:
                    yielded[scope] = None
                elif value[0]:
                    values.append(value)
        values = read.setdefault(scope, [])
        if values is None:
            continue
        value = plugin.returned_value(node, source)
        if value is None:
            read[scope] = None
        elif value[0]:  # (`return None` alongside: an Optional, whose value is of the type)
            values.append(value)
    # a function with no `yield` is no generator: its `return`s alone yield nothing
    yielded = {scope: values for scope, values in yielded.items() if read.get(scope, 0) is None}
    if not any(read.values()) and not any(yielded.values()):
        return []
    own: dict[tuple[int, str], list[Binding]] = {}
    for b in bindings:
        if b.scope in read:
            own.setdefault((b.scope, b.name), []).append(b)
    out: list[Binding] = []
    for scope, values in read.items():
        found = _function_returns(scope, values, own, defs, local_names, plugin, self_names) \
            if values else None
        if found:
            out.extend(found)
            defs[scope] = defs[scope]._replace(type_hint=RETURNED)
    for scope, values in yielded.items():
        found = _function_returns(scope, values, own, defs, local_names, plugin, self_names,
                                  _YIELDED) if values else None
        if found:
            out.extend(found)
    return out


def _function_returns(
    scope: int, values: list[tuple[NamePath, bool]], own: dict[tuple[int, str], list[Binding]],
    defs: list[Definition], local_names: dict[int, set[str]], plugin: ReadsReturns,
    self_names: frozenset[str], named: str = _RETURNED,
) -> list[Binding] | None:
    """The RETURNED bindings (or others ``named``: YIELDED's) of the function at ``scope``,
    None where one of its values is not read: a name of the function (a parameter, a local)
    is read through its own bindings, and so is only one they type; a bare name of no local
    (`return Foo`, the class) is none."""
    out: list[Binding] = []
    for path, called in values:
        head = path[0]
        if head in self_names:
            out.append(Binding(scope, named, path, called))
            continue
        if not is_local(head, scope, local_names, defs):
            if len(path) == 1 and not called:
                return None
            out.append(Binding(scope, named, path, called))
            continue
        typed = own.get((scope, head))
        if not typed:
            return None  # untyped, or a local of a function around this one
        if len(path) > 1 or called:
            out.append(Binding(scope, named, path, called))
            continue
        for b in typed:  # `c = Foo(); ..; return c`: what each binding of c holds
            if b.type_path == UNKNOWN_VALUE:
                return None
            copied, copied_call = plugin.returned_path(b.type_path, b.is_call)
            out.append(Binding(scope, named, copied, copied_call))
    return out


def _start(node: Any) -> int:
    start: int = node.start_byte
    return start


def result_member_bindings(
    raw_defs: dict[tuple[int, int, int], tuple[Any, str, Any, Any, Any]],
    defs: list[Definition], plugin: TypesProperties, source: bytes,
) -> list[Binding]:
    """For each function declaring an inline object type as its result (TypeScript's
    `f(): { status: ParseStatus; ctx: Context }`, which its ``type_hint`` reads as
    ``OWN_MEMBERS``), a binding in its own scope per property typed by a named type, named
    ``OWN_MEMBERS[0]`` + "." + the property (no local can have that name): what `const {
    status } = f()` and `f().status` hold."""
    out: list[Binding] = []
    for (start, end, _), (node, *_rest) in raw_defs.items():
        declared = node.child_by_field_name("return_type")
        inline = declared.named_children[0] if declared is not None \
            and declared.named_children else None
        if inline is None or inline.type != "object_type":
            continue
        index = _function_at(defs, start, end)
        if index < 0 or defs[index].type_hint != OWN_MEMBERS:
            continue
        for name, type_node in plugin.property_types(inline, source).items():
            typed = declared_type(cast(Language, plugin),
                                  source[type_node.start_byte:type_node.end_byte].decode())
            if typed:
                out.append(Binding(index, f"{_OWN}.{name}", typed, False))
    return out


def _function_at(defs: list[Definition], start: int, end: int) -> int:
    for i, d in enumerate(defs):
        if d.start_byte == start and d.end_byte == end and d.kind == _FUNCTION:
            return i
    return -1
