"""Accuracy of a knoxidx graph against an oracle: precision/recall of Calls and Extends.

Why: knoxidx resolves calls with cheap static rules and labels each edge
``exact`` / ``inferred`` / ``name``.  Whether those labels mean anything, and
whether the resolver beats plain name matching, can only be measured against
a far more thorough resolver -- jedi for Python, the TypeScript language
service for TS/JS (``bench/oracles/``).  This module is the comparison; its
rules are pinned by ``bench/tests/test_accuracy.py``.

Inputs
  ORACLE.jsonl  rows from an oracle: ``call`` / ``extends`` (site path, line,
                name, target_path, target_line[, target_name][, relation]),
                ``unresolved`` (path, line, name: a site the oracle could not
                decide), ``def`` (path, line, name) and ``file`` (a file the
                oracle examined).
  EXPORT.json   ``knoxidx export`` JSON: ``{"nodes": [...], "edges": [...]}``.

Rules
* Coverage: only files the oracle examined count, on both sides (``file``
  rows; without them, every path that appears in a row).  Knoxidx edges are
  considered when their *site* (edge ``path``, else the source node's path)
  is a covered file, their target is a definition node (Function/Class;
  Class only for Extends) and that target lies inside the corpus (has a
  relative path).
* An oracle row names its target by position; it is mapped to the innermost
  knoxidx definition node with the same path and name (``target_name``, the
  definition's own name, when present -- it differs from the name at the site
  for ``import f as g``) whose line span contains ``target_line``.  A row whose
  target has no such node can never be matched ("target missing").
* A Calls edge matches a ``call`` row when site path and line are equal and
  the edge's target is the row's mapped node.  An Extends edge matches an
  ``extends`` row the same way, or -- since the base may sit on a later line
  of a multi-line class header -- when the edge's source is the innermost
  Class node containing the row's site and the targets are equal.
* Undecidable sites: a knoxidx Calls or Extends edge that matches no row, at
  the path and line of an ``unresolved`` row naming its target's name, is left out (the
  compiler could not say what that site calls: neither a hit nor a miss).
* Interfaces: an oracle whose ``extends`` rows say their ``relation`` (the Java
  and Go ones) reports interfaces' supertypes and implements clauses too, so
  there Extends and Implements edges both count, and Interface nodes are
  definitions (targets of Extends, and of calls: ``new I() {..}``); the jedi
  and TypeScript oracles report class ``extends`` only.
* Both sides are sets: oracle rows are distinct by (site path, line, target),
  knoxidx edges by (site path, line, source, target node) keeping the most
  confident label.  Precision = matched edges / considered edges; recall = matched rows /
  rows; F1 their harmonic mean.
* Per confidence level: precision among the edges of that level; recall =
  rows matched by an edge of that level / all rows (so the levels' recalls sum
  to the total).  Thresholds too: only exact edges, only exact+inferred.
* ``precision_at_oracle_sites`` only counts edges at (path, line) sites where
  the oracle resolved something: it separates knoxidx mistakes from oracle
  blind spots (calls through parameters, dynamic dispatch jedi/TS can't see).
* Name baseline: every distinct oracle call site (path, line, name as written)
  linked to every knoxidx Function/Class node of that name -- what a
  resolver-less indexer would emit.  Comparable to precision_at_oracle_sites.
* TS rows carry ``target_form`` (method, function-property, ...): recall is
  also broken down by it, since what counts as a callable definition is a
  policy of the oracle (``{f: () => ..}`` properties count as methods).
* Definition recall: ``def`` rows for which a Function/Class node exists at the
  same path with the same name and start_line <= line <= end_line.

Usage::

    python bench/accuracy.py ORACLE.jsonl EXPORT.json [--json] [--root DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

DEF_KINDS = frozenset({"Function", "Class"})
CLASS_KINDS = frozenset({"Class"})
INTERFACE_KINDS = frozenset({"Interface"})
LEVELS = ("exact", "inferred", "name")  # most to least confident
UNKNOWN_LEVEL = "unknown"


# --------------------------------------------------------------------------- inputs


def normalize_path(path: str | None, root: str | None = None) -> str | None:
    """Repo-relative posix path, or None for paths outside the corpus (external nodes)."""
    if not path:
        return None
    p = path.replace("\\", "/")
    if root is not None:
        r = root.replace("\\", "/").rstrip("/") + "/"
        p = p.removeprefix(r)
    pure = PurePosixPath(p)
    if pure.is_absolute() or ".." in pure.parts:
        return None
    return pure.as_posix()  # drops "./" and duplicate slashes


@dataclass(frozen=True)
class Node:
    id: Hashable
    kind: str
    name: str
    path: str | None
    start_line: int
    end_line: int


@dataclass(frozen=True)
class Edge:
    source: Hashable
    target: Hashable
    type: str
    confidence: str
    path: str | None  # call site
    line: int | None


class Export:
    """A knoxidx export with the lookups the matching rules need."""

    def __init__(self, data: dict[str, Any], root: str | None = None) -> None:
        self.nodes: dict[Hashable, Node] = {}
        for n in data.get("nodes", []):
            self.nodes[n["id"]] = Node(
                id=n["id"], kind=str(n.get("kind")), name=str(n.get("name")),
                path=normalize_path(n.get("path"), root),
                start_line=int(n.get("start_line") or 0), end_line=int(n.get("end_line") or 0))
        self.edges: list[Edge] = []
        for e in data.get("edges", []):
            path = normalize_path(e.get("path"), root) if e.get("path") else None
            if path is None and e.get("source") in self.nodes:
                path = self.nodes[e["source"]].path
            self.edges.append(Edge(source=e.get("source"), target=e.get("target"), type=str(e.get("type")),
                                   confidence=str(e.get("confidence") or UNKNOWN_LEVEL), path=path,
                                   line=int(e["line"]) if e.get("line") is not None else None))
        self._by_path_name: dict[tuple[str, str], list[Node]] = defaultdict(list)
        self._by_name: dict[str, list[Node]] = defaultdict(list)
        self._classes_by_path: dict[str, list[Node]] = defaultdict(list)
        self._functions_by_path: dict[str, list[Node]] = defaultdict(list)
        for node in self.nodes.values():
            if node.kind in DEF_KINDS | INTERFACE_KINDS and node.path is not None:
                self._by_path_name[(node.path, node.name)].append(node)
            if node.kind in DEF_KINDS and node.path is not None:
                self._by_name[node.name].append(node)
            if node.kind in CLASS_KINDS | INTERFACE_KINDS and node.path is not None:
                self._classes_by_path[node.path].append(node)
            if node.kind == "Function" and node.path is not None:
                self._functions_by_path[node.path].append(node)

    @classmethod
    def load(cls, path: Path, root: str | None = None) -> Export:
        with path.open() as fh:
            return cls(json.load(fh), root)

    def definition_at(self, path: str, name: str, line: int, kinds: frozenset[str] = DEF_KINDS) -> Node | None:
        """Innermost definition node named ``name`` in ``path`` whose span contains ``line``."""
        spans = [n for n in self._by_path_name.get((path, name), ())
                 if n.kind in kinds and n.start_line <= line <= n.end_line]
        return _innermost(spans)

    def class_containing(self, path: str, line: int, kinds: frozenset[str] = CLASS_KINDS) -> Node | None:
        return _innermost([n for n in self._classes_by_path.get(path, ())
                           if n.kind in kinds and n.start_line <= line <= n.end_line])

    def function_containing(self, path: str, line: int) -> Node | None:
        return _innermost([n for n in self._functions_by_path.get(path, ()) if n.start_line <= line <= n.end_line])

    def definitions_named(self, name: str) -> list[Node]:
        return self._by_name.get(name, [])

    def definitions_in(self, paths: set[str]) -> list[Node]:
        return [n for n in self.nodes.values() if n.kind in DEF_KINDS and n.path in paths]


def _innermost(nodes: list[Node]) -> Node | None:
    # Latest start, then earliest end: the tightest span.  Id breaks exact ties deterministically.
    return min(nodes, key=lambda n: (-n.start_line, n.end_line, str(n.id)), default=None)


@dataclass(frozen=True)
class LinkRow:
    """An oracle ``call`` / ``extends`` row (col dropped: knoxidx edges carry lines only)."""

    path: str
    line: int
    name: str  # as written at the site
    target_path: str
    target_line: int
    target_name: str  # the definition's own name
    target_form: str = ""  # TS oracle: how the target is written (method, function-property, ...)


@dataclass(frozen=True)
class DefRow:
    path: str
    line: int
    name: str
    def_type: str


@dataclass
class Oracle:
    files: set[str] = field(default_factory=set)
    calls: list[LinkRow] = field(default_factory=list)
    extends: list[LinkRow] = field(default_factory=list)
    defs: list[DefRow] = field(default_factory=list)
    undecidable: set[tuple[str, int, str]] = field(default_factory=set)  # (path, line, name)
    covers_interfaces: bool = False  # extends rows name their relation: see "Interfaces"

    @classmethod
    def from_rows(cls, rows: Iterable[dict[str, Any]]) -> Oracle:
        oracle = cls()
        seen_paths: set[str] = set()
        link_sets: dict[str, dict[LinkRow, None]] = {"call": {}, "extends": {}}  # ordered sets
        for r in rows:
            kind = r.get("kind")
            if "path" in r:
                seen_paths.add(str(r["path"]))
            if kind == "file":
                oracle.files.add(str(r["path"]))
            elif kind in link_sets:
                row = LinkRow(path=str(r["path"]), line=int(r["line"]), name=str(r["name"]),
                              target_path=str(r["target_path"]), target_line=int(r["target_line"]),
                              target_name=str(r.get("target_name") or r["name"]),
                              target_form=str(r.get("target_form", "")))
                link_sets[kind][row] = None
                oracle.covers_interfaces |= "relation" in r
            elif kind == "unresolved":
                oracle.undecidable.add((str(r["path"]), int(r["line"]), str(r["name"])))
            elif kind == "def":
                oracle.defs.append(DefRow(path=str(r["path"]), line=int(r["line"]), name=str(r["name"]),
                                          def_type=str(r.get("def_type", "?"))))
        if not oracle.files:
            oracle.files = seen_paths
        oracle.calls = list(link_sets["call"])
        oracle.extends = list(link_sets["extends"])
        return oracle

    @classmethod
    def load(cls, path: Path) -> Oracle:
        with path.open() as fh:
            return cls.from_rows(json.loads(line) for line in fh if line.strip())


# --------------------------------------------------------------------------- scoring


def ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def f1(p: float | None, r: float | None) -> float | None:
    if p is None or r is None or p + r == 0:
        return None if p is None or r is None else 0.0
    return 2 * p * r / (p + r)


@dataclass
class Score:
    matched_edges: int
    edges: int
    matched_rows: int
    rows: int

    @property
    def precision(self) -> float | None:
        return ratio(self.matched_edges, self.edges)

    @property
    def recall(self) -> float | None:
        return ratio(self.matched_rows, self.rows)

    def as_dict(self) -> dict[str, Any]:
        return {"precision": self.precision, "recall": self.recall, "f1": f1(self.precision, self.recall),
                "matched_edges": self.matched_edges, "edges": self.edges,
                "matched_rows": self.matched_rows, "rows": self.rows}


Key = tuple[Hashable, ...]


def dedupe_edges(edges: Iterable[Edge]) -> list[Edge]:
    """One edge per (site path, line, source, target), keeping the most confident label."""
    rank = {level: i for i, level in enumerate(LEVELS)}
    best: dict[tuple[Hashable, ...], Edge] = {}
    for e in edges:
        k = (e.path, e.line, e.source, e.target)
        if k not in best or rank.get(e.confidence, len(LEVELS)) < rank.get(best[k].confidence, len(LEVELS)):
            best[k] = e
    return list(best.values())


def match(row_keys: list[list[Key]], edges: list[Edge], edge_keys: Callable[[Edge], list[Key]]) -> tuple[
        list[set[int]], int]:
    """For each edge, the indices of the rows it matches (shared keys); and #rows never keyable."""
    index: dict[Key, list[int]] = defaultdict(list)
    for i, keys in enumerate(row_keys):
        for k in keys:
            index[k].append(i)
    return [{i for k in edge_keys(e) for i in index.get(k, ())} for e in edges], sum(not k for k in row_keys)


def link_report(rows: list[LinkRow], row_keys: list[list[Key]], edges: list[Edge],
                edge_keys: Callable[[Edge], list[Key]], oracle_sites: set[tuple[str, int]]) -> dict[str, Any]:
    """Overall, per-level, cumulative and oracle-site precision/recall for one edge type."""
    matches, unkeyable = match(row_keys, edges, edge_keys)

    def score(edge_indices: list[int]) -> Score:
        hit_rows: set[int] = set()
        for i in edge_indices:
            hit_rows |= matches[i]
        return Score(sum(bool(matches[i]) for i in edge_indices), len(edge_indices), len(hit_rows), len(rows))

    everything = list(range(len(edges)))
    levels = list(LEVELS) + sorted({e.confidence for e in edges} - set(LEVELS))
    by_level = {lv: score([i for i in everything if edges[i].confidence == lv]) for lv in levels}
    # Thresholds: keep only edges at least this confident.
    cumulative = {"+".join(LEVELS[: n + 1]): score([i for i in everything if edges[i].confidence in LEVELS[: n + 1]])
                  for n in range(len(LEVELS) - 1)}
    at_sites = [i for i in everything if (edges[i].path, edges[i].line) in oracle_sites]
    report: dict[str, Any] = {
        "overall": score(everything).as_dict(),
        "target_missing": unkeyable,
        "by_confidence": {lv: s.as_dict() for lv, s in by_level.items()},
        "cumulative": {lv: s.as_dict() for lv, s in cumulative.items()},
        "precision_at_oracle_sites": score(at_sites).precision,
        "edges_at_oracle_sites": len(at_sites),
    }
    # Which kinds of targets are missed (TS rows say how the target is written).
    matched_rows: set[int] = set().union(*matches) if matches else set()
    forms: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for i, row in enumerate(rows):
        if row.target_form:
            forms[row.target_form][0] += i in matched_rows
            forms[row.target_form][1] += 1
    if forms:
        report["recall_by_target_form"] = {f: {"recall": ratio(a, b), "matched_rows": a, "rows": b}
                                           for f, (a, b) in sorted(forms.items())}
    return report


def considered(export: Export, files: set[str], edge_types: frozenset[str], target_kinds: frozenset[str],
               source_kinds: frozenset[str] | None = None) -> list[Edge]:
    """Edges of the given types at covered sites whose target is an in-corpus definition node."""
    out = []
    for e in export.edges:
        if e.type not in edge_types or e.path not in files:
            continue
        target = export.nodes.get(e.target)
        if target is None or target.kind not in target_kinds or target.path is None:
            continue
        if source_kinds is not None:
            source = export.nodes.get(e.source)
            if source is None or source.kind not in source_kinds:
                continue
        out.append(e)
    return dedupe_edges(out)


# files whose classes' constructors are named `constructor` (JavaScript/TypeScript)
ECMASCRIPT_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")


def constructors_as_classes(export: Export, edges: list[Edge]) -> list[Edge]:
    """The edges with a target that is a constructor (a Function named as the class that
    holds it, Java's, or `constructor` in JavaScript/TypeScript) retargeted to that class, as
    the oracles map a constructor call (`new T()`, `super(..)`, `this(..)`) to its class."""
    out = []
    for e in edges:
        target = export.nodes[e.target]
        if target.kind == "Function" and target.path is not None:
            holder = export.class_containing(target.path, target.start_line)
            named = target.name == "constructor" and target.path.endswith(ECMASCRIPT_SUFFIXES) \
                or holder is not None and holder.name == target.name
            if holder is not None and named and holder.id != target.id:
                e = Edge(source=e.source, target=holder.id, type=e.type, confidence=e.confidence,
                         path=e.path, line=e.line)
        out.append(e)
    return dedupe_edges(out)


def without_undecidable(export: Export, edges: list[Edge], row_keys: list[list[Key]],
                        edge_keys: Callable[[Edge], list[Key]],
                        undecidable: set[tuple[str, int, str]]) -> tuple[list[Edge], int]:
    """The edges less those that match no row at a site the oracle could not decide (the
    site's name is the target's): neither hits nor misses. Also how many were left out."""
    if not undecidable:
        return edges, 0
    keys = {k for keys in row_keys for k in keys}
    kept = [e for e in edges if any(k in keys for k in edge_keys(e))
            or (str(e.path), e.line or 0, export.nodes[e.target].name) not in undecidable]
    return kept, len(edges) - len(kept)


def call_edge_keys(e: Edge) -> list[Key]:
    return [(e.path, e.line, e.target)]


def ext_edge_keys(e: Edge) -> list[Key]:
    # the base may sit on a later line of a multi-line class header: the subclass matches too
    return [("site", e.path, e.line, e.target), ("class", e.source, e.target)]


def evaluate(oracle: Oracle, export: Export) -> dict[str, Any]:
    """The full report as a JSON-able dict."""
    files = oracle.files

    # ---- calls
    extra_kinds = INTERFACE_KINDS if oracle.covers_interfaces else frozenset()
    def_kinds, class_kinds = DEF_KINDS | extra_kinds, CLASS_KINDS | extra_kinds
    call_targets = [export.definition_at(r.target_path, r.target_name, r.target_line, def_kinds)
                    for r in oracle.calls]
    call_row_keys: list[list[Key]] = [[(r.path, r.line, t.id)] if t else [] for r, t in zip(oracle.calls, call_targets, strict=True)]
    call_sites = {(r.path, r.line) for r in oracle.calls}
    call_edges = constructors_as_classes(export, considered(export, files, frozenset({"Calls"}), def_kinds))
    call_edges, undecided = without_undecidable(export, call_edges, call_row_keys, call_edge_keys,
                                                oracle.undecidable)
    calls = link_report(oracle.calls, call_row_keys, call_edges, call_edge_keys, call_sites)

    # ---- name-matching baseline over the same oracle sites
    baseline_edges = []
    for path, line, name in sorted({(r.path, r.line, r.name) for r in oracle.calls}):
        for node in export.definitions_named(name):
            baseline_edges.append(Edge(source=None, target=node.id, type="Calls", confidence="name",
                                       path=path, line=line))
    baseline_edges = dedupe_edges(baseline_edges)
    b_matches, _ = match(call_row_keys, baseline_edges, lambda e: [(e.path, e.line, e.target)])
    baseline = Score(sum(bool(m) for m in b_matches), len(baseline_edges),
                     len(set().union(*b_matches)) if b_matches else 0, len(oracle.calls)).as_dict()

    # ---- extends
    ext_row_keys: list[list[Key]] = []
    for r in oracle.extends:
        base = export.definition_at(r.target_path, r.target_name, r.target_line, class_kinds)
        sub = export.class_containing(r.path, r.line, class_kinds)
        keys: list[Key] = []
        if base is not None:
            keys.append(("site", r.path, r.line, base.id))
            if sub is not None:
                keys.append(("class", sub.id, base.id))
        ext_row_keys.append(keys)
    ext_types = frozenset({"Extends", "Implements"} if oracle.covers_interfaces else {"Extends"})
    ext_edges = considered(export, files, ext_types, class_kinds, source_kinds=class_kinds)
    ext_edges, ext_undecided = without_undecidable(export, ext_edges, ext_row_keys, ext_edge_keys,
                                                   oracle.undecidable)
    extends = link_report(oracle.extends, ext_row_keys, ext_edges, ext_edge_keys,
                          {(r.path, r.line) for r in oracle.extends})

    # ---- definitions
    def_found = [export.definition_at(d.path, d.name, d.line, def_kinds) is not None for d in oracle.defs]
    by_type: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for d, ok in zip(oracle.defs, def_found, strict=True):
        by_type[d.def_type][0] += ok
        by_type[d.def_type][1] += 1
    def_names = {(d.path, d.name) for d in oracle.defs}
    unmatched_knoxidx = [n for n in export.definitions_in(files) if (n.path, n.name) not in def_names]

    return {
        "coverage": {"files": len(files), "oracle_call_rows": len(oracle.calls),
                     "oracle_extends_rows": len(oracle.extends), "oracle_def_rows": len(oracle.defs),
                     "oracle_undecidable_sites": len(oracle.undecidable),
                     "knoxidx_calls_at_undecidable_sites": undecided,
                     "knoxidx_extends_at_undecidable_sites": ext_undecided,
                     "knoxidx_calls_considered": len(call_edges), "knoxidx_extends_considered": len(ext_edges)},
        "calls": calls,
        "name_baseline": baseline,
        "extends": extends,
        "definitions": {
            "recall": ratio(sum(def_found), len(def_found)), "found": sum(def_found), "rows": len(def_found),
            "by_type": {t: {"recall": ratio(a, b), "found": a, "rows": b} for t, (a, b) in sorted(by_type.items())},
            "knoxidx_defs_without_oracle_name": len(unmatched_knoxidx),
        },
    }


# --------------------------------------------------------------------------- output


def _pct(x: float | None) -> str:
    return "  n/a" if x is None else f"{100 * x:5.1f}"


def format_report(rep: dict[str, Any]) -> str:
    cov = rep["coverage"]
    lines = [f"files covered: {cov['files']}   oracle rows: calls {cov['oracle_call_rows']}, "
             f"extends {cov['oracle_extends_rows']}, defs {cov['oracle_def_rows']}   "
             f"knoxidx edges considered: Calls {cov['knoxidx_calls_considered']}, "
             f"Extends {cov['knoxidx_extends_considered']}", ""]
    header = f"{'':24} {'P%':>5} {'R%':>5} {'F1%':>5}  {'edges':>8} {'matched':>8}  {'rows':>8}"

    def row(label: str, s: dict[str, Any]) -> str:
        return (f"{label:24} {_pct(s['precision'])} {_pct(s['recall'])} {_pct(s['f1'])}  "
                f"{s['edges']:8d} {s['matched_edges']:8d}  {s['matched_rows']:8d}")

    for title in ("calls", "extends"):
        r = rep[title]
        lines += [f"{title.upper()}", header, row("overall", r["overall"])]
        lines += [row(f"  {lv}", s) for lv, s in r["by_confidence"].items() if s["edges"]]
        lines += [row(f"  only {lv}", s) for lv, s in r["cumulative"].items()]
        lines.append(f"  precision at oracle-resolved sites: {_pct(r['precision_at_oracle_sites'])}% "
                     f"({r['edges_at_oracle_sites']} edges); rows whose target has no knoxidx node: "
                     f"{r['target_missing']}")
        if "recall_by_target_form" in r:
            lines.append("  recall by target form: " + ", ".join(
                f"{f} {_pct(v['recall']).strip()}% of {v['rows']}" for f, v in r["recall_by_target_form"].items()))
        if title == "calls":
            lines.append(row("name baseline", rep["name_baseline"]))
        lines.append("")
    d = rep["definitions"]
    lines.append(f"DEFINITIONS recall {_pct(d['recall'])}%  ({d['found']}/{d['rows']})  "
                 + "  ".join(f"{t}: {_pct(v['recall'])}% of {v['rows']}" for t, v in d["by_type"].items()))
    lines.append(f"  knoxidx Function/Class nodes in covered files with no oracle def of that name: "
                 f"{d['knoxidx_defs_without_oracle_name']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("oracle", type=Path, help="oracle JSONL (bench/oracles/*)")
    ap.add_argument("export", type=Path, help="knoxidx export JSON")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--root", default=None,
                    help="prefix to strip from export paths if they are absolute (the indexed corpus dir)")
    args = ap.parse_args(argv)
    report = evaluate(Oracle.load(args.oracle), Export.load(args.export, args.root))
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
