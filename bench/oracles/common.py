"""Plumbing shared by the accuracy oracles: file listing, subsets, caching, JSONL.

Why this exists: the oracles (jedi for Python, the TypeScript language service
for TS/JS) are slow -- minutes to tens of minutes per corpus -- while the
benchmark is rerun constantly.  So every oracle

* lists the corpus files deterministically (sorted repo-relative posix paths),
* can run on a deterministic subset (``--max-files``) for a quick mode,
* caches its per-file results under ``bench/.cache/oracles/<oracle>/<key>/``
  where ``key`` fingerprints everything the answer depends on: the absolute
  corpus path, the path and content hash of *every* file the tool can see
  (a call in file A resolves into file B, so editing B must invalidate A),
  the tool version and the oracle's own source.  A rerun over an unchanged
  corpus is therefore a cache read, and an interrupted run resumes.

Rows are plain dicts written one JSON object per line.  Every oracle also
writes one ``{"kind": "file", "path": ...}`` row per file it examined so the
comparison knows which files were covered even when a file produced no rows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent.parent
CACHE_ROOT = BENCH_DIR / ".cache" / "oracles"

# Directories never worth indexing (vendored deps, VCS metadata, build output).
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".tox"})

Row = dict[str, object]


def list_files(root: Path, suffixes: Sequence[str], exclude_suffixes: Sequence[str] = ()) -> list[str]:
    """Sorted repo-relative posix paths under ``root`` ending in one of ``suffixes``."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in filenames:
            if name.endswith(tuple(suffixes)) and not name.endswith(tuple(exclude_suffixes)):
                found.append((Path(dirpath) / name).relative_to(root).as_posix())
    return sorted(found)


def select_subset(paths: Sequence[str], max_files: int | None, mode: str = "stride") -> list[str]:
    """Deterministic subset of the (sorted) ``paths``.

    ``stride`` takes every k-th path (k = ceil(len/N)) so the sample spans the
    whole tree -- at most N paths, possibly fewer (885 paths, N=100 -> 99);
    ``first`` takes the first N sorted paths (one corner of the tree, but
    stable when files are added at the end).
    """
    if max_files is None or max_files >= len(paths):
        return list(paths)
    if max_files <= 0:
        return []
    if mode == "first":
        return list(paths[:max_files])
    if mode != "stride":
        raise ValueError(f"unknown subset mode {mode!r}")
    step = math.ceil(len(paths) / max_files)
    return list(paths[::step][:max_files])


def file_digest(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


def corpus_key(root: Path, paths: Iterable[str], salt: Iterable[str]) -> str:
    """Fingerprint of the corpus location, every visible file and the oracle itself."""
    h = hashlib.sha256()
    h.update(str(root.resolve()).encode())
    for s in salt:
        h.update(b"\0salt\0" + s.encode())
    for rel in sorted(paths):
        h.update(b"\0" + rel.encode() + b"\0" + file_digest(root / rel).encode())
    return h.hexdigest()[:24]


def source_digest(*files: Path) -> str:
    """Hash of oracle source files, so editing an oracle invalidates its cache."""
    h = hashlib.sha256()
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


class FileCache:
    """One JSON file of rows per corpus file, inside a directory named by the corpus key."""

    def __init__(self, oracle: str, key: str) -> None:
        self.dir = CACHE_ROOT / oracle / key

    def _entry(self, rel: str) -> Path:
        return self.dir / (hashlib.sha1(rel.encode()).hexdigest() + ".json")

    def get(self, rel: str) -> list[Row] | None:
        try:
            return json.loads(self._entry(rel).read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def put(self, rel: str, rows: list[Row]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        entry = self._entry(rel)
        tmp = entry.with_suffix(".tmp")
        tmp.write_text(json.dumps(rows, separators=(",", ":")))
        tmp.replace(entry)  # atomic: a killed run never leaves a half-written entry


def write_jsonl(out: Path, rows: Iterable[Row]) -> int:
    out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w") as fh:
        for row in rows:
            fh.write(json.dumps(row, separators=(",", ":")) + "\n")
            n += 1
    tmp.replace(out)
    return n


def read_jsonl(path: Path) -> Iterator[Row]:
    with path.open() as fh:
        for line in fh:
            line = line.strip()
            if line:
                yield json.loads(line)


def count_kinds(rows: Iterable[Row]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        k = str(row["kind"])
        counts[k] = counts.get(k, 0) + 1
    return dict(sorted(counts.items()))


def parse_rows(text: str) -> dict[str, list[Row]]:
    """Rows grouped by file, ``file`` row first, from output where each file's ``file`` row
    comes last; a file whose ``file`` row is missing (the process died while writing it)
    is left out, so it is never cached half done."""
    by_file: dict[str, list[Row]] = {}
    pending: list[Row] = []
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            break  # truncated tail of a killed process
        if row["kind"] == "file":
            by_file[str(row["path"])] = [row, *pending]
            pending = []
        else:
            pending.append(row)
    return by_file


# Runs the compiler over every file of the corpus (repo-relative paths), examining some of
# them in a scratch directory: their rows grouped by file.
WholeProgramRunner = Callable[[Path, list[str], list[str], Path], dict[str, list[Row]]]


def run_whole_program_oracle(name: str, corpus: Path, out: Path, suffixes: Sequence[str],
                             salt: Sequence[str], runner: WholeProgramRunner,
                             max_files: int | None = None, subset: str = "stride",
                             use_cache: bool = True) -> dict[str, object]:
    """A compiler oracle's run (javac, go/types): the compiler sees every file of the corpus
    at once and examines the chosen ones not cached yet. Writes OUT.jsonl; returns stats."""
    corpus = corpus.resolve()
    t0 = time.perf_counter()
    files = list_files(corpus, suffixes)
    chosen = select_subset(files, max_files, subset)
    cache = FileCache(name, corpus_key(corpus, files, salt))
    results: dict[str, list[Row]] = {}
    if use_cache:
        for rel in chosen:
            cached = cache.get(rel)
            if cached is not None:
                results[rel] = cached
    todo = [rel for rel in chosen if rel not in results]
    if todo:
        print(f"[{name}] {len(chosen)} files ({len(results)} cached), checking {len(files)} "
              f"to examine {len(todo)} ...", file=sys.stderr)
        with tempfile.TemporaryDirectory(prefix=f"{name}-") as tmp:
            fresh = runner(corpus, files, todo, Path(tmp))
        for rel, rows in fresh.items():
            cache.put(rel, rows)
        results.update(fresh)
        missing = [rel for rel in todo if rel not in results]
        if missing:
            sys.exit(f"{name}: {len(missing)} files were not examined (first: {missing[0]})")

    rows = [row for rel in chosen for row in results[rel]]
    write_jsonl(out, rows)
    file_rows = [r for r in rows if r["kind"] == "file"]
    totals: dict[str, int] = {}
    for r in file_rows:  # the per-file counters (sites, resolved, errors ...) summed
        for k, v in r.items():
            if isinstance(v, int):
                totals[k] = totals.get(k, 0) + v
    return {
        "corpus": str(corpus), "files": len(chosen), "computed": len(todo),
        "wall_s": round(time.perf_counter() - t0, 1), "rows": count_kinds(rows), **dict(sorted(totals.items())),
    }


def whole_program_main(name: str, description: str, example: str,
                       run_oracle: Callable[..., dict[str, object]],
                       unavailable: type[Exception], argv: list[str] | None) -> int:
    """The command line of a whole-program oracle (Java, Go): CORPUS OUT and the options
    ``run_oracle(corpus, out, max_files, subset, use_cache=...)`` takes."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("corpus", type=Path, help=f"corpus directory (e.g. {example})")
    ap.add_argument("out", type=Path, help="output JSONL")
    ap.add_argument("--max-files", type=int, default=None, help="quick mode: examine only N files")
    ap.add_argument("--subset", choices=("stride", "first"), default="stride",
                    help="how --max-files picks files from the sorted list (default: every k-th)")
    ap.add_argument("--no-cache", action="store_true", help="recompute even if cached")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        ap.error(f"not a directory: {args.corpus}")
    try:
        stats = run_oracle(args.corpus, args.out, args.max_files, args.subset,
                           use_cache=not args.no_cache)
    except unavailable as exc:
        sys.exit(str(exc))
    print(f"[{name}] {stats}", file=sys.stderr)
    return 0
