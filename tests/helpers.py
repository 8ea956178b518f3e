"""Shared test helpers: write a small repository, build its index."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from knoxidx.graph import resolve
from knoxidx.index import Index

# the hot modules compiled by mypyc (setup.py): their classes take no monkeypatched methods
COMPILED = not resolve.__file__.endswith(".py")


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content), encoding="utf-8")
    return root


# The ``knoxidx`` console script as a command line: ``script()``, what users run, whose fast
# exit after ``index`` must lose no output.
CLI = [sys.executable, "-c", "from knoxidx.cli import script; script()"]


def run_cli(*args: str, env: dict[str, str] | None = None,
            timeout: float = 120) -> tuple[int, str, str]:
    """The real ``knoxidx`` entry point (``CLI``) in a subprocess: (exit code, stdout, stderr). A
    command still running after ``timeout`` seconds fails the test (subprocess.TimeoutExpired)
    instead of hanging the run."""
    proc = subprocess.run([*CLI, *args],
                          check=False, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    return proc.returncode, proc.stdout, proc.stderr


def calls_with_holders(root: Path) -> set[tuple[str, str, str]]:
    """(calling function, called definition, the class holding it) of every Calls edge."""
    from knoxidx.graph import export

    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(nodes[e["source"]]["name"], nodes[e["target"]]["name"],
                 nodes[e["target"]]["qualified_name"].rsplit(".", 2)[-2])
                for e in export.edges(idx.q) if e["type"] == "Calls"}


def build(root: Path, jobs: int = 1):
    with Index.open(root, create=True) as idx:
        return idx.update(jobs=jobs)


class Backend:
    """Where a test's index lives: the local SQLite file (``url`` None) or a repository of a
    PostgreSQL store; the same test runs against both (the ``backend`` fixture)."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        self.name = "postgres" if url else "sqlite"

    def open(self, root: Path, *, create: bool = False) -> Index:
        return Index.open(root, create=create, store=self.url)

    def build(self, root: Path, jobs: int = 1):
        with self.open(root, create=True) as idx:
            return idx.update(jobs=jobs)


# An undocumented function whose name answers the question, beside documented code that
# repeats the question's words: what the benchmark's stripped doc comments look like.
BILLING = {
    "billing/amounts.py": (
        "def total_amount(invoice):\n"
        "    return sum(line.price * line.quantity for line in invoice.lines)\n"
    ),
    "billing/report.py": (
        '"""Reports on invoices."""\n\n\n'
        "def describe(invoice):\n"
        '    """Describe an invoice for a reader: its lines, then the total amount of the\n'
        "    invoice, as the total amount of an invoice is printed at its foot (the total\n"
        '    amount of each invoice line is shown on that line)."""\n'
        "    return invoice.title\n\n\n"
        "def footer(invoice):\n"
        '    """The foot of a printed invoice: the total amount and the invoice number."""\n'
        "    return invoice.number\n"
    ),
    "billing/model.py": (
        "MAX_TOTAL_AMOUNT = 10 ** 9\n\n\n"
        "class Invoice:\n"
        "    def __init__(self, lines):\n"
        "        self.lines = lines\n"
    ),
}
BILLING_QUESTION = "Returns the total amount of an invoice"


def resolve_every_file(root: Path, load_all_facts: bool = True) -> tuple[dict[str, tuple], Any]:
    """Every file's resolution of an index built at ``root``, as comparable data, from a fresh
    resolver in path order, and the resolver. ``load_all_facts``: the workspace holds every
    file's blob (files come as interfaces), else it reads each file's whole facts from the
    store."""
    from knoxidx.core import heap
    from knoxidx.graph.layout import build_layout
    from knoxidx.graph.store import SQLiteStore
    from knoxidx.graph.workspace import StoreWorkspace
    from knoxidx.parse.discovery import discover

    found = discover(root, 1 << 20)
    layout = build_layout(root, [f.path for f in found.files], found.config_paths)
    store = SQLiteStore.open(root, readonly=True)
    try:
        workspace = StoreWorkspace(store, layout, {})
        workspace.preload(load_all_facts=load_all_facts)
        resolver = resolve.Resolver(workspace)
        out = {}
        with heap.frozen_heap():  # as in an update, where settle() acts
            for path in sorted(store.ok_file_hashes()):
                res = resolver.resolve_file(path)
                assert not res.error, (path, res.error)
                out[path] = (sorted(map(tuple, res.edges)), sorted(map(tuple, res.unresolved)),
                             sorted(res.keys), sorted(res.externals.items()))
        return out, resolver
    finally:
        store.close()


def assert_row_runs(conn: Any) -> None:
    """Every row of the edges, unresolved and lookups tables of an SQLite index lies in the run
    of rowids ``file_rows`` records for its file (the module layer's edges: the pseudo file
    ``MODULE_LAYER_ROWS``), and every run holds only that file's rows, all of them there."""
    from knoxidx.graph.sqlite_schema import MODULE_LAYER_ROWS

    runs = {r[0]: r[1:] for r in conn.execute("SELECT * FROM file_rows")}
    for n, table in enumerate(("edges", "unresolved", "lookups")):
        by_file: dict[int, list[int]] = {}
        for rowid, file_id in conn.execute(f"SELECT rowid, file_id FROM {table}"):
            by_file.setdefault(MODULE_LAYER_ROWS if file_id is None else file_id, []).append(rowid)
        for file_id, rowids in by_file.items():
            lo, hi = runs[file_id][2 * n : 2 * n + 2]
            assert sorted(rowids) == list(range(lo, hi + 1)), (table, file_id, lo, hi)
        for file_id, run in runs.items():
            lo, hi = run[2 * n : 2 * n + 2]
            assert hi < lo or file_id in by_file, (table, file_id, lo, hi)


def assert_edges_out_by_runs(store: Any) -> None:
    """The edges out of every node, as ``GraphQueries.edges`` reads them (from the run of the
    node's file, and those ``OUTSIDE_RUNS`` names through their index), are the edges whose
    source it is: every edge outside ``OUTSIDE_RUNS`` has its source among its own file's
    nodes. ``store``: an SQLiteStore."""
    from knoxidx.graph.queries import GraphQueries
    from knoxidx.graph.sqlite_schema import OUTSIDE_RUNS

    conn = store.conn
    strays = conn.execute(
        f"SELECT type, file_id FROM edges e WHERE NOT ({OUTSIDE_RUNS}) AND NOT EXISTS"
        " (SELECT 1 FROM nodes n WHERE n.id = e.source AND n.file_id = e.file_id)").fetchall()
    assert strays == []
    by_source: dict[int, list[tuple]] = {}
    for row in conn.execute("SELECT e.source, e.target, e.type, e.confidence, f.path, e.line"
                            " FROM edges e LEFT JOIN files f ON f.id = e.file_id"):
        by_source.setdefault(row[0], []).append(row)
    ids = [r[0] for r in conn.execute("SELECT id FROM nodes")]
    got = GraphQueries(store).edges(ids, "out")
    assert sorted(tuple(e.values()) for e in got) == sorted(
        row for node in ids for row in by_source.get(node, []))
