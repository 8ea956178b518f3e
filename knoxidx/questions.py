"""The graph questions :class:`knoxidx.Index` answers: finding a symbol (a name, a qualified
name, ``path:line``, a wildcard pattern) and walking the edges from it (callers, callees,
references, dependencies, impact). A mixin over the index's ``q`` (the store's queries)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from knoxidx.errors import (
    AmbiguousSymbolError,
    BadInputError,
    BadPathError,
    SymbolNotFoundError,
)
from knoxidx.graph import traverse
from knoxidx.graph.model import EdgeType

_PATH_LINE = re.compile(r"^(?P<path>.+):(?P<line>\d+)$")
CALL_TYPES = (EdgeType.CALLS.value,)


class GraphQuestions:
    """What :class:`knoxidx.Index` answers from the graph alone."""

    root: Path
    q: Any

    # ---- finding symbols ---------------------------------------------------------------

    def symbols(self, name: str, kind: str | None = None, limit: int = 50) -> list[dict]:
        """Exact name matches, else qualified-name suffix, else prefix matches; a NAME with
        ``*`` or ``?`` is a wildcard pattern over names instead (``resolve*``, ``*Error``)."""
        if not name.strip():
            raise BadInputError("the name is empty")
        if "*" in name or "?" in name:
            pattern = _like_escaped(name).replace("*", "%").replace("?", "_")
            return [_public(h) for h in self.q.nodes_like(pattern, kind, limit)]
        hits = self.q.nodes_named(name, kind, limit)
        if not hits:
            hits = [h for h in self.q.nodes_with_suffix(name, limit) if not kind or h["kind"] == kind]
        if not hits:
            hits = self.q.nodes_like(_like_escaped(name) + "%", kind, limit)
        return [_public(h) for h in hits]

    def find(self, spec: str) -> dict:
        """A SYMBOL: a name, a qualified name, or ``path:line``. Ambiguity is an error that
        lists the candidates, never a silent pick."""
        if not spec.strip():
            raise BadInputError(
                "the symbol is empty: pass a name, a qualified name or path:line")
        match = _PATH_LINE.match(spec)
        if match:
            path, line = match["path"], int(match["line"])
            if line > 2**31:  # no file has that many lines (and SQLite's integers end at 2**63)
                raise SymbolNotFoundError(f"no definition at {spec}")
            node = self.q.node_at(path, line) or (
                self.q.file_node(path) if line <= 1 else None
            )
            if node is None:
                raise SymbolNotFoundError(f"no definition at {spec}")
            return node
        hits = self.q.nodes_qualified(spec)
        if not hits:
            hits = [h for h in self.q.nodes_named(spec) if h["kind"] != "Module"] or \
                self.q.nodes_named(spec)
        if not hits:
            hits = self.q.nodes_with_suffix(spec)
        if not hits:
            near = self.symbols(spec, limit=5)
            hint = f"; did you mean {', '.join(h['qualified_name'] for h in near)}?" if near else ""
            raise SymbolNotFoundError(f"no symbol {spec!r} in the index{hint}")
        if len(hits) > 1:
            candidates = [_public(h) for h in hits]
            listing = "; ".join(
                f"{c['qualified_name']} ({c['kind']}, {c['path']}:{c['start_line']})"
                for c in candidates[:10]
            )
            raise AmbiguousSymbolError(
                f"{spec!r} names {len(hits)} symbols: {listing}; pass a qualified name or path:line",
                candidates,
            )
        return hits[0]

    # ---- graph questions ---------------------------------------------------------------

    def callers(self, spec: str, depth: int = 1) -> dict:
        node = self.find(spec)
        hits = traverse.walk(self._q_of(node), node["id"], "in", CALL_TYPES, depth)
        out = {"symbol": _public(node), "callers": hits}
        if hasattr(self.q, "external_callers"):  # a shared store: other repositories too
            from knoxidx.shared import external_callers

            out["external_callers"] = external_callers(self, node)
        return out

    def callees(self, spec: str, depth: int = 1) -> dict:
        node = self.find(spec)
        hits = traverse.walk(self._q_of(node), node["id"], "out", CALL_TYPES, depth)
        return {"symbol": _public(node), "callees": hits}

    def refs(self, spec: str) -> dict:
        node = self.find(spec)
        return {"symbol": _public(node),
                "incoming": traverse.incoming_by_type(self._q_of(node), node)}

    def deps(self, target: str, reverse: bool = False, depth: int = 1) -> dict:
        node = self._file_or_module(target)
        types = (EdgeType.IMPORTS.value, EdgeType.DEPENDS_ON.value)
        hits = traverse.walk(self._q_of(node), node["id"], "in" if reverse else "out", types,
                             depth)
        out = {"symbol": _public(node), "reverse": reverse, "dependencies": hits}
        if reverse and hasattr(self.q, "external_importers"):
            from knoxidx.shared import external_importers

            out["external_importers"] = external_importers(self, node)
        return out

    def impact(self, spec: str, depth: int = 3) -> dict:
        """What may break if ``spec`` changes: transitive callers, users, subclasses and
        importers, nearest first, with the files they live in."""
        node = self.find(spec)
        hits = traverse.walk(self._q_of(node), node["id"], "in", traverse.IMPACT_TYPES, depth)
        files = sorted({h["path"] for h in hits if h["path"]})
        return {"symbol": _public(node), "impacted": hits, "files": files}

    def stats(self) -> dict:
        return {"root": str(self.root), **self.q.counts()}

    def _file_or_module(self, target: str) -> dict:
        if not target.strip():
            raise BadInputError("the file or module is empty")
        path = target
        candidate = Path(target)
        if candidate.is_absolute():
            try:
                path = candidate.resolve().relative_to(self.root).as_posix()
            except ValueError:
                raise BadPathError(f"{target} is outside the indexed repository") from None
        node = self.q.file_node(path.removeprefix("./"))
        if node is not None:
            return node
        modules = self.q.module_nodes(target)
        if len(modules) == 1:
            return modules[0]
        if len(modules) > 1:
            raise AmbiguousSymbolError(
                f"{target!r} names {len(modules)} modules", [_public(m) for m in modules]
            )
        raise SymbolNotFoundError(f"no indexed file or module {target!r}")

    def node(self, node_id: int) -> dict:
        """One node by its id (the ``id`` field of every answer)."""
        node = self.q.nodes_by_id([node_id]).get(node_id)
        if node is None:
            raise SymbolNotFoundError(f"no node with id {node_id} in the index")
        return _public(node)

    def _q_of(self, node: dict) -> Any:
        """The queries for walks from ``node``: edges join within one repository."""
        repo = node.get("repo")
        return self.q.scoped(repo) if repo is not None else self.q


def _public(node: dict) -> dict:
    from knoxidx.retrieval.disclosure import declaration_shown

    return declaration_shown({k: v for k, v in node.items()
                              if k not in ("file_id", "parent_id", "start_byte", "end_byte")})


def _like_escaped(text: str) -> str:
    """``text`` matching itself in a LIKE pattern with ``ESCAPE '\\'``."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
