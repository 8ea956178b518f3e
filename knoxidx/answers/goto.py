"""What the code at one line refers to: go to definition by place.

Each name the line uses (a call, a ``new``, a type, a value, a base) with the definitions the
graph resolved it to (the stored edges of that site), or why it stayed unresolved, and the
imports on the line; from the file's stored facts, so the columns are the parser's and the
answer is the index's, not a guess by name.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from knoxidx.answers.questions import place_of
from knoxidx.core.errors import BadInputError, LineRangeError, SourceNotFoundError
from knoxidx.core.facts import RefKind
from knoxidx.core.paging import WALK_CAP
from knoxidx.graph import traverse
from knoxidx.graph.protocol import IndexedGraph


class PlacedIndex(IndexedGraph, Protocol):
    """What a place is read with: the index and its way of taking a path."""

    def _repo_relative(self, path: str) -> str: ...

# the edge a reference of each kind becomes when it resolves
_EDGE_OF = {RefKind.CALL: ("Calls",), RefKind.NEW: ("Calls", "Uses"), RefKind.TYPE: ("Uses",),
            RefKind.VALUE: ("References", "Calls", "Uses"), RefKind.EXTENDS: ("Extends",),
            RefKind.IMPLEMENTS: ("Implements",)}
_REASONS = {"unknown": "no definition of that name is in scope here",
            "ambiguous": "several definitions could be meant"}
_CONSTRUCTORS = frozenset({"constructor", "__init__", "new"})


def goto(index: PlacedIndex, at: str, name: str | None = None) -> dict:
    """The references on line ``at`` (``path:line``), each with its resolved definitions;
    ``name``: only references whose last name is that."""
    place = place_of(at.strip())
    if place is None:
        raise BadInputError(f"not a place: {at!r} (give PATH:LINE, such as src/app.py:42)")
    path, line = index._repo_relative(place["path"]), int(place["line"])
    file_node = index.q.file_node(path)
    facts = index.store.load_facts(path) if file_node is not None else None
    if file_node is None or facts is None:
        raise SourceNotFoundError(f"no indexed file {path!r}")
    if not 1 <= line <= max(facts.lines, 1):
        raise LineRangeError(f"{path} has {facts.lines} lines, not a line {line}")
    from knoxidx.answers.questions import _public
    from knoxidx.history.tables import tables_of

    tables = tables_of(index.store)
    ids = [file_node["id"], *(row[0] for row in tables.definitions_in(path))] \
        if tables is not None else [file_node["id"]]
    edges = [e for e in index.q.edges(ids, "out") if e["line"] == line and e["path"] == path]
    targets = index.q.nodes_by_id({e["target"] for e in edges})
    refs = sorted((r for r in facts.refs if r.line == line), key=lambda r: (r.col, r.kind))
    if name is not None:
        refs = [r for r in refs if r.path and r.path[-1] == name]
    used: set[int] = set()
    references = []
    for ref in refs:
        last = ref.path[-1] if ref.path else ""
        resolved = []
        for i, e in enumerate(edges):
            target = targets.get(e["target"])
            if target is None or e["type"] not in _EDGE_OF.get(ref.kind, ()):
                continue
            if target["name"] == last or (ref.kind == RefKind.NEW
                                          and target["name"] in _CONSTRUCTORS):
                used.add(i)
                resolved.append({**traverse.summary(target), "via": e["type"],
                                 "confidence": e["confidence"]})
        entry: dict[str, Any] = {"name": last, "written": ".".join(ref.path), "kind": ref.kind,
                                 "column": ref.col + 1, "definitions": _unique(resolved)}
        if not resolved:
            entry["unresolved"] = _why(index, path, line, last)
        references.append(entry)
    imports = []
    for imp in facts.imports:
        named = {imp.name, imp.alias, imp.module, *re.split(r"[./:]+", imp.module)}
        if imp.line != line or (name is not None and name not in named):
            continue
        resolved = []
        for i, e in enumerate(edges):
            target = targets.get(e["target"])
            # the file or module a line imports is every import's there; a bound name, its own
            if target is not None and (e["type"] in ("Imports", "DependsOn") or (
                    e["type"] == "ImportsSymbol" and target["name"] in (imp.name, imp.alias))):
                used.add(i)
                resolved.append({**traverse.summary(target), "via": e["type"],
                                 "confidence": e["confidence"]})
        imports.append({"module": imp.module, "name": imp.name, "alias": imp.alias,
                        "definitions": _unique(resolved)})
    others = [{**traverse.summary(targets[e["target"]]), "via": e["type"],
               "confidence": e["confidence"]}
              for i, e in enumerate(edges) if i not in used and e["target"] in targets
              and (name is None or targets[e["target"]]["name"] == name)]
    enclosing = index.q.node_at(path, line)
    return {
        "path": path, "line": line,
        "enclosing": _public(enclosing) if enclosing is not None else None,
        "references": references[:WALK_CAP],
        "other_edges": _unique(others),
        "imports": imports,
    }


def _why(index: PlacedIndex, path: str, line: int, name: str) -> str:
    """Why a name on the line has no definition: the reason resolution stored for it (an
    external library, unknown, ambiguous), or that nothing was stored (a local, a builtin)."""
    if not name:
        return "unknown"
    _, rows = index.q.unresolved_calls([name], [name], WALK_CAP)
    reasons = {r["reason"] for r in rows if r["path"] == path and r["line"] == line}
    if not reasons:
        return "not in the repository (a local, builtin or library name)"
    reason = sorted(reasons)[0]
    return f"{reason}: {_REASONS[reason]}" if reason in _REASONS else reason


def _unique(items: list[dict]) -> list[dict]:
    seen: set[tuple[Any, ...]] = set()
    out = []
    for item in items:
        key = (item["id"], item["via"])
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out
