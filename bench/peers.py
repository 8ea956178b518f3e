"""knoxidx side by side with its peers on the same corpus, in the same run.

    python -m bench.peers --corpus DIR [--codegraph BIN] [--gitnexus BIN] [--tsa BIN]
                          [--runs 3] [--symbol NAME] [--accuracy DIR] [--only TOOLS]
                          [--columns cold,edit,query,accuracy] [--out FILE]

The peers are other local code-graph indexers a user could pick instead: codegraph (npm
``@colbymchenry/codegraph``), gitnexus (npm ``gitnexus``) and tree-sitter-analyzer (PyPI). Each
is installed by the user and named by its command (``bench/README.md`` says how); a peer not
given is left out. Every tool runs offline with telemetry and update checks off.

Columns, per tool, on ``--corpus`` (a git repository: a peer may read git):
* cold index: the tool's own "build the index from scratch" command, median of ``--runs``
  timed builds (unobserved, as in ``bench.speed``), and lines/s over the corpus's source lines;
* peak memory: summed PSS of the process tree during one more, sampled build;
* one edited file: the tool's update command after a body edit of one file, committed first
  (median);
* query: a whole "who calls SYMBOL" command (median of 5);
* Calls precision / recall against the cached oracles of ``bench.accuracy_suite`` (jedi for
  Python, the TypeScript service for TypeScript; ``--accuracy DIR``: a directory holding
  copies of the oracle corpora, ``django`` and ``zod``), by (calling function, called
  definition) pair for every tool, and by call site for tools whose graph records the call's
  line (gitnexus does not).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from bench.accuracy import DEF_KINDS, Export, Oracle, considered, evaluate
from bench.accuracy_suite import FULL_PYTHON_MAX_FILES
from bench.accuracy_suite import oracle as run_oracle
from bench.procmon import run_measured
from bench.speed import median, source_files

BENCH = Path(__file__).resolve().parent
KNOXIDX = [sys.executable, "-c", "from knoxidx.cli import run; run()"]
OFFLINE_ENV = {
    "DO_NOT_TRACK": "1", "CODEGRAPH_TELEMETRY": "0", "CODEGRAPH_NO_UPDATE_CHECK": "1",
    "GITNEXUS_TELEMETRY": "0", "NO_COLOR": "1",
}
# Oracle corpora (copies of ~/.cache/knoxidx-corpus/python/django and ts/zod under
# --accuracy) -> (their oracle rows in bench/.cache, the oracle's kind, the files it examines:
# the accuracy suite's sample, so both judge the same call sites)
ORACLES = {
    "django": ("oracle-django.jsonl", "python", FULL_PYTHON_MAX_FILES),
    "zod": ("oracle-zod.jsonl", "ts", None),
}
QUERY_RUNS = 5


@dataclass
class Tool:
    name: str
    build: Callable[[Path], list[str]]  # a cold build of the index
    state_dirs: tuple[str, ...]  # what a cold build starts without
    update: Callable[[Path], list[str]]  # re-index after an edit
    callers: Callable[[Path, str], list[str]]  # who calls a symbol
    calls_export: Callable[[Path], dict[str, Any]] | None = None  # knoxidx-export JSON


def knoxidx_tool() -> Tool:
    def export(root: Path) -> dict[str, Any]:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "export.json"
            subprocess.run([*KNOXIDX, "export", str(root), "-o", str(out)], check=True,
                           capture_output=True)
            return json.loads(out.read_text())

    return Tool(
        "knoxidx",
        build=lambda root: [*KNOXIDX, "index", "--graph-only", str(root)],
        state_dirs=(".knoxidx",),
        update=lambda root: [*KNOXIDX, "index", "--graph-only", str(root)],
        callers=lambda root, symbol: [*KNOXIDX, "callers", symbol, str(root)],
        calls_export=export,
    )


def codegraph_tool(binary: str) -> Tool:
    return Tool(
        "codegraph",
        build=lambda root: [binary, "init", "--yes", str(root)],
        state_dirs=(".codegraph",),
        update=lambda root: [binary, "sync", "--quiet", str(root)],
        callers=lambda root, symbol: [binary, "callers", symbol, "--path", str(root)],
        calls_export=codegraph_export,
    )


def gitnexus_tool(binary: str) -> Tool:
    def export(root: Path) -> dict[str, Any]:
        def cypher(query: str) -> list[list[str]]:
            # into a file: written to a pipe, its answer was cut short at exit
            with tempfile.TemporaryFile("w+") as out:
                subprocess.run([binary, "cypher", query, "--repo", root.name], check=True,
                               stdout=out, stderr=subprocess.DEVNULL, text=True, env=_env())
                out.seek(0)
                table = json.load(out)["markdown"].split("\n")[2:]  # past the header
            return [line[2:-2].split(" | ") for line in table if line.startswith("| ")]

        labels = ", ".join(f"'{label}'" for label in _GITNEXUS_KINDS)
        nodes = [
            # its lines are 0-based
            {"id": node_id, "kind": _GITNEXUS_KINDS[label], "name": name, "path": path,
             "start_line": int(start) + 1, "end_line": int(end) + 1}
            for label, node_id, name, path, start, end in cypher(
                f"MATCH (n) WHERE label(n) IN [{labels}] AND n.startLine IS NOT NULL "
                "RETURN label(n), n.id, n.name, n.filePath, n.startLine, n.endLine")
        ]
        edges = [
            {"source": source, "target": target, "type": "Calls", "confidence": "exact",
             "path": path, "line": None}  # it records no call site
            for source, target, path in cypher(
                "MATCH (a)-[r:CodeRelation]->(b) WHERE r.type = 'CALLS' "
                "RETURN a.id, b.id, a.filePath")
        ]
        return {"nodes": nodes, "edges": edges}

    return Tool(
        "gitnexus",
        build=lambda root: [binary, "analyze", "--force", "--skip-agents-md", str(root)],
        state_dirs=(".gitnexus", ".claude"),  # (it writes agent skill files there)
        update=lambda root: [binary, "analyze", "--skip-agents-md", str(root)],
        callers=lambda root, symbol: [binary, "context", symbol, "--repo", root.name],
        calls_export=export,
    )


_GITNEXUS_KINDS = {"Function": "Function", "Method": "Function", "Constructor": "Function",
                   "Class": "Class", "Struct": "Class", "Interface": "Interface"}


def tsa_tool(binary: str) -> Tool:
    # Its call graph is built by the command that asks for it (no separate index command);
    # "summary" builds the whole graph and prints only counts.
    def graph(root: Path, *args: str) -> list[str]:
        return [binary, "--call-graph", *args, "--project-root", str(root), "--quiet",
                "--output-format", "json"]

    def export(root: Path) -> dict[str, Any]:
        # its public Python API (CallGraph.call_edges: caller, callee, line of the call), run
        # by the interpreter the command is installed with
        python = Path(binary).parent / "python"
        proc = subprocess.run([str(python), "-c", _TSA_EXPORT, str(root)], check=True,
                              capture_output=True, text=True, env=_env())
        return json.loads(proc.stdout)

    return Tool(
        "tree-sitter-analyzer",
        build=lambda root: graph(root, "summary"),
        state_dirs=(".ast-cache", ".tree-sitter-analyzer"),
        update=lambda root: graph(root, "summary"),
        callers=lambda root, symbol: graph(root, "callers", "--call-graph-function", symbol),
        calls_export=export,
    )


_TSA_EXPORT = """
import json, sys
from tree_sitter_analyzer.call_graph import CallGraph
graph = CallGraph(sys.argv[1])
key = lambda f: f"{f.file_path}:{f.start_line}:{f.name}"
nodes = {key(f): {"id": key(f), "kind": "Function", "name": f.name, "path": f.file_path,
                  "start_line": f.start_line, "end_line": f.end_line}
         for f in graph.function_refs()}
edges = [{"source": key(c), "target": key(t), "type": "Calls", "confidence": "exact",
          "path": c.file_path, "line": line} for c, t, line in graph.call_edges()]
print(json.dumps({"nodes": list(nodes.values()), "edges": edges}))
"""


# ---- measurements ---------------------------------------------------------------------

def _env() -> dict[str, str]:
    return {**os.environ, **OFFLINE_ENV}


def _clean(tool: Tool, root: Path) -> None:
    for name in tool.state_dirs:
        shutil.rmtree(root / name, ignore_errors=True)


def _checked(run: Any, what: str) -> Any:
    if run.returncode != 0:
        raise RuntimeError(f"{what} failed ({run.returncode}): {run.stderr[-600:]}")
    return run


def cold_index(tool: Tool, root: Path, runs: int) -> dict[str, Any]:
    times = []
    for _ in range(runs):
        _clean(tool, root)
        times.append(_checked(run_measured(tool.build(root), env=_env(), sample=False),
                              f"{tool.name} build").seconds)
    _clean(tool, root)
    sampled = _checked(run_measured(tool.build(root), env=_env()), f"{tool.name} build")
    return {"seconds": median(times), "all_seconds": times, "peak_mib": sampled.peak_mib}


def edit_one_file(tool: Tool, root: Path, path: Path, runs: int) -> dict[str, Any]:
    """The update command after a body edit of ``path`` (a comment line added on top), then
    again after the edit is undone (untimed), ``runs`` times. Each change is committed before
    the update runs (untimed): gitnexus only sees committed changes ("Already up to date"
    after an edit in the working tree); the other tools do not read git."""
    original = path.read_bytes()
    comment = b"# bench edit\n" if path.suffix == ".py" else b"// bench edit\n"
    times = []

    def change(content: bytes, message: str) -> None:
        path.write_bytes(content)
        if (root / ".git").exists():
            subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost",
                            "commit", "-q", "-m", message, "--", str(path)], cwd=root,
                           check=True, capture_output=True)

    undo_failed = ""
    try:
        for _ in range(runs):
            change(comment + original, "bench edit")
            times.append(_checked(run_measured(tool.update(root), env=_env(), sample=False),
                                  f"{tool.name} update").seconds)
            change(original, "bench edit undone")
            undo = run_measured(tool.update(root), env=_env(), sample=False)
            if undo.returncode != 0:  # the timed update stands; its index may not
                undo_failed = f"update after the undo failed ({undo.returncode}): " \
                              f"{undo.stderr[-300:]}"
                break
    finally:
        if path.read_bytes() != original:
            change(original, "bench edit undone")
    out: dict[str, Any] = {"seconds": median(times), "all_seconds": times}
    if undo_failed:
        out["undo_failed"] = undo_failed
    return out


def query(tool: Tool, root: Path, symbol: str) -> dict[str, Any]:
    """A whole "who calls ``symbol``" command, QUERY_RUNS times. Not required to exit 0: a name
    with several definitions is answered with the candidates (knoxidx exits 4 then)."""
    times, codes, answered = [], set(), False
    for _ in range(QUERY_RUNS):
        run = run_measured(tool.callers(root, symbol), env=_env(), sample=False)
        times.append(run.seconds)
        codes.add(run.returncode)
        answered = answered or symbol.rsplit(".", 1)[-1] in run.stdout + run.stderr
    return {"seconds": median(times), "all_seconds": times, "answered": answered,
            "exit_codes": sorted(codes)}


def accuracy(tool: Tool, corpora: Path) -> dict[str, Any]:
    """Calls precision / recall of ``tool`` on each oracle corpus under ``corpora``."""
    if tool.calls_export is None:
        return {}
    out: dict[str, Any] = {}
    for name in ORACLES:
        root = corpora / name
        if not root.is_dir():
            print(f"accuracy: no {root}; {tool.name} is not judged on {name}", file=sys.stderr)
            continue
        oracle = oracle_rows(name, root)
        _clean(tool, root)
        _checked(run_measured(tool.build(root), env=_env(), sample=False), f"{tool.name} build")
        data = tool.calls_export(root)
        _clean(tool, root)
        graph = Export(data)
        judged = _oracle(oracle)
        out[name] = {"pairs": pair_accuracy(judged, graph)}
        if any(edge.get("line") is not None for edge in data["edges"]):
            calls = evaluate(judged, graph)["calls"]["overall"]
            out[name]["sites"] = {key: calls[key] for key in ("precision", "recall", "edges",
                                                              "rows")}
    return out


def oracle_rows(name: str, root: Path, cache_dir: Path = BENCH / ".cache") -> Path:
    """The oracle's rows for the corpus copy ``root``, made on first use (jedi's per-file
    results are cached by the accuracy suite, so a second corpus copy costs little). Before,
    a missing file left every tool's accuracy columns empty without a word."""
    file, kind, max_files = ORACLES[name]
    path = cache_dir / file
    if not path.is_file():
        print(f"accuracy: building the {name} oracle ({kind}) into {path}", file=sys.stderr)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".part")
        run_oracle(root, kind, partial, max_files)
        partial.replace(path)
    return path


@cache
def _oracle(path: Path) -> Oracle:
    """An oracle's rows, read once for every tool judged against them."""
    return Oracle.load(path)


def pair_accuracy(oracle: Oracle, graph: Export) -> dict[str, Any]:
    """Calls judged as (calling function, called definition) pairs, whatever the line: the
    measure a graph without call sites (gitnexus) can be given, and that every tool gets too.

    An oracle row's caller is the tool's innermost Function node around the call site (the
    file when none); its callee is the tool's definition node for the row's target, as in
    ``bench.accuracy`` (a row whose target the tool lacks can never match). A tool's Calls
    edge counts when its site is in a judged file and its target is a definition in the
    corpus; its caller is its source when that is a Function, else the site's file. Both sides
    are sets of pairs: precision = matched pairs / the tool's pairs, recall = matched pairs /
    the oracle's pairs."""
    def caller_at(path: str, line: int) -> Any:
        function = graph.function_containing(path, line)
        return function.id if function is not None else ("file", path)

    rows = set()
    for row in oracle.calls:
        target = graph.definition_at(row.target_path, row.target_name, row.target_line)
        callee = target.id if target is not None else ("missing", row.target_path,
                                                        row.target_line)
        rows.add((caller_at(row.path, row.line), callee))
    pairs = set()
    for edge in considered(graph, oracle.files, frozenset({"Calls"}), DEF_KINDS):
        source = graph.nodes.get(edge.source)
        caller = edge.source if source is not None and source.kind == "Function" \
            else ("file", edge.path)
        pairs.add((caller, edge.target))
    matched = len(rows & pairs)
    return {"precision": matched / len(pairs) if pairs else None,
            "recall": matched / len(rows) if rows else None,
            "pairs": len(pairs), "rows": len(rows)}


# ---- codegraph's graph as a knoxidx export ---------------------------------------------

_CODEGRAPH_KINDS = {"function": "Function", "method": "Function", "class": "Class",
                    "struct": "Class", "interface": "Interface"}


def codegraph_export(root: Path) -> dict[str, Any]:
    """codegraph's nodes and its call edges (``calls``, and ``instantiates`` for constructor
    calls, which knoxidx also counts as Calls to the class) in the shape ``bench.accuracy``
    reads. The site's path is the calling node's file, as in codegraph's own answers."""
    db = sqlite3.connect(f"file:{root / '.codegraph' / 'codegraph.db'}?mode=ro", uri=True)
    try:
        nodes = [
            {"id": node_id, "kind": _CODEGRAPH_KINDS.get(kind, kind.title()), "name": name,
             "path": path, "start_line": start, "end_line": end}
            for node_id, kind, name, path, start, end in db.execute(
                "select id, kind, name, file_path, start_line, end_line from nodes")
        ]
        edges = [
            {"source": source, "target": target, "type": "Calls", "confidence": "exact",
             "path": path, "line": line}
            for source, target, path, line in db.execute(
                "select e.source, e.target, s.file_path, e.line from edges e "
                "join nodes s on s.id = e.source "
                "where e.kind in ('calls', 'instantiates') and e.line is not null")
        ]
    finally:
        db.close()
    return {"nodes": nodes, "edges": edges}


# ---- the run -----------------------------------------------------------------------------

def _edit_target(root: Path) -> Path:
    """A mid-sized source file, the same for every tool."""
    files = sorted(source_files(root))
    sized = sorted((p for p, _ in files), key=lambda p: (root / p).stat().st_size)
    return root / sized[len(sized) // 2]


COLUMNS = ("cold", "edit", "query", "accuracy")


def run(corpus: Path, tools: list[Tool], runs: int, symbol: str,
        accuracy_dir: Path | None, columns: tuple[str, ...] = COLUMNS) -> dict[str, Any]:
    files = source_files(corpus)
    lines = sum((corpus / p).read_bytes().count(b"\n") for p, _ in files)
    target = _edit_target(corpus)
    results: dict[str, Any] = {"corpus": str(corpus), "files": len(files), "lines": lines,
                               "edited_file": str(target.relative_to(corpus)),
                               "symbol": symbol, "tools": {}}
    for tool in tools:
        row: dict[str, Any] = results["tools"].setdefault(tool.name, {})
        try:
            for column in columns:
                if column == "cold":
                    row["cold"] = cold_index(tool, corpus, runs)
                    row["lines_per_s"] = lines / row["cold"]["seconds"]
                elif column in ("edit", "query"):
                    if not any((corpus / name).exists() for name in tool.state_dirs):
                        _checked(run_measured(tool.build(corpus), env=_env(), sample=False),
                                 f"{tool.name} build")
                    row[column] = (edit_one_file(tool, corpus, target, runs) if column == "edit"
                                   else query(tool, corpus, symbol))
                elif column == "accuracy" and accuracy_dir is not None:
                    row["accuracy"] = accuracy(tool, accuracy_dir)
                # each figure as soon as it is measured: a later failure loses nothing
                print(json.dumps({tool.name: row}), file=sys.stderr, flush=True)
        except Exception as exc:  # noqa: BLE001 - one tool's failure keeps the others' rows
            row["error"] = f"{type(exc).__name__}: {exc}"
            print(json.dumps({tool.name: row}), file=sys.stderr, flush=True)
        finally:
            _clean(tool, corpus)
    return results


def markdown(results: dict[str, Any]) -> str:
    rows = [
        "| tool | cold index s | lines/s | peak MB | one edited file s | callers command s "
        "| Calls P / R by site: django, zod | by function pair: django, zod |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in results["tools"].items():
        acc = row.get("accuracy", {})

        def pr(measure: str, acc: dict[str, Any] = acc) -> str:
            cells = []
            for corpus in ORACLES:
                a = acc.get(corpus, {}).get(measure)
                cells.append(f"{a['precision']:.2f} / {a['recall']:.2f}" if a else "n/a")
            return ", ".join(cells)

        edit = row.get("edit", {}).get("seconds", float("nan"))
        query_s = row.get("query", {}).get("seconds", float("nan"))
        cold = row.get("cold", {})
        rows.append(
            f"| {name} | {cold.get('seconds', float('nan')):.1f} "
            f"| {row.get('lines_per_s', float('nan')):,.0f} "
            f"| {cold.get('peak_mib', float('nan')):.0f} | {edit:.2f} | {query_s:.2f} "
            f"| {pr('sites')} | {pr('pairs')} |")
        if "error" in row:
            rows.append(f"| {name}: stopped by | {row['error'][:200]} | | | | | | |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.peers", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--codegraph", help="the codegraph command")
    parser.add_argument("--gitnexus", help="the gitnexus command")
    parser.add_argument("--tsa", help="the tree-sitter-analyzer command")
    parser.add_argument("--runs", type=int, default=3)
    # defined once in the corpus of bench/README.md (django's migrations), 31 call sites
    parser.add_argument("--symbol", default="add_operation")
    parser.add_argument("--accuracy", type=Path, help="copies of the oracle corpora")
    parser.add_argument("--only", help="comma-separated tool names to run")
    parser.add_argument("--columns", default=",".join(COLUMNS),
                        help=f"comma-separated, of {', '.join(COLUMNS)} (default: all)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    tools = [knoxidx_tool()]
    if args.codegraph:
        tools.append(codegraph_tool(args.codegraph))
    if args.gitnexus:
        tools.append(gitnexus_tool(args.gitnexus))
    if args.tsa:
        tools.append(tsa_tool(args.tsa))
    if args.only:
        wanted = set(args.only.split(","))
        tools = [t for t in tools if t.name in wanted]
    results = run(args.corpus.resolve(), tools, args.runs, args.symbol, args.accuracy,
                  tuple(args.columns.split(",")))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
