"""SIGKILL of ``knoxidx index`` at random points.

Each trial changes the tree the way work does (a cold build from nothing, a few files edited,
a third of the files changed as by a branch switch), starts ``knoxidx index`` and kills its
whole process group (the indexer and its workers) with SIGKILL after a random delay drawn
over the length such a run takes. Then:

1. ``PRAGMA integrity_check`` is ``ok``;
2. the graph the kill left is the one before the run or the one after it, never a mixture
   (each update is one transaction);
3. the next ``knoxidx index`` completes, and its graph equals a clean rebuild of the same
   files (nodes and edges, as ``knoxidx verify`` compares them), and every indexed file has
   its chunks (the search side caught up too).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

from bench.reliability.common import Outcome, graph_of, knoxidx_command, run_cli
from knoxidx.verify import clean_graph

MUTATIONS = ("cold", "edit", "edit", "branch")


def integrity(db: Path) -> str:
    if not db.exists():
        return "ok"  # killed before the database was created: nothing to damage
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def chunks_in_step(db: Path) -> str:
    """'' if every indexed file's chunks were made from its current content, else why not."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        stale = conn.execute(
            "SELECT count(*) FROM files f LEFT JOIN chunk_source s ON s.path = f.path"
            " WHERE f.status = 'ok' AND (s.hash IS NULL OR s.hash != f.hash)").fetchone()[0]
        ghosts = conn.execute(
            "SELECT count(*) FROM chunk_source s LEFT JOIN files f ON f.path = s.path"
            " AND f.status = 'ok' WHERE f.path IS NULL").fetchone()[0]
    finally:
        conn.close()
    return f"{stale} files with stale chunks, {ghosts} chunked files gone" \
        if stale or ghosts else ""


def source_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and ".knoxidx" not in p.parts
                  and p.suffix in (".py", ".ts", ".tsx", ".js", ".jsx", ".go", ".rs", ".java"))


def mutate(root: Path, kind: str, rng: random.Random, serial: int) -> str:
    """Change the tree as work does; returns a short description."""
    if kind == "cold":
        shutil.rmtree(root / ".knoxidx", ignore_errors=True)
        return "cold build"
    files = source_files(root)
    count = rng.randint(1, 12) if kind == "edit" else max(2, len(files) // 3)
    chosen = rng.sample(files, min(count, len(files)))
    for i, path in enumerate(chosen):
        action = rng.choice(("append", "truncate", "delete", "copy"))
        data = path.read_bytes()
        if action == "append":  # a body-only change (a comment) or a new top-level name
            path.write_bytes(data + f"\n// kx{serial}_{i}\n".encode()
                             if path.suffix != ".py" else data + f"\ndef kx{serial}_{i}():\n"
                             f"    return {i}\n".encode())
        elif action == "truncate":  # half a file: definitions vanish, syntax errors appear
            path.write_bytes(data[: len(data) // 2])
        elif action == "delete":
            path.unlink()
        else:  # a new file: every definition of another one, again
            path.with_name(f"kxcopy{serial}_{i}{path.suffix}").write_bytes(data)
    return f"{kind}: {len(chosen)} files changed"


def run_and_kill(root: Path, delay: float, jobs: int) -> tuple[bool, float]:
    """Start ``knoxidx index`` and SIGKILL its process group after ``delay`` seconds;
    (killed, seconds it ran). Not killed: it finished first."""
    t0 = time.monotonic()
    proc = subprocess.Popen(knoxidx_command("index", "--jobs", str(jobs), str(root)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        proc.wait(timeout=delay)
        return False, time.monotonic() - t0
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return True, time.monotonic() - t0


def kill_index(corpus: Path, trials: int, *, seed: int = 1, jobs: int = 2,
               workdir: Path | None = None) -> Outcome:
    """``trials`` killed runs over a private copy of ``corpus`` (see the module docstring)."""
    from bench.reliability.common import copy_tree

    outcome = Outcome(f"SIGKILL of `knoxidx index` ({corpus.name})")
    rng = random.Random(seed)
    base = Path(tempfile.mkdtemp(prefix="knoxidx-kill-", dir=workdir))
    root = copy_tree(corpus, base / corpus.name)
    db = root / ".knoxidx" / "index.db"
    try:
        t0 = time.monotonic()
        first = run_cli("index", "--jobs", str(jobs), str(root))
        cold_s = time.monotonic() - t0
        if first.returncode != 0:
            outcome.fail(f"the first build failed: {first.stderr[-300:]}")
            return outcome
        before = graph_of(root)
        durations = {"cold": cold_s, "edit": cold_s / 3, "branch": cold_s / 2}
        attempts = finished_first = 0
        kill_fractions: list[float] = []
        while outcome.trials < trials and attempts < trials * 3:
            attempts += 1
            kind = MUTATIONS[rng.randrange(len(MUTATIONS))]
            what = mutate(root, kind, rng, attempts)
            if kind == "cold":
                before = (set(), set())
            delay = rng.uniform(0.05, durations[kind])
            killed, ran = run_and_kill(root, delay, jobs)
            if not killed:
                finished_first += 1
            else:
                outcome.trials += 1
            label = f"trial {attempts} ({what}, killed after {ran:.2f} s)"
            check = integrity(db)
            if check != "ok":
                outcome.fail(f"{label}: integrity_check: {check}")
            left = graph_of(root) if db.exists() else (set(), set())
            t1 = time.monotonic()
            done = run_cli("index", "--jobs", str(jobs), str(root))
            if done.returncode == 0:
                # the run that finished the work: what the killed one would have taken, and
                # so where in it the kill fell; the next delays of this kind are drawn over it
                whole = time.monotonic() - t1
                if killed:
                    kill_fractions.append(min(ran / whole, 1.0))
                durations[kind] = max(durations[kind], whole)
            if done.returncode != 0:
                outcome.fail(f"{label}: the next run failed: {done.stderr[-300:]}")
                continue
            clean = clean_graph(root)
            after = graph_of(root)
            if after != clean:
                outcome.fail(f"{label}: differs from a clean rebuild: "
                             f"{len(clean[0] ^ after[0])} nodes, {len(clean[1] ^ after[1])} "
                             "edges")
            if left not in (before, clean):
                outcome.fail(f"{label}: the kill left a graph that is neither the old nor "
                             "the new one")
            stale = chunks_in_step(db)
            if stale:
                outcome.fail(f"{label}: search side: {stale}")
            before = after
        outcome.figures = {
            "corpus": str(corpus), "files": len(source_files(root)),
            "cold_build_s": round(cold_s, 2), "kills": outcome.trials,
            "finished_before_the_kill": finished_first,
            "kill_point_quartiles": _quartiles(kill_fractions),
        }
        return outcome
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _quartiles(values: list[float]) -> list[float]:
    """Where in the run the kills fell (0: at its start, 1: at its end): 25th, 50th, 75th
    percentile."""
    if not values:
        return []
    ordered = sorted(values)
    return [round(ordered[min(int(q * len(ordered)), len(ordered) - 1)], 2)
            for q in (0.25, 0.5, 0.75)]
