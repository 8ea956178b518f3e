"""Rust call-graph recall from a hand-judged sample of call sites (the precision side is
``bench.rust_sample``; no compiler oracle runs offline here).

``--draw`` parses every ``.rs`` file of each crate with tree-sitter, lists its call sites
(`call_expression`s; calls written inside a macro's token tree are not parsed, so not listed)
whose called name is a function or method some file of the crate defines, and orders each call
shape's sites at random, seeded: bare `f()`, path `m::f()` / `T::f()` / `Self::f()`, `self.m()`
and method `x.m()`. The first ``PER_SHAPE`` of each order are appended to
``bench/rust_sample/recall-<crate>.jsonl`` with ``verdict`` empty (a later draw with a larger
``--per-shape`` fills each shape up to it from the same order; the first 30 per shape were drawn
while a file's sites were listed in no fixed order, so a draw does not give those back). A person reads each site and
writes ``verdict``: "in-crate" with ``callee_at`` (``path:line`` of the definition the call
runs: the trait's method where the call goes through a generic bound or `dyn`), "outside"
(the callee is std's or a dependency's: the site leaves the sample) or "undecidable", with a
one-line ``reason``; a miss gets a ``cause`` too.

Without ``--draw`` it indexes each crate afresh (a copy) and prints recall per shape, per crate
and overall: a site is found when a Calls edge from its line reaches a definition at its
``callee_at``. ``--misses`` lists the sites not found::

    python -m bench.rust_recall [--draw] [--misses] [--corpus ~/.cache/knoxidx-corpus]
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bench.rust_sample import CRATES, SAMPLES, export_of

SEED = 55
PER_SHAPE = 30
SHAPES = ("bare", "path", "self.", "method")


def _shape_and_name(function: Any) -> tuple[str, str] | None:
    """The call shape and called name of a `call_expression`'s function part, or None for a
    call of something else (a closure in parentheses, an index, a call's result)."""
    if function.type == "generic_function":
        function = function.child_by_field_name("function")
    if function is None:
        return None
    if function.type == "identifier":
        return "bare", function.text.decode()
    if function.type == "scoped_identifier":
        name = function.child_by_field_name("name")
        return ("path", name.text.decode()) if name is not None else None
    if function.type == "field_expression":
        value, field = function.child_by_field_name("value"), function.child_by_field_name("field")
        if field is None or field.type != "field_identifier":
            return None  # `t.0()`
        return ("self." if value is not None and value.type == "self" else "method"), \
            field.text.decode()
    return None


def defined_functions(crate_root: Path) -> set[str]:
    """The names the crate's sources declare with `fn`, read from the text: a function written
    inside a macro's body (tokio's `cfg_rt! { ... }`) is one too, though tree-sitter sees only
    tokens there."""
    names: set[str] = set()
    for path in _sources(crate_root):
        names.update(re.findall(r"\bfn\s+(\w+)", path.read_text(errors="replace")))
    return names


def _sources(crate_root: Path) -> list[Path]:
    return [p for p in sorted(crate_root.rglob("*.rs"))
            if not p.relative_to(crate_root).as_posix().startswith((".knoxidx/", "target/"))]


def call_sites(crate_root: Path, defined: set[str]) -> list[dict[str, Any]]:
    """Every parsed call site of the crate whose name the crate defines as a function."""
    from tree_sitter import Parser, Query, QueryCursor

    from knoxidx.languages.registry import ts_language

    language = ts_language("rust")
    parser = Parser(language)
    query = Query(language, "(call_expression function: (_) @function)")
    sites = []
    for path in _sources(crate_root):
        relative = path.relative_to(crate_root).as_posix()
        source = path.read_bytes()
        lines = source.decode(errors="replace").splitlines()
        captures = QueryCursor(query).captures(parser.parse(source).root_node)
        for function in captures.get("function", []):
            found = _shape_and_name(function)
            if found is None or found[1] not in defined:
                continue
            shape, name = found
            row, column = function.end_point  # the name ends the function part
            sites.append({"site": f"{relative}:{row + 1}", "column": column, "shape": shape,
                          "name": name, "code": lines[row].strip()[:160]})
    # (the captures come in no fixed order within a file: sorted, the draw is repeatable)
    return sorted(sites, key=lambda s: (s["site"].rpartition(":")[0],
                                        int(s["site"].rpartition(":")[2]), s["column"]))


def _key(record: dict[str, Any]) -> tuple[str, int, str]:
    return record["site"], record["column"], record["name"]


def load(crate: str) -> list[dict[str, Any]]:
    path = SAMPLES / f"recall-{crate}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def draw(crate: str, crate_root: Path, per_shape: int) -> None:
    """Fills each shape up to ``per_shape`` recorded sites with the first sites of its seeded
    order not recorded yet."""
    by_shape: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for site in call_sites(crate_root, defined_functions(crate_root)):
        by_shape[site["shape"]].append(site)
    known = {_key(r): r for r in load(crate)}
    rng = random.Random(f"{SEED}:{crate}")
    for shape in SHAPES:
        order = list(by_shape[shape])
        rng.shuffle(order)
        recorded = sum(1 for r in known.values() if r["shape"] == shape)
        for rank, site in enumerate(order):
            if recorded >= per_shape:
                break
            if _key(site) not in known:
                known[_key(site)] = {**site, "rank": rank, "verdict": "", "callee": "",
                                     "callee_at": "", "reason": "", "cause": ""}
                recorded += 1
    rows = sorted(known.values(), key=lambda r: (SHAPES.index(r["shape"]), r["rank"]))
    SAMPLES.mkdir(exist_ok=True)
    (SAMPLES / f"recall-{crate}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (SAMPLES / f"recall-{crate}.population.json").write_text(json.dumps(
        {shape: len(by_shape[shape]) for shape in SHAPES}, indent=1) + "\n")


def linked(export: dict[str, Any]) -> dict[str, set[str]]:
    """``path:line`` of each call site -> ``path:line`` of every definition a Calls edge from
    that line reaches."""
    nodes = {n["id"]: n for n in export["nodes"]}
    out: dict[str, set[str]] = defaultdict(set)
    for e in export["edges"]:
        if e["type"] != "Calls":
            continue
        source, target = nodes[e["source"]], nodes[e["target"]]
        out[f"{e['path'] or source['path']}:{e['line']}"].add(
            f"{target['path']}:{target['start_line']}")
    return out


def is_found(record: dict[str, Any], edges: dict[str, set[str]]) -> bool:
    return record["callee_at"] in edges.get(record["site"], ())


def to_rejudge(record: dict[str, Any], edges: dict[str, set[str]]) -> bool:
    """A miss judged by its callee's file alone (``path:0``: the index linked nothing there when
    it was judged) that now has an edge into that file: a person reads which line it is."""
    path, _, line = record["callee_at"].rpartition(":")
    return line == "0" and any(t.rpartition(":")[0] == path for t in edges.get(record["site"], ()))


def recall(records: list[dict[str, Any]], edges: dict[str, set[str]]) -> dict[str, Any]:
    found = sum(1 for r in records if is_found(r, edges))
    return {"recall": found / len(records) if records else None, "found": found,
            "sites": len(records), "to_rejudge": sum(1 for r in records if to_rejudge(r, edges))}


def report(corpus: Path, show_misses: bool) -> dict[str, Any]:
    result: dict[str, Any] = {}
    every: list[tuple[dict[str, Any], dict[str, set[str]]]] = []
    for crate in CRATES:
        records = load(crate)
        judged = [r for r in records if r["verdict"] == "in-crate"]
        edges = linked(export_of(corpus / "rust" / crate))
        every.extend((r, edges) for r in judged)
        result[crate] = {**recall(judged, edges), "verdicts": Counter(
            r["verdict"] or "unjudged" for r in records), "shapes": {
            shape: recall([r for r in judged if r["shape"] == shape], edges)
            for shape in SHAPES}}
        misses = [r for r in judged if not is_found(r, edges)]
        result[crate]["miss_causes"] = Counter(r["cause"] or "?" for r in misses)
        if show_misses:
            result[crate]["misses"] = [
                {k: r[k] for k in ("site", "shape", "code", "cause", "reason")} for r in misses]
    overall: dict[str, Any] = {}
    for shape in (*SHAPES, None):
        group = [(r, e) for r, e in every if shape is None or r["shape"] == shape]
        found = sum(1 for r, e in group if is_found(r, e))
        overall[shape or "all"] = {"recall": found / len(group) if group else None,
                                   "found": found, "sites": len(group)}
    result["overall"] = overall
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draw", action="store_true", help="list the crates' call sites and "
                        "append the first sites of each shape's seeded order")
    parser.add_argument("--per-shape", type=int, default=PER_SHAPE)
    parser.add_argument("--misses", action="store_true", help="list the sites not found")
    parser.add_argument("--corpus", type=Path, default=Path.home() / ".cache" / "knoxidx-corpus")
    args = parser.parse_args(argv)
    if args.draw:
        for crate in CRATES:
            draw(crate, args.corpus / "rust" / crate, args.per_shape)
    print(json.dumps(report(args.corpus, args.misses), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
