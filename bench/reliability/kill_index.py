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
from contextlib import suppress
from pathlib import Path

from bench.reliability.common import Outcome, graph_of, knoxidx_command, run_cli
from knoxidx.graph.export import EMPTY
from knoxidx.graph.spool import SPOOL_SUFFIX
from knoxidx.graph.write_lock import LOCK_NAME
from knoxidx.update.verify import clean_graph

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
        while outcome.trials < trials and attempts < trials * 6:
            attempts += 1
            kind = MUTATIONS[rng.randrange(len(MUTATIONS))]
            what = mutate(root, kind, rng, attempts)
            if kind == "cold":
                before = EMPTY
            delay = rng.uniform(0.05, durations[kind])
            killed, ran = run_and_kill(root, delay, jobs)
            if not killed:
                finished_first += 1
                # the whole run took this long now: the next delay of its kind falls within it
                # (timed on a loaded machine that then got faster, every delay fell past the
                # end of the run, and no trial was killed at all)
                durations[kind] = ran
            else:
                outcome.trials += 1
            label = f"trial {attempts} ({what}, killed after {ran:.2f} s)"
            check = integrity(db)
            if check != "ok":
                outcome.fail(f"{label}: integrity_check: {check}")
            left = graph_of(root) if db.exists() else EMPTY
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
                             f"{len(clean.nodes ^ after.nodes)} nodes, "
                             f"{len(clean.edges ^ after.edges)} edges, "
                             f"{len(clean.unresolved ^ after.unresolved)} unresolved calls")
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


def kill_index_pid_only(corpus: Path, trials: int, *, seed: int = 1, jobs: int = 3,
                        workdir: Path | None = None) -> Outcome:
    """``trials`` runs of ``knoxidx index`` killed by SIGKILL of the indexer's process id
    alone, as the OOM killer does (its workers are not signalled), while its resolver workers
    run: a cold build or a third of the files changed, killed at a random point of the
    resolution (the spool appears as the workers fork). Then no worker may be left, the write
    lock must be free, no process may have printed a traceback, and the next ``knoxidx index``
    (no ``--wait``) must complete and equal a clean rebuild."""
    from bench.reliability.common import copy_tree

    outcome = Outcome(f"SIGKILL of the `knoxidx index` process alone, mid-resolution "
                      f"({corpus.name})")
    rng = random.Random(seed)
    base = Path(tempfile.mkdtemp(prefix="knoxidx-pidkill-", dir=workdir))
    root = copy_tree(corpus, base / corpus.name)
    index_dir = root / ".knoxidx"
    survivors = locks_left = tracebacks = not_mid_resolution = 0
    try:
        attempts = 0
        while outcome.trials < trials and attempts < trials * 3:
            attempts += 1
            kind = ("cold", "branch")[rng.randrange(2)]
            what = mutate(root, kind, rng, attempts)
            if kind == "branch":  # (a branch switch on an index that exists)
                if not (index_dir / "index.db").exists():
                    run_cli("index", "--jobs", str(jobs), str(root))
            label = f"trial {attempts} ({what})"
            err = base / "stderr"
            with open(err, "wb") as stderr:
                proc = subprocess.Popen(knoxidx_command("index", "--jobs", str(jobs), str(root)),
                                        stdout=subprocess.DEVNULL, stderr=stderr,
                                        start_new_session=True)
            resolving = _wait_for_spool(index_dir, proc)
            if resolving:
                time.sleep(rng.uniform(0.0, 0.4))
            if proc.poll() is not None:
                not_mid_resolution += 1
                continue
            os.kill(proc.pid, signal.SIGKILL)  # the indexer's process alone
            proc.wait()
            outcome.trials += 1
            left = _session_members(proc.pid, within=5.0)
            if left:
                survivors += 1
                outcome.fail(f"{label}: {len(left)} worker(s) outlived the indexer")
                for pid in left:
                    with suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            if not _lock_free(index_dir):
                locks_left += 1
                outcome.fail(f"{label}: the write lock was left held")
            text = err.read_text(errors="replace")
            if "Traceback" in text or "BrokenPipeError" in text:
                tracebacks += 1
                outcome.fail(f"{label}: a traceback: {text[-400:]}")
            done = run_cli("index", "--jobs", str(jobs), str(root))
            if done.returncode != 0:
                outcome.fail(f"{label}: the next run failed: {done.stderr[-300:]}")
                continue
            if graph_of(root) != clean_graph(root):
                outcome.fail(f"{label}: differs from a clean rebuild")
        outcome.figures = {
            "corpus": str(corpus), "files": len(source_files(root)), "kills": outcome.trials,
            "workers_left": survivors, "locks_left": locks_left, "tracebacks": tracebacks,
            "finished_or_not_resolving_in_parallel": not_mid_resolution,
        }
        return outcome
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _wait_for_spool(index_dir: Path, proc: subprocess.Popen[bytes]) -> bool:
    """Wait until the run's resolver workers fork (its spool appears) or it ends."""
    while proc.poll() is None:
        if any(SPOOL_SUFFIX in p.name for p in index_dir.glob("*")):
            return True
        time.sleep(0.005)
    return False


def _session_members(session: int, within: float) -> list[int]:
    """The processes of ``session`` (the indexer's, which its workers inherit) still running
    ``within`` seconds from now (none: at once)."""
    deadline = time.monotonic() + within
    while True:
        members = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with suppress(OSError, IndexError, ValueError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if fields[0] != "Z" and int(fields[3]) == session:
                    members.append(int(entry.name))
        if not members or time.monotonic() > deadline:
            return members
        time.sleep(0.05)


def _lock_free(index_dir: Path) -> bool:
    import fcntl

    try:
        fd = os.open(index_dir / LOCK_NAME, os.O_RDWR)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
