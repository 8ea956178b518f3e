"""A killed indexer loses nothing: the next run completes and equals a clean rebuild."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from knoxidx.graph.queries import GraphQueries
from knoxidx.index import Index
from knoxidx.update.verify import verify_index
from tests.helpers import CLI


def make_repo(root: Path, n: int) -> None:
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for i in range(n):
        j = (i * 7 + 1) % n
        body = "".join(
            f"\nclass C{i}_{k}:\n    def run(self):\n        return f{j}()\n" for k in range(8)
        )
        (pkg / f"m{i}.py").write_text(
            f"from pkg.m{j} import f{j}\n\ndef f{i}():\n    return f{j}()\n{body}"
        )


def index_command(root: Path) -> list[str]:
    return [*CLI, "index", "--jobs", "2", str(root)]


@pytest.mark.heavy
def test_sigkill_mid_index_then_recover(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, 300)
    rng = random.Random(7)
    for trial in range(4):
        proc = subprocess.Popen(index_command(root), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(rng.uniform(0.2, 1.5))
        os.killpg(proc.pid, signal.SIGKILL)  # the indexer and its workers
        proc.wait()
        if trial == 1:  # an edit between crashes must be picked up too
            (root / "pkg" / "m5.py").write_text("def f5():\n    return 5\n")
    done = subprocess.run(index_command(root), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with Index.open(root) as idx:
        assert GraphQueries(idx.store).integrity() == "ok"
        result = verify_index(idx)
        assert result["equal"], result
        assert idx.callees("pkg.m5.f5")["callees"] == []


OWNER = """\
import os, sys
from knoxidx.parse.parse_worker import new_pool
pool = new_pool(2, sys.argv[1])
pids = {pool.submit(os.getpid).result() for _ in range(8)}
print(" ".join(map(str, sorted(pids))), flush=True)
sys.stdin.read()  # until killed
"""


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie, ended but not reaped, is not)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_parse_workers_end_with_a_killed_owner(method: str) -> None:
    """A `knoxidx index` or watcher killed outright (SIGKILL, the OOM killer) left its parse
    workers waiting on their queue for ever, and a standing worker kept its forkserver alive
    too (nine such pairs were found after nine test runs)."""
    owner = subprocess.Popen([sys.executable, "-c", OWNER, method], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(p) for p in owner.stdout.readline().split()]  # type: ignore[union-attr]
        assert workers and all(_running(p) for p in workers)
    finally:
        owner.kill()
        owner.wait()
    deadline = time.monotonic() + 30
    while any(_running(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_running(p) for p in workers)
