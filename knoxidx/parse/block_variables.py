"""The module variables a query's module-level pattern does not reach: names a module
assigns inside a block of an ``if``, ``try``, ``with``, ``for`` or ``while``, or after the
first of a chained assignment (Python's ``@local.assigned`` captures).
"""

from __future__ import annotations

from typing import Any

from knoxidx.languages.protocol import Language
from knoxidx.parse.definitions import enclosing, node_text, outermost_first

# what a name assigned inside one is local to (see add_block_variables)
_SCOPE_SUBS = frozenset({"function", "method", "class", "struct", "enum", "interface", "trait"})


def add_block_variables(
    raw_defs: dict[tuple[int, int, int], tuple[Any, str, Any, Any, Any]], assigned: list[Any],
    import_nodes: list[Any], plugin: Language, source: bytes,
) -> None:
    """Add to ``raw_defs`` the names a module assigns outside every function and class that
    the query's module-level pattern does not reach: in the block of an ``if``, ``try``,
    ``with``, ``for`` or ``while`` (``try: import docutils`` / ``except ImportError:
    docutils_is_available = False``), and a chained assignment's names after its first (``b``
    and ``c`` of ``a = b = c = f()``). They are module variables as much as the top level's (a
    pattern for each kind of block would keep its states open over the whole module). Each
    name once, at its first assignment, defined by the whole statement (so ``a``, ``b`` and
    ``c`` are siblings); none the module already defines at its top level or imports (``except
    ImportError: json = None`` leaves ``json`` the import). ``assigned``: the names
    ``@local.assigned`` captured (Python's query)."""
    named = {key[2] for key in raw_defs}
    ordered = sorted(raw_defs.items(), key=outermost_first)
    scopes = [(key[0], key[1], 0) for key, raw in ordered if raw[1] in _SCOPE_SUBS]
    nodes = sorted({n.start_byte: n for n in assigned if n.start_byte not in named}.items())
    inside = enclosing(scopes, [start for start, _ in nodes])
    found = [node for (_, node), scope in zip(nodes, inside, strict=True) if scope < 0]
    if not found:
        return
    taken: set[str] = set()  # the top level's names: its definitions' and its imports'
    ends: list[int] = []  # the scopes open at each definition, in order
    for key, raw in ordered:
        while ends and ends[-1] <= key[0]:
            ends.pop()
        if not ends:
            taken.add(node_text(source, raw[2]))
        if raw[1] in _SCOPE_SUBS:
            ends.append(key[1])
    starts = [n.start_byte for n in import_nodes]
    for node, scope in zip(import_nodes, enclosing(scopes, starts), strict=True):
        if scope < 0:
            taken.update(i.alias for i in plugin.decode_import(node, -1, source) if i.alias)
    for name_node in found:
        name = node_text(source, name_node)
        statement = name_node.parent  # the assignment, or in a chain the one on its right
        if name in taken or statement is None:
            continue
        outer = statement.parent
        while outer is not None and outer.type == statement.type:
            statement, outer = outer, outer.parent
        taken.add(name)
        raw_defs[(statement.start_byte, statement.end_byte, name_node.start_byte)] = (
            statement, "variable", name_node, statement.child_by_field_name("type"), None)

