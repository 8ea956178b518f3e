"""The graph questions :class:`knoxidx.Index` answers: finding a symbol (a name, a qualified
name, ``path:line``, a wildcard pattern) and walking the edges from it (callers, callees,
references, dependencies, impact). A mixin over the index's ``q`` (the store's queries)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from knoxidx.core.errors import (
    AmbiguousSymbolError,
    BadInputError,
    BadPathError,
    SymbolNotFoundError,
)
from knoxidx.core.model import EdgeType
from knoxidx.core.paging import CANDIDATES_SHOWN, DEFAULT_LIMIT, FILES_SHOWN, WALK_CAP, Page
from knoxidx.graph import traverse
from knoxidx.parse import signatures

if TYPE_CHECKING:
    from knoxidx.answers.across_repos import SharedIndex
    from knoxidx.graph.protocol import GraphReads

# DOTALL: a file name may hold a line break (and it is not "a.py:3" with a newline after)
_PATH_LINE = re.compile(r"^(?P<path>.+):(?P<line>[0-9]+)\Z", re.DOTALL)
# a line number in other digits ('a.py:٣'): int() reads it, and no face may
_OTHER_DIGITS = re.compile(r".+:\d+\Z", re.DOTALL)
CALL_TYPES = (EdgeType.CALLS.value,)
MAX_MIN_COMPLEXITY = 2**31 - 1  # as the faces take it; SQLite's integers end at 2**63


def place_of(spec: str) -> re.Match[str] | None:
    """``spec`` as ``path:line`` (groups ``path`` and ``line``), or None when it is not one;
    BadInputError when its line number is written in digits other than 0-9."""
    match = _PATH_LINE.match(spec)
    if match is None and _OTHER_DIGITS.match(spec):
        raise BadInputError(f"the line number of {spec!r} must be written in the digits 0-9")
    return match


class GraphQuestions:
    """What :class:`knoxidx.Index` answers from the graph alone."""

    root: Path
    q: GraphReads

    # ---- finding symbols ---------------------------------------------------------------

    def symbols(self, name: str, kind: str | None = None, limit: int = 50) -> list[dict]:
        """Exact name matches, else qualified-name suffix, else prefix matches; a NAME with
        ``*`` or ``?`` is a wildcard pattern over names instead (``resolve*``, ``*Error``).
        The list alone, up to ``limit``; :meth:`find_symbols` is the bounded, paged answer."""
        return self._symbol_matches(name, kind, None, limit, 0)[0]

    def find_symbols(self, name: str, kind: str | None = None, *, path: str | None = None,
                     limit: int = DEFAULT_LIMIT, offset: int = 0,
                     min_complexity: int | None = None, returns: str | None = None,
                     param_type: str | None = None) -> dict:
        """:meth:`symbols` as an answer: a page of the definitions (``limit`` from
        ``offset``, in files matching ``path``), how many match in all, and where the next
        page starts (see :mod:`knoxidx.core.paging`). ``min_complexity``: only functions of at
        least that cyclomatic complexity, the most complex first. ``returns`` /
        ``param_type``: only functions whose declared return type / a parameter's declared
        type names that type, alone or inside another (:func:`signatures.type_query`)."""
        if min_complexity is not None and not 1 <= min_complexity <= MAX_MIN_COMPLEXITY:
            raise BadInputError(
                f"the minimum complexity must be from 1 (a function's least) to "
                f"{MAX_MIN_COMPLEXITY}, not {min_complexity}")
        narrowing: dict[str, Any] = {"min_complexity": min_complexity}
        for key, given in (("returns", returns), ("param_type", param_type)):
            try:
                narrowing[key] = None if given is None else signatures.type_query(given)
            except ValueError as exc:
                raise BadInputError(f"{key.replace('_', ' ')}: {exc}") from None
        page = Page(limit, offset, kind, path)
        window, total = self._symbol_matches(name, kind, page.path_glob, limit, offset,
                                             narrowing)
        hits, info = page.bound(window, total)
        return {"query": name, "symbols": hits, **info}

    def _symbol_matches(self, name: str, kind: str | None, path_glob: str | None, limit: int,
                        offset: int, narrowing: dict[str, Any] | None = None
                        ) -> tuple[list[dict], int]:
        """``limit`` matches from ``offset`` and how many there are, by the first rule that
        finds any: wildcard pattern, exact name, qualified-name suffix, name prefix.
        ``narrowing``: the nodes_page filters (minimum complexity, types) besides."""
        narrowing = narrowing or {}
        if not name.strip():
            raise BadInputError("the name is empty")
        if "*" in name or "?" in name:
            pattern = _like_escaped(name).replace("*", "%").replace("?", "_")
            hits, total = self.q.nodes_page("like", pattern, kind, path_glob, limit, offset,
                                            **narrowing)
            return [_public(h) for h in hits], total
        hits, total = self.q.nodes_page("name", name, kind, path_glob, limit, offset,
                                        **narrowing)
        if not total:
            suffixed = Page(kind=kind, path=path_glob).select(
                self.q.nodes_with_suffix(name, limit=WALK_CAP))
            suffixed = _narrowed(suffixed, **narrowing)
            hits, total = suffixed[offset : offset + limit], len(suffixed)
        if not total:
            hits, total = self.q.nodes_page("like", _like_escaped(name) + "%", kind, path_glob,
                                            limit, offset, **narrowing)
        return [_public(h) for h in hits], total

    def find(self, spec: str) -> dict:
        """A SYMBOL: a name, a qualified name, or ``path:line``. Ambiguity is an error that
        lists the candidates, never a silent pick."""
        if not spec.strip():
            raise BadInputError(
                "the symbol is empty: pass a name, a qualified name or path:line")
        match = place_of(spec)
        if match:
            path, line = self._repo_relative(match["path"]), int(match["line"])
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
            candidates = [_public(h) for h in hits[:CANDIDATES_SHOWN]]
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

    def callers(self, spec: str, depth: int = 1, *, limit: int = DEFAULT_LIMIT,
                offset: int = 0, kind: str | None = None, path: str | None = None) -> dict:
        """Who calls ``spec``, nearest first: a page of them (see :mod:`knoxidx.core.paging`)."""
        page = Page(limit, offset, kind, path)
        node = self.find(spec)
        hits, info = self._walk_page(node, "in", CALL_TYPES, depth, page)
        out = {"symbol": _public(node), "callers": hits, **info}
        if hasattr(self.q, "external_callers"):  # a shared store: other repositories too
            from knoxidx.answers.across_repos import external_callers

            out["external_callers"] = external_callers(cast("SharedIndex", self), node)
        return out

    def callees(self, spec: str, depth: int = 1, *, limit: int = DEFAULT_LIMIT,
                offset: int = 0, kind: str | None = None, path: str | None = None) -> dict:
        page = Page(limit, offset, kind, path)
        node = self.find(spec)
        hits, info = self._walk_page(node, "out", CALL_TYPES, depth, page)
        return {"symbol": _public(node), "callees": hits, **info}

    def refs(self, spec: str, *, limit: int = DEFAULT_LIMIT, offset: int = 0,
             kind: str | None = None, path: str | None = None,
             possible_limit: int = traverse.POSSIBLE_LIMIT) -> dict:
        """Every incoming edge of ``spec`` by its reverse type (calls, uses, named imports,
        qualified uses ``Spec.member``...) as ``incoming``; the page runs through the groups
        in order, ``counts`` gives each group's size before the cut. Apart, as ``possible``,
        the calls resolution left unresolved whose name could be it or one of its members."""
        page = Page(limit, offset, kind, path)
        node = self.find(spec)
        q = self._q_of(node)
        groups = traverse.incoming_by_type(q, node)
        selected = page.select([hit for hits in groups.values() for hit in hits])
        counts: dict[str, int] = {}
        for hit in selected:
            counts[hit["via"]] = counts.get(hit["via"], 0) + 1
        hits, info = page.cut(selected)
        incoming: dict[str, list[dict]] = {}
        for hit in hits:
            incoming.setdefault(hit["via"], []).append(hit)
        return {"symbol": _public(node), "incoming": incoming, "counts": counts, **info,
                **traverse.possible_references(q, node, possible_limit)}

    def deps(self, target: str, reverse: bool = False, depth: int = 1, *,
             limit: int = DEFAULT_LIMIT, offset: int = 0, kind: str | None = None,
             path: str | None = None) -> dict:
        page = Page(limit, offset, kind, path)
        node = self._file_or_module(target)
        types = (EdgeType.IMPORTS.value, EdgeType.DEPENDS_ON.value)
        hits, info = self._walk_page(node, "in" if reverse else "out", types, depth, page)
        out = {"symbol": _public(node), "reverse": reverse, "dependencies": hits, **info}
        if reverse and hasattr(self.q, "external_importers"):
            from knoxidx.answers.across_repos import external_importers

            out["external_importers"] = external_importers(cast("SharedIndex", self), node)
        return out

    def impact(self, spec: str, depth: int = 3, *, limit: int = DEFAULT_LIMIT,
               offset: int = 0, kind: str | None = None, path: str | None = None) -> dict:
        """What may break if ``spec`` changes: transitive callers, users, subclasses and
        importers, nearest first (a page of them), and the distinct files of all of them
        (the first FILES_SHOWN, sorted; ``file_count`` says how many)."""
        page = Page(limit, offset, kind, path)
        node = self.find(spec)
        everything = traverse.walk(self._q_of(node), node["id"], "in", traverse.IMPACT_TYPES,
                                   depth, limit=WALK_CAP)
        selected = page.select(everything)
        hits, info = page.cut(selected, exact=len(everything) < WALK_CAP)
        files = sorted({h["path"] for h in selected if h["path"]})
        return {"symbol": _public(node), "impacted": hits, "files": files[:FILES_SHOWN],
                "file_count": len(files), **info}

    def _walk_page(self, node: dict, direction: str, types: tuple[str, ...], depth: int,
                   page: Page) -> tuple[list[dict], dict]:
        everything = traverse.walk(self._q_of(node), node["id"], direction, types, depth,
                                   limit=WALK_CAP)
        return page.cut(page.select(everything), exact=len(everything) < WALK_CAP)

    def stats(self) -> dict:
        return {"root": str(self.root), **self.q.counts()}

    def _file_or_module(self, target: str) -> dict:
        if not target.strip():
            raise BadInputError("the file or module is empty")
        node = self.q.file_node(self._repo_relative(target))
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

    def _repo_relative(self, path: str) -> str:
        """``path`` as the index stores it: an absolute path inside the root (what an agent
        or a shell completion passes) made relative, a leading ``./`` dropped."""
        if Path(path).is_absolute():
            try:
                return Path(path).resolve().relative_to(self.root).as_posix()
            except ValueError:  # outside, or a NUL in it
                raise BadPathError(f"{path} is outside the indexed repository") from None
            except (RuntimeError, OSError) as exc:  # a symlink loop, a name too long
                raise BadPathError(f"{path} cannot be resolved: "
                                   f"{getattr(exc, 'strerror', None) or exc}") from None
        return path.removeprefix("./")

    def node(self, node_id: int) -> dict:
        """One node by its id (the ``id`` field of every answer)."""
        node = self.q.nodes_by_id([node_id]).get(node_id)
        if node is None:
            raise SymbolNotFoundError(f"no node with id {node_id} in the index")
        return _public(node)

    def _q_of(self, node: dict) -> GraphReads:
        """The queries for walks from ``node``: edges join within one repository."""
        repo = node.get("repo")
        return self.q.scoped(repo) if repo is not None else self.q


def _narrowed(nodes: list[dict], min_complexity: int | None = None, returns: str | None = None,
              param_type: str | None = None) -> list[dict]:
    """``nodes`` (nodes_with_suffix's) filtered as nodes_page filters in SQL."""
    if returns is not None:
        nodes = [h for h in nodes if "parameters" in h and signatures.key_matches(
            signatures.search_key([h["returns"]]), returns)]
    if param_type is not None:
        nodes = [h for h in nodes if "parameters" in h and signatures.key_matches(
            signatures.search_key([p["type"] for p in h["parameters"]
                                   if p["kind"] not in (signatures.SELF, signatures.RECEIVER)]),
            param_type)]
    if min_complexity is not None:
        nodes = sorted((h for h in nodes if _cyclomatic(h) >= min_complexity),
                       key=_cyclomatic, reverse=True)
    return nodes


def _cyclomatic(node: dict) -> int:
    """A node's cyclomatic complexity; 0 for what has none (not a function)."""
    complexity = node.get("complexity")
    return complexity["cyclomatic"] if complexity else 0


def _public(node: dict) -> dict:
    from knoxidx.retrieval.disclosure import declaration_shown

    return declaration_shown({k: v for k, v in node.items()
                              if k not in ("file_id", "parent_id", "start_byte", "end_byte")})


def _like_escaped(text: str) -> str:
    """``text`` matching itself in a LIKE pattern with ``ESCAPE '\\'``."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
