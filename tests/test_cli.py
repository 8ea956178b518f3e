"""The CLI: every command, --json shapes, and one-line errors with exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner

from knoxidx.cli import main
from knoxidx.graph.export import flat_node
from tests.helpers import run_cli as run

FILES = {
    "app/__init__.py": "",
    "app/config.py": """\
        def parse_config(path):
            return load(path)

        def load(path):
            return path
        """,
    "app/service.py": """\
        from app.config import parse_config

        class Service:
            def start(self):
                return parse_config("a.toml")

        def start():
            return Service().start()
        """,
    "main.py": "from app.service import start\n\ndef main():\n    start()\n",
}


@pytest.fixture
def indexed(repo) -> Path:
    root = repo(FILES)
    result = CliRunner().invoke(main, ["index", "--jobs", "1", str(root)])
    assert result.exit_code == 0, result.output
    return root


def test_index_json_report(repo) -> None:
    root = repo(FILES)
    result = CliRunner().invoke(main, ["index", "--json", "--jobs", "1", str(root)])
    data = json.loads(result.output)
    assert data["files"] == 4 and data["added"] == 4 and data["skipped"] == {}


@pytest.mark.heavy
def test_index_ends_its_process_without_the_interpreter_teardown(repo) -> None:
    """The `knoxidx` script's index closes all it opened, then leaves at once (os._exit, its
    output flushed), skipping the teardown that frees every object of the update: a handler
    of Python's exit does not run after it, as it does after any other command. run(), called
    in a process of the caller's (tests do), returns: it ended pytest (exit code 0) once."""
    root = repo(FILES)
    script = ("import atexit; atexit.register(print, 'TEARDOWN', flush=True); "
              "from knoxidx.cli import script; script()")
    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                              text=True, timeout=120, check=False)

    done = cli("index", "--json", "--jobs", "1", str(root))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["added"] == 4  # every byte of the report came out
    assert "TEARDOWN" not in done.stdout
    again = cli("index", "--jobs", "1", str(root))  # the human report too, and a no-op update
    assert again.returncode == 0 and "TEARDOWN" not in again.stdout and again.stdout.strip()
    assert run("callers", "parse_config", "--json", str(root))[0] == 0  # the index is whole
    other = cli("stats", "--json", str(root))
    assert other.returncode == 0 and other.stdout.rstrip().endswith("TEARDOWN")
    assert not (root / ".knoxidx" / "index.db-wal").exists() or (
        root / ".knoxidx" / "index.db-wal").stat().st_size == 0
    in_process = subprocess.run([sys.executable, "-c", (
        "import sys; from knoxidx.cli import run; "
        f"sys.argv = ['knoxidx', 'index', '--jobs', '1', '--json', {str(root)!r}]; "
        "run(); print('AFTER')")], capture_output=True, text=True, timeout=120, check=False)
    assert in_process.returncode == 0 and in_process.stdout.rstrip().endswith("AFTER")


def test_callers_human_and_json(indexed: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["callers", "parse_config", str(indexed)]).output
    assert "app.service.Service.start" in out and "app/service.py:5" in out
    data = json.loads(runner.invoke(main, ["callers", "parse_config", str(indexed), "--json"]).output)
    assert data["symbol"]["qualified_name"] == "app.config.parse_config"
    assert [(c["qualified_name"], c["site"]["line"], c["confidence"]) for c in data["callers"]] == [
        ("app.service.Service.start", 5, "exact")]


def test_callers_depth_and_impact(indexed: Path) -> None:
    runner = CliRunner()
    data = json.loads(runner.invoke(
        main, ["callers", "app.config.load", str(indexed), "--depth", "4", "--json"]).output)
    assert [c["name"] for c in data["callers"]] == ["parse_config", "start", "start", "main"]
    impact = json.loads(runner.invoke(
        main, ["impact", "load", str(indexed), "--depth", "4", "--json"]).output)
    assert "main.py" in impact["files"]


def test_symbol_forms(indexed: Path) -> None:
    runner = CliRunner()
    for spec in ("app.config.load", "config.load", "app/config.py:4"):
        data = json.loads(runner.invoke(main, ["callers", spec, str(indexed), "--json"]).output)
        assert data["symbol"]["qualified_name"] == "app.config.load", spec


def test_errors_are_one_line_with_exit_codes(indexed: Path, tmp_path: Path) -> None:
    code, out, err = run("callers", "start", str(indexed))
    assert code == 4 and "names 2 symbols" in err and "Traceback" not in err
    assert "app.service.Service.start" in err and "app.service.start" in err
    code, _, err = run("callers", "nope_nothing", str(indexed))
    assert code == 3 and err.count("\n") == 1 and "Traceback" not in err
    # an empty one is bad input, not an unknown symbol with "did you mean" five random names
    for command in ("callers", "refs", "impact", "symbols", "deps"):
        code, _, err = run(command, " ", str(indexed))
        assert code == 2 and err.count("\n") == 1 and " is empty" in err, (command, err)
    code, _, err = run("stats", str(tmp_path / "does-not-exist"))
    assert code == 2 and "no such directory" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run("symbols", "x", str(empty))
    assert code == 2 and "knoxidx index" in err


def test_refs_deps_stats_symbols(indexed: Path) -> None:
    runner = CliRunner()
    refs = json.loads(runner.invoke(main, ["refs", "Service", str(indexed), "--json"]).output)
    assert set(refs["incoming"]) == {"CalledBy", "DefinedIn", "ContainedIn"}
    deps = json.loads(runner.invoke(main, ["deps", "app/service.py", str(indexed), "--json"]).output)
    assert [d["path"] for d in deps["dependencies"]] == ["app/config.py"]
    rdeps = json.loads(runner.invoke(
        main, ["deps", "app/service.py", str(indexed), "--reverse", "--json"]).output)
    assert [d["path"] for d in rdeps["dependencies"]] == ["main.py"]
    stats = json.loads(runner.invoke(main, ["stats", str(indexed), "--json"]).output)
    assert stats["nodes"]["Function"] == 5 and stats["edges"]["Calls"] == 5
    syms = json.loads(runner.invoke(main, ["symbols", "pars", str(indexed), "--json"]).output)
    assert [s["name"] for s in syms["symbols"]] == ["parse_config"] and syms["total"] == 1
    kinds = json.loads(runner.invoke(
        main, ["symbols", "Service", str(indexed), "--kind", "Class", "--json"]).output)
    assert len(kinds["symbols"]) == 1


def test_export_formats(indexed: Path) -> None:
    runner = CliRunner()
    data = json.loads(runner.invoke(main, ["export", str(indexed)]).output)
    node_keys = {"id", "kind", "name", "qualified_name", "path", "start_line", "end_line",
                 "language"}
    assert node_keys <= set(data["nodes"][0])
    assert {"source", "target", "type", "confidence", "path", "line"} == set(data["edges"][0])
    ids = {n["id"] for n in data["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in data["edges"])
    types = {e["type"] for e in data["edges"]}
    assert {"Calls", "Imports", "Defines", "Contains", "DependsOn"} <= types
    graphml = runner.invoke(main, ["export", str(indexed), "--format", "graphml"]).stdout_bytes
    assert ElementTree.fromstring(graphml).tag.endswith("graphml")
    dot = runner.invoke(main, ["export", str(indexed), "--format", "dot"]).output
    assert dot.startswith("digraph knoxidx {") and "->" in dot


def test_export_carries_a_functions_signature_as_data(repo) -> None:
    """JSON: a function's parameters, return type, type parameters and decorators as ``show``
    gives them; GraphML: the same, the lists as JSON text (its attributes are scalars)."""
    import networkx as nx

    root = repo({"m.py": "@cached\ndef scale[T](value: T, factor: int = 2, *rest) -> T:\n"
                         "    return value\n\n\nclass Box:\n    pass\n"})
    assert run("index", "--jobs", "1", str(root))[0] == 0
    data = json.loads(run("export", str(root))[1])
    scale = next(n for n in data["nodes"] if n["name"] == "scale")
    assert scale["parameters"] == [
        {"name": "value", "type": "T", "default": None, "kind": "positional"},
        {"name": "factor", "type": "int", "default": "2", "kind": "positional"},
        {"name": "rest", "type": None, "default": None, "kind": "variadic"}]
    assert (scale["returns"], scale["type_parameters"], scale["decorators"]) == \
        ("T", ["T"], ["cached"])
    box = next(n for n in data["nodes"] if n["name"] == "Box")
    assert "parameters" not in box and "returns" not in box
    code, _, _ = run("export", str(root), "--format", "graphml", "-o", str(root / "g.graphml"))
    assert code == 0
    graph = nx.read_graphml(root / "g.graphml", force_multigraph=True)
    attributes = graph.nodes[str(scale["id"])]
    assert json.loads(attributes["parameters"]) == scale["parameters"]
    assert attributes["returns"] == "T" and json.loads(attributes["decorators"]) == ["cached"]
    assert "parameters" not in graph.nodes[str(box["id"])]


def test_the_same_graph_exports_the_same_bytes_however_its_rows_were_written(
        indexed: Path, tmp_path: Path) -> None:
    """An update appends an edited file's edges and nodes anew, so its rows sit elsewhere than
    a clean build's: the export is ordered, not in storage order, and so is byte for byte the
    same as the clean build's of the same tree."""
    import shutil

    service = indexed / "app" / "service.py"
    service.write_text("# moved down a line\n" + service.read_text())
    runner = CliRunner()
    assert runner.invoke(main, ["index", "--jobs", "1", str(indexed)]).exit_code == 0
    clean = tmp_path / "clean"
    shutil.copytree(indexed, clean, ignore=shutil.ignore_patterns(".knoxidx"))
    assert runner.invoke(main, ["index", "--jobs", "1", str(clean)]).exit_code == 0
    for fmt in ("json", "dot"):
        updated = runner.invoke(main, ["export", str(indexed), "--format", fmt]).output
        rebuilt = runner.invoke(main, ["export", str(clean), "--format", fmt]).output
        assert updated == rebuilt, fmt


def test_verify_and_find_index_upwards(indexed: Path, monkeypatch) -> None:
    monkeypatch.chdir(indexed / "app")
    result = CliRunner().invoke(main, ["verify", "--json"])
    data = json.loads(result.output)
    assert data["equal"] and data["integrity"] == "ok"


def test_symbols_takes_wildcards(indexed: Path) -> None:
    runner = CliRunner()

    def names(pattern: str, *extra: str) -> list[str]:
        out = runner.invoke(main, ["symbols", pattern, str(indexed), "--json", *extra]).output
        return sorted(s["qualified_name"] for s in json.loads(out)["symbols"])

    assert names("parse*") == ["app.config.parse_config"]
    assert names("*config", "--kind", "Function") == ["app.config.parse_config"]
    assert "app.config" in names("*config")  # the module too
    assert names("st?rt") == ["app.service.Service.start", "app.service.start"]
    assert names("parse_*") == ["app.config.parse_config"]  # `_` is itself, not a wildcard
    assert names("pars_config*") == []


def test_modules_print_without_a_made_up_location(indexed: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["symbols", "config", str(indexed), "--kind", "Module"]).output
    assert out.split() == ["Module", "app.config"]
    out = runner.invoke(main, ["refs", "app.config", str(indexed)]).output
    assert out.startswith("app.config (Module)\n") and "None" not in out


def test_wildcards_mean_the_same_on_both_stores(repo, backend) -> None:
    root = repo(FILES)
    backend.build(root)
    with backend.open(root) as idx:
        def names(pattern: str) -> list[str]:
            return sorted(s["qualified_name"] for s in idx.symbols(pattern))

        assert names("PARSE*") == names("parse*") == ["app.config.parse_config"]
        assert names("st?rt") == ["app.service.Service.start", "app.service.start"]
        assert names("pars_config*") == [] and names("100%*") == []


def test_a_file_where_the_index_directory_goes_is_a_clear_error(repo) -> None:
    """``.knoxidx`` that is a file (a stray download, a bad copy): "cannot use
    .knoxidx/index.db (File exists)" before; now what is wrong and what to do."""
    root = repo({"a.py": "def a():\n    return 1\n"})
    (root / ".knoxidx").write_text("not a directory\n")
    code, _, err = run("index", "--jobs", "1", str(root))
    assert code == 7 and err.count("\n") == 1 and "Traceback" not in err
    assert ".knoxidx is a file, not the directory knoxidx keeps its index in" in err


def test_graphml_export_is_streamed_typed_and_reads_back(repo) -> None:
    """networkx's writer built the whole document in memory (2.9 GB for the benchmark
    corpus), declared ``line`` and ``start_line`` both as numbers and as strings (a missing
    value became ""), and wrote a terminal escape in a doc comment as is, which no XML parser
    reads.
    The streamed GraphML reads back with networkx as the JSON export's graph, typed."""
    import networkx as nx

    root = repo({"m.py": 'def f():\n    """An \x1b[1mescape\x1b[0m."""\n    return g()\n\n\n'
                         "def g():\n    return 1\n", "n.py": "import m\n"})
    assert run("index", "--jobs", "1", str(root))[0] == 0
    data = json.loads(run("export", str(root))[1])
    code, _, _ = run("export", str(root), "--format", "graphml", "-o", str(root / "g.graphml"))
    assert code == 0
    graph = nx.read_graphml(root / "g.graphml", force_multigraph=True)
    assert {int(n) for n in graph.nodes} == {n["id"] for n in data["nodes"]}
    def as_xml(value: object) -> object:  # what XML 1.0 can hold
        return re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f]", "\ufffd", value) \
            if isinstance(value, str) else value

    for node in data["nodes"]:
        assert graph.nodes[str(node["id"])] == {k: as_xml(v) for k, v in flat_node(node).items()
                                                if k != "id" and v is not None}
    assert graph.nodes[str(next(n["id"] for n in data["nodes"] if n["name"] == "f"))][
        "cyclomatic"] == 1  # a function's complexity, as attributes
    edges = sorted((int(s), int(t), a["type"], a["confidence"], a.get("path"), a.get("line"))
                   for s, t, a in graph.edges(data=True))
    assert edges == sorted((e["source"], e["target"], e["type"], e["confidence"], e["path"],
                            e["line"]) for e in data["edges"])
    from knoxidx.graph.export import to_networkx
    from knoxidx.index import Index

    with Index.open(root) as idx:
        direct = to_networkx(idx.q)
    assert {str(n): {k: as_xml(v) for k, v in a.items()} for n, a in direct.nodes(data=True)} \
        == dict(graph.nodes(data=True))
    f = next(n for n in data["nodes"] if n["name"] == "f")
    assert f["doc"] == "An \x1b[1mescape\x1b[0m."
    assert graph.nodes[str(f["id"])]["doc"] == "An \ufffd[1mescape\ufffd[0m."


def test_a_symbol_is_listed_at_the_depth_it_is_first_reached(repo) -> None:
    # `caller` calls `target` itself and through `helper`: it is impacted at depth 1, and its
    # path through `helper` (depth 2) added it again, as did `rec`'s call of itself. Calls at
    # one depth still each have their entry (each call site).
    root = repo({"m.py": """\
        def target():
            return 1

        def helper():
            return target()

        def caller():
            target()
            target()
            return helper()

        def rec(n):
            return rec(n - 1) if n else target()
        """})
    assert CliRunner().invoke(main, ["index", "--jobs", "1", str(root)]).exit_code == 0
    impact = json.loads(CliRunner().invoke(
        main, ["impact", "target", str(root), "--depth", "3", "--json"]).output)
    assert sorted((h["name"], h["depth"], h["site"]["line"]) for h in impact["impacted"]) == [
        ("caller", 1, 8), ("caller", 1, 9), ("helper", 1, 5), ("rec", 1, 13)]
    callers = json.loads(CliRunner().invoke(
        main, ["callers", "rec", str(root), "--depth", "2", "--json"]).output)
    # a recursive function is its own caller, once
    assert [(h["name"], h["depth"]) for h in callers["callers"]] == [("rec", 1)]


def test_choices_are_taken_in_any_case(indexed: Path) -> None:
    # `--kind class`, `--format GraphML` and `--mode Lexical` were refused ("'class' is not one
    # of 'Function', 'Class', ..."): a person types the word, not the enum's spelling
    runner = CliRunner()
    result = runner.invoke(main, ["symbols", "Service", str(indexed), "--kind", "class", "--json"])
    assert result.exit_code == 0, result.output
    assert [(s["name"], s["kind"]) for s in json.loads(result.output)["symbols"]] == \
        [("Service", "Class")]
    result = runner.invoke(main, ["export", str(indexed), "--format", "GraphML"])
    assert result.exit_code == 0 and result.output.startswith("<?xml"), result.output[:200]
    result = runner.invoke(main, ["search", "parse config", str(indexed), "--mode", "Lexical",
                                  "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["mode"] == "lexical"


def test_verify_counts_every_difference_and_shows_a_sample(tmp_path: Path) -> None:
    """The human output gave the sample's length (at most 20) as the number of rows missing;
    it gives the true count, and the JSON has each count beside its sample."""
    import sqlite3

    source = "".join(f"def f{i}():\n    return f{i + 1}()\n\n" for i in range(30))
    (tmp_path / "chain.py").write_text(source + "def f30():\n    return 0\n")
    runner = CliRunner()
    assert runner.invoke(main, ["index", "--graph-only", str(tmp_path)]).exit_code == 0
    with sqlite3.connect(tmp_path / ".knoxidx" / "index.db") as db:
        gone = [row[0] for row in db.execute("SELECT id FROM nodes WHERE kind = 'Function'")]
        marks = ",".join("?" * len(gone))
        edges = db.execute(f"DELETE FROM edges WHERE source IN ({marks}) OR target IN ({marks})",
                           gone + gone).rowcount
        db.execute(f"DELETE FROM nodes WHERE id IN ({marks})", gone)
    assert len(gone) == 31 and edges == 30  # the calls f0 -> f1 ... f29 -> f30
    data = json.loads(runner.invoke(main, ["verify", "--json", str(tmp_path)]).output)
    assert (data["missing_nodes_count"], len(data["missing_nodes"])) == (31, 20)
    # the calls, and each function's place in its module
    assert data["missing_edges_count"] > edges and len(data["missing_edges"]) == 20
    assert data["extra_nodes_count"] == data["extra_edges_count"] == 0 and not data["equal"]
    human = runner.invoke(main, ["verify", str(tmp_path)])
    assert human.exit_code == 1
    assert "missing_nodes: 31, the first 3: [" in human.output
    assert f"missing_edges: {data['missing_edges_count']}, the first 3: [" in human.output
