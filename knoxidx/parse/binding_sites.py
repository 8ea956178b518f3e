"""Where a binding takes effect and how far it reaches (``Binding``'s ``at``, ``block_end`` and
``loop``), read from the tree around it, for the names a scope binds more than once: which of
them reaches a use is then the resolver's to work out (``FileIndex.reaching``). A name bound
once needs none of it, and most are: the tree is climbed for the others only."""

from __future__ import annotations

from collections import Counter
from typing import Any

from knoxidx.core.facts import TYPE_ARGUMENTS, UNKNOWN_VALUE, Binding, Definition, point
from knoxidx.languages.protocol import OrdersBindings
from knoxidx.parse.definitions import binding_scope, enclosing, node_text, span_text


def placed(bindings: list[Binding], nodes: list[tuple[int, Any, Any]], defs: list[Definition],
           spans: list[tuple[int, int, int]], raw_locals: list[tuple[int, int]], root: Any,
           source: bytes, plugin: OrdersBindings) -> list[Binding]:
    """``bindings`` with those at the indexes ``nodes`` names (each with its name node and the
    node its type is read from) placed, where their scope binds their name more than once,
    and, after them, where the language says so (``UNTYPED_REBINDS``), a binding of
    ``UNKNOWN_VALUE`` placed at each other binding of such a name (``raw_locals``: the bytes
    of each name a function binds, the query's ``@local``), whose value the index reads no
    type of (`for x in xs:`, `x = y`): past it, the earlier ones reach no use. Where the
    language places every local (``PLACES_EVERY_LOCAL``), a name bound once is placed too, and
    so is each declaration of no type read (`var x = f()`, `catch (A | B x)`): none of a name's
    declarations reaches past its block, nor into another's. A name both
    declared and bound to a call's result in one statement (`var i I = C(0)`, `x: T = f()`)
    keeps the declared type alone, as a type checker has it. ``spans``: each definition's
    (start, end, index)."""
    declared = {name_node.start_byte for i, name_node, _ in nodes if not bindings[i].is_call}
    dropped = {i for i, name_node, _ in nodes
               if bindings[i].is_call and name_node.start_byte in declared}
    if dropped:
        kept = [i for i in range(len(bindings)) if i not in dropped]
        moved = {old: new for new, old in enumerate(kept)}
        bindings = [bindings[i] for i in kept]
        nodes = [(moved[i], name_node, value_node) for i, name_node, value_node in nodes
                 if i not in dropped]
    counts = Counter((bindings[i].scope, bindings[i].name) for i, _, _ in nodes)
    several = {key for key, count in counts.items() if count > 1}
    every_local = plugin.PLACES_EVERY_LOCAL
    if every_local:
        # a local bound once reaches only its block (`for (T x : xs)`), and from past its
        # value (`minType := minType(v)` reads no local yet)
        several |= {key for key in counts if key[0] >= 0 and "." not in key[1]}
    if not several:
        return bindings
    blocks, loops = plugin.BINDING_BLOCKS, plugin.LOOPS
    typed_at: set[int] = set()
    for i, name_node, value_node in nodes:
        b = bindings[i]
        typed_at.add(name_node.start_byte)
        if (b.scope, b.name) in several:
            block_end, loop = _reach(name_node, _start(defs, b.scope), blocks, loops)
            bindings[i] = b._replace(at=_at(name_node, value_node, blocks, loops),
                                     block_end=block_end, loop=loop)
            after = bindings[i + 1] if i + 1 < len(bindings) else None
            if after is not None and after.name == b.name + TYPE_ARGUMENTS \
                    and after.scope == b.scope:  # its type arguments (`List<T> x`), placed alike
                bindings[i + 1] = after._replace(at=bindings[i].at, block_end=block_end,
                                                 loop=loop)
    if not (plugin.UNTYPED_REBINDS or every_local):
        return bindings
    names = {name for _, name in several}
    others = sorted(span for span in raw_locals
                    if span[0] not in typed_at and span_text(source, *span) in names)
    unknown: list[Binding] = []
    for (start, end), scope in zip(others, enclosing(spans, [s[0] for s in others]),
                                   strict=True):
        owner = binding_scope(defs, scope)
        name = span_text(source, start, end)
        if (owner, name) in several:
            node = root.descendant_for_byte_range(start, end)
            # its place is where the name is: a use in its value (`x = x + 1`) reads none
            row, col = node.end_point
            unknown.append(Binding(owner, name, UNKNOWN_VALUE, False, point(row + 1, col),
                                   *_reach(node, _start(defs, owner), blocks, loops)))
    return bindings + unknown if unknown else bindings


def in_own_value(node: Any, at: int, name: str, declarations: frozenset[str],
                 source: bytes) -> bool:
    """Whether byte ``at`` lies in the value (``right``) of the declaration (a statement of a
    type in ``declarations``) that ``node`` is part of, and that declaration declares ``name``
    (`minType := minType(v)`): there the name is not yet the local it declares. Asked of a
    reference (at its start) and of a binding (where its name is written in its value)."""
    while node is not None and node.type != "block":  # (a statement is in a block)
        if node.type in declarations:
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            return (left is not None and right is not None
                    and right.start_byte <= at < right.end_byte
                    and any(c.type == "identifier" and node_text(source, c) == name
                            for c in left.named_children))
        node = node.parent
    return False


def _start(defs: list[Definition], scope: int) -> int:
    return defs[scope].start_byte if scope >= 0 else 0


def _at(name_node: Any, value_node: Any, blocks: frozenset[str], loops: frozenset[str]) -> int:
    """Where the binding of ``name_node`` whose type is read from ``value_node`` takes effect:
    past the whole value, a call's arguments too (`x = f(x.y())` reads the earlier x), the
    statement itself where the value node is part of it (`let x: T = ..`), but not a loop's
    body where its header binds (`for x in xs {..}`: x is bound past xs, as Java's `for (T x :
    xs)`, whose value node is its type, is)."""
    header = name_node.parent
    if header is not None and header.type in blocks:
        iterated = header.child_by_field_name("value")
        if iterated is not None:
            value_node = iterated
    value = value_node.parent
    if value is None or (value.start_byte <= name_node.start_byte < value.end_byte
                         and (value.type in blocks or value.type in loops)):
        value = value_node
    row, col = max(name_node.end_point, value.end_point)
    return point(row + 1, col)


def _reach(name_node: Any, scope_start: int, blocks: frozenset[str],
           loops: frozenset[str]) -> tuple[int, int]:
    """``block_end`` and ``loop`` of a binding of ``name_node`` in the scope starting at
    ``scope_start`` (see ``Binding``)."""
    block_end = loop = 0
    node = name_node.parent
    while node is not None and node.start_byte >= scope_start:
        kind = node.type
        if not block_end and kind in blocks:
            row, col = node.end_point
            block_end = point(row + 1, col)
            if not loops:  # (the loops around it are all that is left to find)
                break
        if kind in loops:
            row, col = node.start_point
            loop = point(row + 1, col)
        node = node.parent
    return block_end, loop
