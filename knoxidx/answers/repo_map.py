"""A map of the repository in a token budget: its most central definitions, file by file.

The definitions (functions, classes, interfaces, types) are ranked by their PageRank over the
call and import graph (:mod:`knoxidx.answers.centrality`, the cache the context builder
reads), test code lower; they are taken in rank order while their lines fit the budget, and
shown in files by path, each file's in line order, a method under its class (the class line
shown for context when it did not rank itself). What an agent reads first on a repository it
does not know: the names and signatures the rest of the code leans on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from knoxidx.core.errors import BadInputError
from knoxidx.core.paging import Page, path_matcher

if TYPE_CHECKING:
    from knoxidx.graph.protocol import IndexedGraph as Index

DEFAULT_MAP_TOKENS = 1024
MIN_MAP_TOKENS = 64
MAX_MAP_TOKENS = 200_000
MAPPED_KINDS = frozenset({"Function", "Class", "Interface", "Type"})
TEST_FACTOR = 0.3  # test code ranks lower unless the path filter asks for it
MAX_LINE_CHARS = 160
MAX_SKIPPED = 50  # candidates in a row too long for what is left: the map is full
_OPEN_SPACE = re.compile(r"([(\[<])\s+")
_CLOSE_SPACE = re.compile(r",?\s+([)\]>])")


def repo_map(index: Index, max_tokens: int = DEFAULT_MAP_TOKENS, path: str | None = None) -> dict:
    """The most central definitions (in files matching ``path``) whose lines fit
    ``max_tokens``, as text and as data."""
    if isinstance(max_tokens, bool) or not MIN_MAP_TOKENS <= max_tokens <= MAX_MAP_TOKENS:
        raise BadInputError(f"max_tokens must be from {MIN_MAP_TOKENS} to {MAX_MAP_TOKENS}, "
                            f"not {max_tokens!r}")
    glob = Page(path=path).path_glob
    from knoxidx.answers.centrality import centrality_scores
    from knoxidx.answers.context_candidates import ContextWeights
    from knoxidx.answers.questions import _public
    from knoxidx.retrieval.priors import in_test_module, is_test_path
    from knoxidx.retrieval.tokens import default_counter

    scores = centrality_scores(index, ContextWeights().centrality_edges)
    matches = path_matcher(glob) if glob else None
    nodes = index.q.nodes_by_id(scores)
    ranked: list[tuple[float, dict]] = []
    for node_id, node in nodes.items():
        if node["kind"] not in MAPPED_KINDS or not node["path"] or (
                matches is not None and not matches(node["path"])):
            continue
        score = scores[node_id]
        if glob is None and (is_test_path(node["path"]) or in_test_module(node["qualified_name"])):
            score *= TEST_FACTOR
        ranked.append((score, node))
    ranked.sort(key=lambda pair: (-pair[0], pair[1]["path"], pair[1]["start_line"]))
    counter = default_counter()
    spent = 0
    chosen: dict[int, tuple[float, dict]] = {}
    files: set[str] = set()
    parents: dict[int, dict] = {}
    skipped = 0
    for score, node in ranked:
        cost = counter.count(_line(node, 1)) + 1
        if node["path"] not in files:
            cost += counter.count(node["path"] + ":") + 1
        parent = _parent(index, node, parents)
        if parent is not None and parent["id"] not in chosen:
            cost += counter.count(_line(parent, 0)) + 1
        if spent + cost > max_tokens:
            skipped += 1
            if skipped > MAX_SKIPPED:
                break
            continue
        skipped = 0
        spent += cost
        chosen[node["id"]] = (score, node)
        files.add(node["path"])
    text, listed = _render(chosen, parents, _public)
    return {"max_tokens": max_tokens, "tokens": counter.count(text), "shown": len(chosen),
            "total": len(ranked), "files": listed, "text": text}


def _parent(index: Index, node: dict, cache: dict[int, dict]) -> dict | None:
    """The class (interface, type) holding ``node``, if any."""
    parent_id = node.get("parent_id")
    if parent_id is None:
        return None
    if parent_id not in cache:
        found = index.q.nodes_by_id([parent_id]).get(parent_id)
        if found is None:
            return None
        cache[parent_id] = found
    parent = cache[parent_id]
    return parent if parent["kind"] in MAPPED_KINDS and parent["path"] == node["path"] else None


def _line(node: dict, depth: int) -> str:
    """A definition as one map line: its signature's first line and where it starts."""
    signature = (node.get("signature") or node["name"]).strip().splitlines()[0]
    # a parameter list written one per line reads as one: `f( a, b, )` -> `f(a, b)`
    signature = _OPEN_SPACE.sub(r"\1", _CLOSE_SPACE.sub(r"\1", signature))
    if len(signature) > MAX_LINE_CHARS:
        signature = signature[:MAX_LINE_CHARS - 1] + "…"
    return f"{'  ' * (depth + 1)}{signature}  :{node['start_line']}"


def _render(chosen: dict[int, tuple[float, dict]], parents: dict[int, dict],
            public: Any) -> tuple[str, list[dict]]:
    by_file: dict[str, dict[int, dict]] = {}
    for _, node in chosen.values():
        shown = by_file.setdefault(node["path"], {})
        shown[node["id"]] = node
        parent = parents.get(node.get("parent_id") or -1)
        if parent is not None and parent["path"] == node["path"]:
            shown.setdefault(parent["id"], parent)
    lines: list[str] = []
    listed: list[dict] = []
    for path in sorted(by_file):
        # one line per file: a line break in its name would forge a map line (files[] has it)
        lines.append(path.replace("\r", "\\r").replace("\n", "\\n") + ":")
        definitions = []
        for node in _in_order(by_file[path].values()):
            node = public(node) | {"parent_id": node.get("parent_id")}
            depth = 1 if node["parent_id"] in by_file[path] else 0
            lines.append(_line(node, depth))
            if node["id"] in chosen:
                definitions.append({
                    "id": node["id"], "kind": node["kind"], "name": node["name"],
                    "qualified_name": node["qualified_name"], "start_line": node["start_line"],
                    "end_line": node["end_line"], "signature": node.get("signature") or "",
                    "score": round(chosen[node["id"]][0], 4)})
        listed.append({"path": path, "definitions": definitions})
    return "\n".join(lines) + ("\n" if lines else ""), listed


def _in_order(nodes: Iterable[dict]) -> list[dict]:
    return sorted(nodes, key=lambda n: (n["start_line"] or 0, -(n["end_line"] or 0)))
