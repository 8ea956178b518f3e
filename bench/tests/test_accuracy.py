"""The matching rules of bench/accuracy.py, pinned on tiny hand-written graphs.

Each test builds an oracle (rows as the oracles write them) and a knoxidx
export (nodes/edges in the export JSON shape) small enough to check by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import accuracy
import pytest
from accuracy import Export, Oracle, evaluate


def node(id: int, kind: str, name: str, path: str | None, start: int, end: int) -> dict[str, Any]:
    return {"id": id, "kind": kind, "name": name, "qualified_name": name, "path": path,
            "start_line": start, "end_line": end, "language": "python"}


def edge(source: int, target: int, line: int | None, path: str | None = "a.py", type: str = "Calls",
         confidence: str = "exact") -> dict[str, Any]:
    return {"source": source, "target": target, "type": type, "confidence": confidence, "path": path, "line": line}


def call(path: str, line: int, name: str, target_path: str, target_line: int, target_name: str | None = None,
         col: int = 0, kind: str = "call") -> dict[str, Any]:
    row = {"kind": kind, "path": path, "line": line, "col": col, "name": name,
           "target_path": target_path, "target_line": target_line}
    if target_name is not None:
        row["target_name"] = target_name
    return row


def files(*paths: str) -> list[dict[str, Any]]:
    return [{"kind": "file", "path": p} for p in paths]


def run(rows: list[dict[str, Any]], nodes: list[dict[str, Any]], edges: list[dict[str, Any]],
        root: str | None = None) -> dict[str, Any]:
    return evaluate(Oracle.from_rows(rows), Export({"nodes": nodes, "edges": edges}, root))


# Shared little world: a.py calls into b.py.
#   a.py: module (File 1), function main (lines 1-10)
#   b.py: function helper (1-3), class Widget (5-20) with method run (7-9)
NODES = [
    node(1, "File", "a.py", "a.py", 1, 10),
    node(2, "Function", "main", "a.py", 1, 10),
    node(10, "Function", "helper", "b.py", 1, 3),
    node(11, "Class", "Widget", "b.py", 5, 20),
    node(12, "Function", "run", "b.py", 7, 9),
]


def test_exact_match_gives_perfect_scores() -> None:
    rep = run(files("a.py", "b.py") + [call("a.py", 3, "helper", "b.py", 1)], NODES, [edge(2, 10, 3)])
    assert rep["calls"]["overall"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "matched_edges": 1,
                                       "edges": 1, "matched_rows": 1, "rows": 1}


def test_site_line_must_be_equal() -> None:
    rep = run(files("a.py") + [call("a.py", 3, "helper", "b.py", 1)], NODES, [edge(2, 10, 4)])
    o = rep["calls"]["overall"]
    assert (o["precision"], o["recall"], o["f1"]) == (0.0, 0.0, 0.0)


def test_target_is_matched_by_span_and_name_not_by_start_line() -> None:
    # Oracle points at the *name* line of run (8, e.g. below a decorator); the node spans 7-9.
    rep = run(files("a.py") + [call("a.py", 3, "run", "b.py", 8)], NODES, [edge(2, 12, 3)])
    assert rep["calls"]["overall"]["recall"] == 1.0


def test_wrong_target_does_not_match() -> None:
    rep = run(files("a.py") + [call("a.py", 3, "run", "b.py", 8)], NODES, [edge(2, 11, 3)])  # -> Widget
    assert rep["calls"]["overall"]["matched_edges"] == 0


def test_innermost_same_named_node_is_the_target() -> None:
    nodes = NODES + [node(20, "Function", "f", "c.py", 1, 30), node(21, "Function", "f", "c.py", 10, 12)]
    rows = files("a.py") + [call("a.py", 3, "f", "c.py", 10)]
    assert run(rows, nodes, [edge(2, 21, 3)])["calls"]["overall"]["recall"] == 1.0
    assert run(rows, nodes, [edge(2, 20, 3)])["calls"]["overall"]["recall"] == 0.0


def test_target_outside_every_span_counts_as_missing() -> None:
    rep = run(files("a.py") + [call("a.py", 3, "helper", "b.py", 40)], NODES, [edge(2, 10, 3)])
    assert rep["calls"]["target_missing"] == 1
    assert rep["calls"]["overall"]["recall"] == 0.0 and rep["calls"]["overall"]["precision"] == 0.0


def test_target_name_wins_over_site_name_for_aliases() -> None:
    # from b import helper as h; h()
    rep = run(files("a.py") + [call("a.py", 3, "h", "b.py", 1, target_name="helper")], NODES, [edge(2, 10, 3)])
    assert rep["calls"]["overall"]["recall"] == 1.0


def test_only_covered_files_count_on_the_knoxidx_side() -> None:
    # z.py is not covered: its edge is ignored.  e.py is covered but has no call rows:
    # its edge is a false positive (coverage comes from the "file" rows).
    rows = files("a.py", "e.py") + [call("a.py", 3, "helper", "b.py", 1)]
    edges = [edge(2, 10, 3), edge(2, 10, 5, path="z.py"), edge(2, 12, 5, path="e.py")]
    o = run(rows, NODES, edges)["calls"]["overall"]
    assert (o["edges"], o["matched_edges"], o["precision"]) == (2, 1, 0.5)


def test_coverage_falls_back_to_row_paths_without_file_rows() -> None:
    rows = [call("a.py", 3, "helper", "b.py", 1)]
    edges = [edge(2, 10, 3), edge(2, 12, 5, path="e.py")]
    assert run(rows, NODES, edges)["calls"]["overall"]["edges"] == 1


def test_edges_to_external_or_non_definition_nodes_are_ignored() -> None:
    nodes = NODES + [node(30, "Module", "os", None, 0, 0), node(31, "Variable", "x", "b.py", 30, 30)]
    rows = files("a.py") + [call("a.py", 3, "helper", "b.py", 1)]
    o = run(rows, nodes, [edge(2, 10, 3), edge(2, 30, 4), edge(2, 31, 5), edge(2, 999, 6)])["calls"]["overall"]
    assert (o["edges"], o["precision"]) == (1, 1.0)


def test_edge_site_path_defaults_to_source_node_path() -> None:
    rep = run(files("a.py") + [call("a.py", 3, "helper", "b.py", 1)], NODES, [edge(2, 10, 3, path=None)])
    assert rep["calls"]["overall"]["recall"] == 1.0


def test_duplicates_collapse_on_both_sides() -> None:
    # f(f(x)) on one line: two oracle rows differing only in col; knoxidx emitted the edge
    # twice with different labels -> one row, one edge, labelled with the best level.
    rows = files("a.py") + [call("a.py", 3, "helper", "b.py", 1, col=4), call("a.py", 3, "helper", "b.py", 1, col=11)]
    rep = run(rows, NODES, [edge(2, 10, 3, confidence="name"), edge(2, 10, 3, confidence="inferred")])
    assert rep["calls"]["overall"]["rows"] == 1 and rep["calls"]["overall"]["edges"] == 1
    assert rep["calls"]["by_confidence"]["inferred"]["matched_edges"] == 1
    assert rep["calls"]["by_confidence"]["name"]["edges"] == 0


def test_per_confidence_precision_and_recall() -> None:
    rows = files("a.py") + [call("a.py", 3, "helper", "b.py", 1), call("a.py", 4, "run", "b.py", 8),
                            call("a.py", 5, "Widget", "b.py", 5), call("a.py", 6, "helper", "b.py", 1)]
    edges = [edge(2, 10, 3, confidence="exact"),     # right
             edge(2, 12, 4, confidence="inferred"),  # right
             edge(2, 11, 4, confidence="inferred"),  # wrong target at a real site
             edge(2, 10, 5, confidence="name"),      # wrong (oracle says Widget)
             edge(2, 11, 5, confidence="name")]      # right
    calls = run(rows, NODES, edges)["calls"]
    lv = calls["by_confidence"]
    assert (lv["exact"]["precision"], lv["exact"]["recall"]) == (1.0, 0.25)
    assert (lv["inferred"]["precision"], lv["inferred"]["recall"]) == (0.5, 0.25)
    assert (lv["name"]["precision"], lv["name"]["recall"]) == (0.5, 0.25)
    assert calls["overall"]["recall"] == 0.75  # the levels' recalls add up
    assert calls["overall"]["precision"] == 3 / 5
    cum = calls["cumulative"]
    assert (cum["exact+inferred"]["edges"], cum["exact+inferred"]["matched_rows"]) == (3, 2)
    assert cum["exact"]["edges"] == 1


def test_f1_is_harmonic_mean() -> None:
    rows = files("a.py") + [call("a.py", 3, "helper", "b.py", 1)]
    o = run(rows, NODES, [edge(2, 10, 3), edge(2, 12, 3)])["calls"]["overall"]
    assert o["precision"] == 0.5 and o["recall"] == 1.0 and o["f1"] == pytest.approx(2 / 3)


def test_no_edges_means_precision_undefined() -> None:
    o = run(files("a.py") + [call("a.py", 3, "helper", "b.py", 1)], NODES, [])["calls"]["overall"]
    assert o["precision"] is None and o["recall"] == 0.0 and o["f1"] is None


def test_precision_at_oracle_sites_ignores_sites_the_oracle_could_not_resolve() -> None:
    rows = files("a.py") + [call("a.py", 3, "helper", "b.py", 1)]
    calls = run(rows, NODES, [edge(2, 10, 3), edge(2, 12, 7)])["calls"]  # line 7: oracle resolved nothing
    assert calls["overall"]["precision"] == 0.5
    assert calls["precision_at_oracle_sites"] == 1.0 and calls["edges_at_oracle_sites"] == 1


def test_name_baseline_links_every_site_to_every_same_named_definition() -> None:
    nodes = NODES + [node(40, "Function", "run", "c.py", 1, 2), node(41, "Variable", "run", "c.py", 5, 5)]
    rows = files("a.py") + [call("a.py", 4, "run", "b.py", 8), call("a.py", 6, "h", "b.py", 1, "helper")]
    base = run(rows, nodes, [])["name_baseline"]
    # site 4 -> both Function 'run' nodes (one right); site 6 -> nothing is named 'h'
    assert (base["edges"], base["matched_edges"], base["matched_rows"], base["rows"]) == (2, 1, 1, 2)
    assert base["precision"] == 0.5 and base["recall"] == 0.5


EXT_NODES = [
    node(50, "Class", "Base", "m.py", 1, 3),
    node(51, "Class", "Child", "m.py", 5, 12),  # class Child(\n    Base,\n): header on lines 5-7
    node(52, "Class", "Other", "m.py", 14, 15),
]


def test_extends_matches_by_site_or_by_containing_class() -> None:
    rows = files("m.py") + [call("m.py", 6, "Base", "m.py", 1, kind="extends")]
    by_site = run(rows, EXT_NODES, [edge(51, 50, 6, path="m.py", type="Extends")])["extends"]["overall"]
    by_class = run(rows, EXT_NODES, [edge(51, 50, 5, path="m.py", type="Extends")])["extends"]["overall"]
    assert by_site["recall"] == 1.0 and by_class["recall"] == 1.0 and by_class["precision"] == 1.0


def test_extends_wrong_base_or_source_does_not_match() -> None:
    rows = files("m.py") + [call("m.py", 6, "Base", "m.py", 1, kind="extends")]
    wrong_base = run(rows, EXT_NODES, [edge(51, 52, 5, path="m.py", type="Extends")])["extends"]["overall"]
    wrong_source = run(rows, EXT_NODES, [edge(52, 50, 14, path="m.py", type="Extends")])["extends"]["overall"]
    assert wrong_base["matched_edges"] == 0 and wrong_source["matched_edges"] == 0


def test_calls_and_extends_do_not_mix() -> None:
    rows = files("m.py") + [call("m.py", 6, "Base", "m.py", 1, kind="extends")]
    rep = run(rows, EXT_NODES, [edge(51, 50, 6, path="m.py", type="Calls")])
    assert rep["extends"]["overall"]["edges"] == 0 and rep["calls"]["overall"]["edges"] == 1


def test_definition_recall() -> None:
    rows = files("b.py") + [
        {"kind": "def", "path": "b.py", "line": 1, "col": 4, "name": "helper", "def_type": "function"},
        {"kind": "def", "path": "b.py", "line": 8, "col": 8, "name": "run", "def_type": "function"},
        {"kind": "def", "path": "b.py", "line": 5, "col": 6, "name": "Widget", "def_type": "class"},
        {"kind": "def", "path": "b.py", "line": 30, "col": 4, "name": "later", "def_type": "function"},
        {"kind": "def", "path": "b.py", "line": 2, "col": 4, "name": "Widget", "def_type": "class"},  # wrong span
    ]
    d = run(rows, NODES, [])["definitions"]
    assert (d["found"], d["rows"], d["recall"]) == (3, 5, 0.6)
    assert d["by_type"]["function"] == {"recall": 2 / 3, "found": 2, "rows": 3}
    assert d["by_type"]["class"]["found"] == 1
    assert d["knoxidx_defs_without_oracle_name"] == 0


def test_root_prefix_is_stripped_from_absolute_export_paths() -> None:
    nodes = [dict(n, path=f"/corpus/{n['path']}") for n in NODES]
    rows = files("a.py") + [call("a.py", 3, "helper", "b.py", 1)]
    edges = [edge(2, 10, 3, path="/corpus/a.py")]
    assert run(rows, nodes, edges, root="/corpus")["calls"]["overall"]["recall"] == 1.0
    # without --root, absolute paths are outside the corpus: nothing is considered
    assert run(rows, nodes, edges)["calls"]["overall"]["edges"] == 0


def test_normalize_path() -> None:
    assert accuracy.normalize_path("./pkg//m.py") == "pkg/m.py"
    assert accuracy.normalize_path("pkg\\m.py") == "pkg/m.py"
    assert accuracy.normalize_path("../x.py") is None
    assert accuracy.normalize_path(None) is None


def test_cli_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    oracle = tmp_path / "oracle.jsonl"
    oracle.write_text("\n".join(json.dumps(r) for r in files("a.py") + [call("a.py", 3, "helper", "b.py", 1)]))
    export = tmp_path / "export.json"
    export.write_text(json.dumps({"nodes": NODES, "edges": [edge(2, 10, 3)]}))
    assert accuracy.main([str(oracle), str(export), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["calls"]["overall"]["f1"] == 1.0
    assert accuracy.main([str(oracle), str(export)]) == 0
    text = capsys.readouterr().out
    assert "CALLS" in text and "name baseline" in text and "DEFINITIONS" in text


def test_recall_by_target_form_when_rows_carry_it() -> None:
    rows = files("a.py") + [dict(call("a.py", 3, "helper", "b.py", 1), target_form="function-declaration"),
                            dict(call("a.py", 4, "run", "b.py", 8), target_form="method")]
    calls = run(rows, NODES, [edge(2, 10, 3)])["calls"]
    assert calls["recall_by_target_form"] == {
        "function-declaration": {"recall": 1.0, "matched_rows": 1, "rows": 1},
        "method": {"recall": 0.0, "matched_rows": 0, "rows": 1},
    }
    assert "recall_by_target_form" not in run(files("a.py"), NODES, [])["calls"]  # jedi rows: no forms


def test_edges_at_undecidable_sites_are_neither_hits_nor_misses() -> None:
    # a.py:3 calls something the compiler could not attribute, named `helper`; a.py:4 one named
    # `other`. knoxidx's edge to helper at line 3 is left out; its edge to helper at line 4
    # (the site's name is not the target's) and its matching edge at line 5 still count.
    rows = files("a.py") + [{"kind": "unresolved", "path": "a.py", "line": 3, "col": 0, "name": "helper"},
                            {"kind": "unresolved", "path": "a.py", "line": 4, "col": 0, "name": "other"},
                            call("a.py", 5, "helper", "b.py", 1)]
    rep = run(rows, NODES, [edge(2, 10, 3), edge(2, 10, 4), edge(2, 10, 5)])
    assert rep["calls"]["overall"]["edges"] == 2 and rep["calls"]["overall"]["matched_edges"] == 1
    assert rep["coverage"]["knoxidx_calls_at_undecidable_sites"] == 1
    assert rep["coverage"]["oracle_undecidable_sites"] == 2


JAVA_NODES = [
    node(1, "Class", "Child", "a.java", 1, 10),
    node(2, "Class", "Base", "b.java", 1, 5),
    node(3, "Interface", "Shape", "s.java", 1, 3),
    node(4, "Interface", "Solid", "s.java", 4, 6),
]


def test_implements_and_interfaces_count_when_the_oracle_reports_relations() -> None:
    def ext(line: int, name: str, target: str, target_line: int, relation: str | None) -> dict[str, Any]:
        row = call("a.java", line, name, target, target_line, kind="extends")
        return row if relation is None else dict(row, relation=relation)

    edges = [edge(1, 2, 1, "a.java", "Extends"), edge(1, 3, 1, "a.java", "Implements"),
             edge(4, 3, 4, "s.java", "Extends")]
    with_relations = [ext(1, "Base", "b.java", 1, "extends"), ext(1, "Shape", "s.java", 1, "implements"),
                      {**call("s.java", 4, "Shape", "s.java", 1, kind="extends"), "relation": "extends"}]
    rep = run(files("a.java", "s.java") + with_relations, JAVA_NODES, edges)["extends"]["overall"]
    assert (rep["edges"], rep["matched_edges"], rep["rows"], rep["matched_rows"]) == (3, 3, 3, 3)
    # rows without a relation (jedi, TypeScript): class extends only, as before
    rep = run(files("a.java", "s.java") + [ext(1, "Base", "b.java", 1, None)], JAVA_NODES, edges)
    assert (rep["extends"]["overall"]["edges"], rep["extends"]["overall"]["precision"]) == (1, 1.0)


def test_extends_edges_at_undecidable_sites_are_left_out_too() -> None:
    rows = files("a.java") + [{"kind": "unresolved", "path": "a.java", "line": 1, "col": 0, "name": "Shape"},
                              {**call("a.java", 1, "Base", "b.java", 1, kind="extends"), "relation": "extends"}]
    edges = [edge(1, 2, 1, "a.java", "Extends"), edge(1, 3, 1, "a.java", "Implements")]
    rep = run(rows, JAVA_NODES, edges)
    assert rep["extends"]["overall"]["precision"] == 1.0 and rep["extends"]["overall"]["edges"] == 1
    assert rep["coverage"]["knoxidx_extends_at_undecidable_sites"] == 1


def test_a_call_of_a_constructor_is_scored_as_one_of_its_class() -> None:
    # the oracles map `super(..)`/`this(..)`/`new T()` to the class; knoxidx may link the
    # constructor (a Function named as its class), or the class and the constructor both
    nodes = NODES + [node(13, "Function", "Widget", "b.py", 6, 6)]
    rows = files("a.py") + [call("a.py", 3, "Widget", "b.py", 5), call("a.py", 4, "Widget", "b.py", 5)]
    rep = run(rows, nodes, [edge(2, 13, 3), edge(2, 11, 4), edge(2, 13, 4)])
    assert rep["calls"]["overall"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "matched_edges": 2,
                                       "edges": 2, "matched_rows": 2, "rows": 2}


def test_a_call_of_a_javascript_constructor_is_scored_as_one_of_its_class() -> None:
    # the TS language service maps `super(..)` to the base class; knoxidx links the class and
    # its `constructor` both: one edge, matched, as for Java
    nodes = [node(1, "File", "a.ts", "a.ts", 1, 9), node(2, "Function", "constructor", "a.ts", 2, 2),
             node(10, "File", "b.ts", "b.ts", 1, 9), node(11, "Class", "Base", "b.ts", 1, 3),
             node(12, "Function", "constructor", "b.ts", 2, 2)]
    rows = files("a.ts", "b.ts") + [call("a.ts", 2, "super", "b.ts", 1, "Base")]
    rep = run(rows, nodes, [edge(2, 11, 2, "a.ts"), edge(2, 12, 2, "a.ts")])
    assert rep["calls"]["overall"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "matched_edges": 1,
                                       "edges": 1, "matched_rows": 1, "rows": 1}
