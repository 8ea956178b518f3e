"""What py-tree-sitter's Python objects cost in the tags query (issue #2).

    python -m bench.native_query [--corpus DIR] [--rounds N] [--out FILE]

Session 17 read the query's ``matches()`` time (0.74-0.97x the parse) as mostly py-tree-sitter
building a dict, lists and a Node per capture for ~1.24M matches, and so called for a native
query runner. This measures it: per language, over every file knoxidx would index, one process,
``time.process_time``, the median of ``--rounds``:

- the parse (trees kept), py-tree-sitter's ``QueryCursor.matches`` with knoxidx's tags query,
- the same matches from ``_tsmatch.c`` (tree-sitter's own query cursor called from C, one tuple
  per match): captures as Nodes, and the reference patterns' captures as plain ints instead,
- a one-pattern query (``(ERROR) @e``), which costs the cursor's walk over every node and
  nothing more.

Before timing it checks that the native matches are py-tree-sitter's (pattern and capture
ranges, for every pattern without a text predicate, which only py-tree-sitter evaluates).
``_tsmatch.c`` is built against the C library in the installed py-tree-sitter's source
distribution (``pip download``, cached in ``bench/.cache/native_query``), so it needs a C
compiler and the package registry once.
"""

from __future__ import annotations

import argparse
import collections
import gc
import importlib.metadata
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tarfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).parent
CACHE = HERE.parent / ".cache" / "native_query"
LAYOUT_VERSIONS = ("0.26.",)  # whose Query and Node struct layout _tsmatch.c was written for
FLAT_ROLES = ("ref", "local", "global", "binding.name")  # what extraction reads as ints only


def build(cache: Path = CACHE) -> ModuleType:
    """``_tsmatch`` compiled against the installed py-tree-sitter's own C library."""
    version = importlib.metadata.version("tree-sitter")
    if not version.startswith(LAYOUT_VERSIONS):
        raise SystemExit(f"_tsmatch.c reads tree-sitter {LAYOUT_VERSIONS} objects; "
                         f"{version} is installed")
    folder = cache / version
    lib = folder / f"tree_sitter-{version}" / "tree_sitter" / "core" / "lib"
    if not lib.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--no-binary", ":all:", f"tree-sitter=={version}", "-d", str(folder)],
                       check=True)
        with tarfile.open(folder / f"tree_sitter-{version}.tar.gz") as archive:
            archive.extractall(folder, filter="data")
    target = folder / f"_tsmatch{sysconfig.get_config_var('EXT_SUFFIX')}"
    source = HERE / "_tsmatch.c"
    if not target.exists() or target.stat().st_mtime < source.stat().st_mtime:
        compiler = (sysconfig.get_config_var("CC") or "cc").split()
        subprocess.run([*compiler, "-O3", "-shared", "-fPIC", "-std=c11", "-fvisibility=hidden",
                        "-D_DEFAULT_SOURCE", "-DTREE_SITTER_HIDE_SYMBOLS",
                        f"-I{lib / 'include'}", f"-I{lib / 'src'}",
                        f"-I{sysconfig.get_paths()['include']}",
                        str(source), str(lib / "src" / "lib.c"), "-o", str(target)], check=True)
    spec = importlib.util.spec_from_file_location("_tsmatch", target)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def corpus_files(root: Path) -> dict[str, list[bytes]]:
    from knoxidx.indexer.discovery import discover

    files: dict[str, list[bytes]] = collections.defaultdict(list)
    for f in discover(root).files:
        files[f.language].append((root / f.path).read_bytes())
    return files


def flat_patterns(query: Any) -> bytes:
    """One byte per pattern: 1 where extraction reads the captures as ints only."""
    from knoxidx.indexer.extract import _role

    flags = bytearray(query.pattern_count)
    for pattern in range(query.pattern_count):
        names = {}
        for capture in range(query.capture_count):
            try:  # py-tree-sitter raises for a capture the pattern does not have
                query.capture_quantifier(pattern, capture)
            except SystemError:
                continue
            names[query.capture_name(capture)] = [None]
        flags[pattern] = _role(names)[0] in FLAT_ROLES
    return bytes(flags)


def same_matches(native: ModuleType, query: Any, trees: list[Any], depth: int) -> int:
    """How many matches were compared; raises where ``native`` and py-tree-sitter differ."""
    from tree_sitter import QueryCursor

    checked = {p for p in range(query.pattern_count) if native.predicate_steps(query, p) == 0}
    capture_id = {query.capture_name(i): i for i in range(query.capture_count)}
    compared = 0
    for tree in trees:
        cursor = QueryCursor(query)
        cursor.set_max_start_depth(depth)
        expected = sorted(
            (p, tuple(sorted((capture_id[name], n.start_byte, n.end_byte)
                             for name, nodes in caps.items() for n in nodes)))
            for p, caps in cursor.matches(tree.root_node) if p in checked)
        got = sorted(
            (m[0], tuple(sorted((m[i], m[i + 1].start_byte, m[i + 1].end_byte)
                                for i in range(1, len(m), 2))))
            for m in native.matches(query, tree.root_node, depth, b"") if m[0] in checked)
        if got != expected:
            raise AssertionError("native matches differ from py-tree-sitter's")
        compared += len(got)
    return compared


def measure(root: Path, rounds: int) -> dict[str, Any]:
    native = build()
    rows: dict[str, Any] = {}
    gc.disable()
    try:
        for language, sources in sorted(corpus_files(root).items()):
            rows[language] = measure_language(native, language, sources, rounds)
            gc.collect()
    finally:
        gc.enable()
    totals = {k: round(sum(r[k] for r in rows.values()), 3)
              for k in ("parse", "py_matches", "native_nodes", "native_flat", "walk_only")}
    return {"corpus": str(root), "rounds": rounds, "languages": rows, "total": totals}


def measure_language(native: ModuleType, language: str, sources: list[bytes],
                     rounds: int) -> dict[str, Any]:
    from tree_sitter import Parser, Query, QueryCursor

    from knoxidx.indexer.extract import MAX_QUERY_DEPTH
    from knoxidx.indexer.languages import query_source, ts_language

    lang = ts_language(language)
    parser = Parser(lang)
    query = Query(lang, query_source(language))
    walk = Query(lang, "(ERROR) @e")
    flat = flat_patterns(query)
    trees = [parser.parse(s) for s in sources]
    compared = same_matches(native, query, trees, MAX_QUERY_DEPTH)

    def py_matches(q: Any = query) -> None:
        for tree in trees:
            cursor = QueryCursor(q)
            cursor.set_max_start_depth(MAX_QUERY_DEPTH)
            cursor.matches(tree.root_node)

    def native_matches(modes: bytes) -> None:
        for tree in trees:
            native.matches(query, tree.root_node, MAX_QUERY_DEPTH, modes)

    runs: dict[str, Any] = {
        "parse": lambda: [parser.parse(s) for s in sources],
        "py_matches": py_matches,
        "native_nodes": lambda: native_matches(b""),
        "native_flat": lambda: native_matches(flat),
        "walk_only": lambda: py_matches(walk),
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.process_time()
            run()
            times[name].append(time.process_time() - start)
    return {"files": len(sources), "matches_compared": compared,
            **{k: round(statistics.median(v), 3) for k, v in times.items()}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.native_query")
    ap.add_argument("--corpus", type=Path,
                    default=Path(os.environ.get("KNOXIDX_CORPUS",
                                                Path.home() / ".cache" / "knoxidx-corpus")))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    result = measure(args.corpus, args.rounds)
    print(f"{'language':12} {'files':>6} {'parse':>7} {'matches':>8} {'native':>7} "
          f"{'flat':>7} {'walk':>7}   (CPU seconds, median of {args.rounds})")
    for language, r in [*result["languages"].items(), ("total", result["total"])]:
        print(f"{language:12} {r.get('files', ''):>6} {r['parse']:7.2f} {r['py_matches']:8.2f} "
              f"{r['native_nodes']:7.2f} {r['native_flat']:7.2f} {r['walk_only']:7.2f}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
