"""A context build's candidates beyond search's hits: the graph neighbours of the best hits
(callees, callers, types, the enclosing class, the file's imports), the top hit's siblings and
file, and the functions git history links to the question."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from knoxidx.answers.blocks import short_name
from knoxidx.answers.context_candidates import (
    DEFINITION_KINDS,
    Candidate,
    ContextIndex,
    ContextWeights,
    node_candidate,
)
from knoxidx.answers.context_features import lexical_share
from knoxidx.answers.pack_files import Files
from knoxidx.answers.packing import FILE_KIND
from knoxidx.answers.precedents import similar_commits
from knoxidx.graph import traverse
from knoxidx.history.answers import RecentChange, commit_changes, recent_changes, referenced_changes
from knoxidx.history.tables import tables_of
from knoxidx.parse.file_index import TYPE_KINDS
from knoxidx.retrieval.terms import unique_terms

RECENT_SOURCE = "history:recent"  # the link of a recently changed function: no hit brought it
REFERENCED_SOURCE = "history:referenced"  # of a function a commit the question names changed
SIMILAR_SOURCE = "history:similar"  # of a function a past commit like the question changed
NEIGHBOURS_READ = 200  # a hit's callers (or callees, types) read at most, the best named kept


def graph_neighbours(index: ContextIndex, seeds: list[Candidate], wanted: list[str],
            w: ContextWeights) -> dict[str, Candidate]:
    q = index.q
    out = {c.key: c for c in seeds}
    for seed in seeds[: w.expand_hits]:
        if seed.node_id is None:
            continue
        strength = seed.proximity
        label = short_name(seed.name)
        relations = (
            ("callee", "out", ("Calls",), f"called by {label}"),
            ("caller", "in", ("Calls",), f"calls {label}"),
            ("type", "out", ("Uses", "Extends", "Implements"), f"used by {label}"),
        )
        for relation, direction, types, reason in relations:
            hits = traverse.walk(q, seed.node_id, direction, types, 1, limit=NEIGHBOURS_READ)
            ids = list(dict.fromkeys(h["id"] for h in hits))
            nodes = q.nodes_by_id(ids)
            found = [nodes[i] for i in ids if i in nodes and nodes[i]["path"]
                     and nodes[i]["kind"] in DEFINITION_KINDS]
            for node in best_named(found, wanted, w.per_relation):
                _add(out, node_candidate(node), relation, strength * w.relation(relation),
                     reason, seed.key)
        full = q.nodes_by_id([seed.node_id]).get(seed.node_id)
        parent_id = full.get("parent_id") if full else None
        parent = q.nodes_by_id([parent_id]).get(parent_id) if parent_id else None
        if parent is not None and parent["kind"] in TYPE_KINDS and parent["path"]:
            _add(out, node_candidate(parent), "enclosing", strength * w.enclosing,
                 f"encloses {label}", seed.key)
        imports = _import_block(index, seed.path)
        if imports is not None:
            _add(out, imports, "imports", strength * w.imports, f"the imports of {label}'s file",
                 seed.key)
    return out


def best_named(nodes: list[dict[str, Any]], wanted: list[str],
               limit: int) -> list[dict[str, Any]]:
    """The ``limit`` of ``nodes`` whose names and signatures share the most words with the
    question, in the graph's order among equals (a function with many callers: the one the
    question names is rarely among the first the graph lists)."""
    if len(nodes) <= limit:
        return nodes
    wanted_set = set(wanted)
    named = [len(wanted_set.intersection(unique_terms([n["qualified_name"],
                                                       n.get("signature") or ""])))
             for n in nodes]
    order = sorted(range(len(nodes)), key=lambda i: -named[i])
    return [nodes[i] for i in order[:limit]]


def add_siblings(index: ContextIndex, seeds: list[Candidate], out: dict[str, Candidate],
                  wanted: list[str], files: Files, w: ContextWeights,
                  facts_of: Callable[[str], Any]) -> None:
    """The functions of the top hit's file that match the question best (a change request
    often touches a hit's neighbours in its file that the graph does not link to it)."""
    for seed in seeds[: w.sibling_hits]:
        facts = facts_of(seed.path)
        if facts is None:
            continue
        matching = []
        for d in facts.defs:
            if d.kind != "Function" or (seed.start <= d.start_line and d.end_line <= seed.end):
                continue
            probe = Candidate(key="", path=seed.path, start=d.start_line, end=d.end_line,
                              kind=d.kind, name=d.qualname)
            lexical = lexical_share(wanted, probe, files)
            if lexical >= w.sibling_lexical:
                matching.append((-lexical, d.start_line, d.end_line))
        label = short_name(seed.name)
        for _, start, end in sorted(matching)[: w.siblings]:
            node = index.q.node_at(seed.path, start)
            if node is not None and node["start_line"] == start and node["end_line"] == end:
                _add(out, node_candidate(node), "sibling", seed.proximity * w.sibling,
                     f"in {label}'s file", seed.key)


def add_top_file(top: Candidate, out: dict[str, Candidate], files: Files) -> None:
    """The top hit's whole file as one candidate (packed only while it fits
    ``top_file_share`` of the budget: :mod:`.packing`)."""
    lines = files.lines(top.path)
    last = len(lines) - (lines[-1] == "")  # a final newline ends the last line, adds none
    if last > top.end - top.start + 1:
        _add(out, Candidate(key=f"file:{top.path}", path=top.path, start=1, end=last,
                            kind=FILE_KIND, name=top.path, language=top.language),
             "file", 0.0, "the top hit's file", top.key)


def add_recent(index: ContextIndex, out: dict[str, Candidate], wanted: list[str],
                w: ContextWeights) -> None:
    """The functions the last ``recent_commits`` commits changed, the newest change first and,
    among one commit's, those whose names share most words with the question (names only: a
    sweeping commit's files are not read); none without a stored history."""
    changes = recent_changes(index.store, index.root, w.recent_commits,
                             w.recent_max_files or None)
    reason = f"changed in one of the last {w.recent_commits} commits"
    for node, _ in _changed_nodes(index, changes, wanted)[: w.recent_functions]:
        _add(out, node_candidate(node), "recent", w.recent, reason, RECENT_SOURCE)


def add_referenced(index: ContextIndex, query: str, out: dict[str, Candidate],
                    wanted: list[str], w: ContextWeights) -> None:
    """The functions changed by the commits the question names (by id, or by the number of a
    pull request or issue in their subject), in the same order as the recent ones."""
    changes, commits = referenced_changes(index.store, index.root, query)
    for node, seq in _changed_nodes(index, changes, wanted)[: w.referenced_functions]:
        commit = commits[seq]
        reason = f"changed by {commit['commit'][:10]} ({commit['subject'][:60]}), which the " \
            "question names"
        _add(out, node_candidate(node), "referenced", w.referenced, reason, REFERENCED_SOURCE)


def add_similar(index: ContextIndex, query: str, out: dict[str, Candidate],
                 wanted: list[str], w: ContextWeights) -> None:
    """The functions changed by the past commits whose subjects are most like the question,
    the best matching commit's first; none without a stored history."""
    tables = tables_of(index.store)
    if tables is None or tables.get("head") is None:
        return
    seqs = similar_commits(tables, query, w.similar_commits, w.similar_max_files or None)
    changes, commits = commit_changes(tables, index.root, seqs, best_first=True)
    place = {seq: n for n, seq in enumerate(seqs)}
    ordered = sorted(_changed_nodes(index, changes, wanted), key=lambda ns: place[ns[1]])
    for node, seq in ordered[: w.similar_functions]:
        commit = commits[seq]
        reason = f"changed by {commit['commit'][:10]} ({commit['subject'][:60]}), a past " \
            "commit like the question"
        _add(out, node_candidate(node), "similar", w.similar, reason, SIMILAR_SOURCE)


def _changed_nodes(index: ContextIndex, changes: list[RecentChange],
                   wanted: list[str]) -> list[tuple[dict[str, Any], int]]:
    """The nodes of ``changes`` with the commit of each, the newest commit's first and, among
    one commit's, those whose names share the most words with the question."""
    nodes = index.q.nodes_by_id([c.node_id for c in changes]) if changes else {}
    wanted_set = set(wanted)
    ordered = []
    for change in changes:
        node = nodes.get(change.node_id)
        if node is None or not node["path"]:
            continue
        named = len(wanted_set.intersection(unique_terms([node["qualified_name"]])))
        ordered.append((-change.seq, -named, node["path"], node["start_line"], node))
    ordered.sort(key=lambda o: o[:4])
    return [(node, -seq) for seq, *_, node in ordered]


def _add(out: dict[str, Candidate], cand: Candidate, relation: str, proximity: float,
         reason: str, source: str) -> None:
    existing = out.setdefault(cand.key, cand)
    if existing.hit_rank is None:  # a hit keeps its own place
        existing.relate(relation, proximity, reason, source)
    else:
        existing.relate(relation, proximity, reason)


def _import_block(index: ContextIndex, path: str) -> Candidate | None:
    """The file's first run of import statements, as one range."""
    file_node = index.q.file_node(path)
    if file_node is None:
        return None
    lines = sorted({e["line"] for e in index.q.edges([file_node["id"]], "out", ("Imports",))
                    if e["line"]})
    if not lines:
        return None
    start = end = lines[0]
    for line in lines[1:]:
        if line - end > 3:
            break
        end = line
    return Candidate(key=f"imports:{path}", path=path, start=start, end=end, kind="imports",
                     name=path, language=file_node.get("language") or "")
