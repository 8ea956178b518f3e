"""The whole entity of one definition in one answer (``knoxidx show``, HTTP ``/entity``, MCP
``describe_symbol``): the node's own JSON (kind, names, location, signature, doc, complexity,
and whatever else extraction puts on a node), where it sits (the enclosing definition, file
and module), its relations one hop away in each direction and a type's members, each a bounded
list with its total, and its evolution from the git history, or why there is none.

Each relation lists distinct definitions in the order of their first site (path, then line:
for what this one calls, the order of the calls in its body); one reached through several
sites is listed once, ``sites`` saying how many."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from knoxidx.core.errors import BadInputError, HistoryUnavailableError
from knoxidx.core.model import EdgeType
from knoxidx.core.paging import PAGE_CHARS

if TYPE_CHECKING:
    from knoxidx.graph.protocol import GraphReads, GraphStore


class DescribedIndex(Protocol):
    """What :func:`describe` reads of an open :class:`knoxidx.Index` (a layer above this one)."""

    root: Path
    store: GraphStore

    def find(self, spec: str) -> dict: ...

    def _q_of(self, node: dict) -> GraphReads: ...

# What the answers need of the graph is imported in them: every command's start-up reads this
# module (the `show` command's options), and most commands never describe anything.

DEFAULT_RELATED = 20  # each relation's list: the totals say how many more
MAX_RELATED = 100
# (answer key, the edges' direction from this definition, their type)
RELATIONS: tuple[tuple[str, str, str], ...] = (
    ("calls", "out", EdgeType.CALLS.value),
    ("called_by", "in", EdgeType.CALLS.value),
    ("uses", "out", EdgeType.USES.value),
    ("used_by", "in", EdgeType.USES.value),
    ("referenced_by", "in", EdgeType.REFERENCES.value),
    ("extends", "out", EdgeType.EXTENDS.value),
    ("subclassed_by", "in", EdgeType.EXTENDS.value),
    ("implements", "out", EdgeType.IMPLEMENTS.value),
    ("implemented_by", "in", EdgeType.IMPLEMENTS.value),
)
# the kinds whose members (methods, fields, nested types) the answer lists
KINDS_WITH_MEMBERS = frozenset({"Class", "Interface", "Type"})
NO_EVOLUTION_OF_ITS_OWN = ("a file or module has no evolution of its own: `knoxidx hotspots` "
                           "ranks files by their changes")


def describe(index: DescribedIndex, spec: str, *, limit: int = DEFAULT_RELATED) -> dict[str, Any]:
    """The entity ``spec`` names (a name, qualified name or ``path:line``; an ambiguous one
    is :class:`~knoxidx.core.errors.AmbiguousSymbolError` with the candidates, as for every symbol
    question), with at most ``limit`` definitions per relation, and the whole answer kept
    under :data:`~knoxidx.core.paging.PAGE_CHARS` characters of JSON."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RELATED:
        raise BadInputError(f"limit must be a whole number from 1 to {MAX_RELATED}, "
                            f"not {limit!r}")
    from knoxidx.answers.questions import _public

    node = index.find(spec)
    q = index._q_of(node)
    entity = _public(node)
    entity.update(_placement(q, node))
    entity.update(_relations(q, node, limit))
    if node["kind"] in KINDS_WITH_MEMBERS:
        entity.update(_members(q, node, limit))
    entity.update(_evolution(index, node))
    entity["limit"] = limit
    return _bounded(entity)


def _placement(q: GraphReads, node: dict) -> dict[str, Any]:
    """The enclosing definition (a method's class; None at a file's top level), the file, and
    the module that holds the file (where the language has one per file: Python, Rust...)."""
    from knoxidx.graph.traverse import summary

    parent_id = node.get("parent_id")
    wanted = [parent_id] if parent_id else []
    file_node = q.file_node(node["path"]) if node.get("path") else None
    module_id = None
    if file_node is not None:
        holders = q.edges([file_node["id"]], "in", (EdgeType.CONTAINS.value,))
        module_id = next((e["source"] for e in holders if e["path"] is None), None)
        if module_id is not None:
            wanted.append(module_id)
    found = q.nodes_by_id(wanted) if wanted else {}
    module = found.get(module_id) if module_id is not None else None
    return {
        "enclosing": summary(found[parent_id]) if parent_id in found else None,
        "file": {k: file_node[k] for k in ("id", "path", "language", "end_line")}
        if file_node is not None and node["kind"] != "File" else None,
        "module": summary(module) if module is not None and module["kind"] == "Module"
        else None,
    }


def _relations(q: GraphReads, node: dict, limit: int) -> dict[str, Any]:
    """Each relation's first ``limit`` distinct definitions and how many there are."""
    from knoxidx.graph.traverse import summary

    by_relation: dict[str, dict[int, dict]] = {name: {} for name, _, _ in RELATIONS}
    for direction in ("out", "in"):
        names = {edge_type: name for name, way, edge_type in RELATIONS if way == direction}
        other = "target" if direction == "out" else "source"
        for edge in q.edges([node["id"]], direction, tuple(names)):
            reached = by_relation[names[edge["type"]]]
            seen = reached.get(edge[other])
            if seen is None:
                reached[edge[other]] = {"site": {"path": edge["path"], "line": edge["line"]},
                                        "confidence": edge["confidence"], "sites": 1}
            else:
                seen["sites"] += 1
    shown = {name: list(reached.items())[:limit] for name, reached in by_relation.items()}
    nodes = q.nodes_by_id({node_id for hits in shown.values() for node_id, _ in hits})
    out: dict[str, Any] = {}
    for name, _, _ in RELATIONS:
        out[name] = [{**summary(nodes[node_id]), **seen} for node_id, seen in shown[name]
                     if node_id in nodes]
        out[f"{name}_total"] = len(by_relation[name])
    return out


def _members(q: GraphReads, node: dict, limit: int) -> dict[str, Any]:
    """A type's first ``limit`` members by line (each with its signature, as a client may
    see it) and how many it has."""
    from knoxidx.answers.questions import _public
    from knoxidx.graph.traverse import summary

    total, members = q.members(node["id"], limit)
    return {"members": [{**summary(m), "signature": _public(m)["signature"]} for m in members],
            "members_total": total}


def _evolution(index: DescribedIndex, node: dict) -> dict[str, Any]:
    """``evolution`` from the history read at the last update, or ``evolution_unavailable``
    saying why there is none."""
    from knoxidx.history.answers import evolutions, history_tables

    try:
        history_tables(index.store)
    except HistoryUnavailableError as exc:
        return {"evolution_unavailable": str(exc)}
    found = evolutions(index.store, index.root, [node])
    if node["id"] not in found:
        return {"evolution_unavailable": NO_EVOLUTION_OF_ITS_OWN}
    return {"evolution": found[node["id"]]}


def _bounded(entity: dict[str, Any]) -> dict[str, Any]:
    """``entity`` within PAGE_CHARS characters of JSON: the longest relation (or members) list
    loses its last definitions until it fits (its total still counts them)."""
    size = _chars(entity)
    lists = [name for name, _, _ in RELATIONS] + (["members"] if "members" in entity else [])
    while size > PAGE_CHARS:
        longest = max(lists, key=lambda n: len(entity[n]))
        if not entity[longest]:
            break  # nothing left to cut: the node itself is that large
        size -= _chars(entity[longest].pop()) + 2
    return entity


def _chars(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str))
