"""Graph walks over the stored edges: callers, callees, references, dependencies, impact.

Reverse views (CalledBy, ImportedBy, ...) are these walks run against the edge direction;
nothing is stored twice.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from knoxidx.core.model import REVERSE_NAMES, EdgeType

if TYPE_CHECKING:
    from knoxidx.graph.protocol import GraphReads

SUMMARY_FIELDS = ("id", "kind", "name", "qualified_name", "path", "start_line", "end_line")
IMPACT_TYPES = (
    EdgeType.CALLS.value, EdgeType.REFERENCES.value, EdgeType.USES.value,
    EdgeType.EXTENDS.value, EdgeType.IMPLEMENTS.value, EdgeType.IMPORTS.value,
    EdgeType.DEPENDS_ON.value,
)
_REVERSE_BY_VALUE = {t.value: name for t, name in REVERSE_NAMES.items()}
# the kinds whose members' names an unresolved `x.member()` may be calling
_WITH_MEMBERS = frozenset({"Class", "Interface", "Type"})
POSSIBLE_LIMIT = 25  # each hit is ~80 tokens of JSON; the total says how many more
POSSIBLE_NOTE = (
    "calls that resolution could not tie to one definition (a receiver of unknown type, or "
    "several candidates of that name), whose name is this symbol's or one of its members': "
    "each may be a reference, not counted in 'incoming'; check them before a rename")


def summary(node: dict[str, Any]) -> dict[str, Any]:
    return {k: node.get(k) for k in SUMMARY_FIELDS}


def walk(
    q: GraphReads, start: int | Collection[int], direction: str, types: tuple[str, ...],
    depth: int, limit: int = 5000, *, starts_listed: bool = True,
) -> list[dict[str, Any]]:
    """Breadth-first over ``types`` edges, nearest first: one entry per (node, site) at the
    depth the node is first reached. A node already listed nearer is not listed again for a
    longer path to it (a caller that also calls through a helper), nor is ``start`` past
    depth 1 (a recursive function is its own caller once). ``start`` may be several nodes
    walked from at once; ``starts_listed=False`` never lists them (they are the question)."""
    starts = {start} if isinstance(start, int) else set(start)
    seen = set(starts)
    frontier = sorted(starts)
    hits: list[dict[str, Any]] = []
    if not frontier:
        return hits
    for level in range(1, depth + 1):
        edges = q.edges(frontier, direction, types)
        other = "source" if direction == "in" else "target"
        nodes = q.nodes_by_id({e[other] for e in edges if e[other] not in seen or level == 1})
        nxt: list[int] = []
        reached: set[int] = set()  # first reached at this level
        for e in edges:
            node_id = e[other]
            if node_id in seen and node_id not in reached and (
                    level > 1 or node_id not in starts or not starts_listed):
                continue  # listed at a shallower depth
            node = nodes.get(node_id)
            if node is None:
                continue
            hits.append({
                **summary(node),
                "via": e["type"] if direction == "out" else _REVERSE_BY_VALUE[e["type"]],
                "site": {"path": e["path"], "line": e["line"]},
                "confidence": e["confidence"],
                "depth": level,
                "from": e["target"] if direction == "in" else e["source"],
            })
            if node_id not in seen:
                seen.add(node_id)
                reached.add(node_id)
                nxt.append(node_id)
            if len(hits) >= limit:
                return hits
        frontier = nxt
        if not frontier:
            break
    return hits


def incoming_by_type(q: GraphReads, node: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Every incoming edge grouped by its reverse name (CalledBy, UsedBy, ...), plus the
    structural DefinedIn/ContainedIn views."""
    out: dict[str, list[dict[str, Any]]] = {}
    for hit in walk(q, node["id"], "in", tuple(t.value for t in EdgeType), 1):
        out.setdefault(hit["via"], []).append(hit)
    if node.get("file_id") is not None and node["kind"] != "File":
        file_node = q.file_node(node["path"])
        if file_node is not None:
            site = {"path": node["path"], "line": node["start_line"]}
            out["DefinedIn"] = [{**summary(file_node), "via": "DefinedIn", "site": site,
                                 "confidence": "exact", "depth": 1}]
            parent = q.nodes_by_id([node["parent_id"]]).get(node["parent_id"]) \
                if node.get("parent_id") else file_node
            if parent is not None:
                out["ContainedIn"] = [{**summary(parent), "via": "ContainedIn", "site": site,
                                       "confidence": "exact", "depth": 1}]
    return out


def possible_references(q: GraphReads, node: dict[str, Any],
                        limit: int = POSSIBLE_LIMIT) -> dict[str, Any]:
    """The unresolved calls that may be references of ``node``: ``f()``/``x.f()`` for a
    function or class ``f`` outside any type, ``x.f()`` for a member ``f``, and ``x.m()`` for
    each member ``m`` of a class. Their count (``possible_total``), the first ``limit`` by
    site, and what they are (``possible_note``): an answer that says the list of references
    may not be complete where resolution stopped."""
    if node.get("file_id") is None or node["kind"] in ("File", "Module"):
        return {"possible_total": 0, "possible": [], "possible_note": POSSIBLE_NOTE}
    is_member, members = q.member_names(node["id"])
    anywhere = [] if is_member else [node["name"]]
    as_member = [node["name"]] if is_member else []
    if node["kind"] in _WITH_MEMBERS:
        # not a class's protocol methods (`__init__`, `__eq__`): every class has them, and
        # `super().__init__()` or `x.__eq__()` left unresolved is no sign of this one
        as_member += [m for m in members if not _is_dunder(m)]
    total, calls = q.unresolved_calls(anywhere, as_member, limit)
    callers = q.nodes_by_id({c["source"] for c in calls if c["source"] is not None})
    hits = []
    for call in calls:
        caller = callers.get(call["source"]) or {}
        hits.append({
            **summary(caller), "via": "PossiblyCalledBy",
            "site": {"path": call["path"], "line": call["line"]},
            "called_as": call["called_as"], "reason": call["reason"],
            "candidates": call["candidates"], "confidence": "possible",
        })
    return {"possible_total": total, "possible": hits, "possible_note": POSSIBLE_NOTE}


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")
