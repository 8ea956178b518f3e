"""Watching faces under a batch of many changed files: the batch is applied (its chunking pool
never forked from the threaded server), and SIGTERM ends the process within a bound, also in
the middle of a large batch, leaving no worker behind."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from knoxidx.index import Index
from tests.agent.support import Process, knoxidx_command, start_server, wait_for
from tests.reliability.test_orphans import alive, children_of
from tests.test_crash import make_repo

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

# what the faces promise after SIGTERM (5 s), with room for a loaded test machine
STOP_BOUND_S = 8.0


def descendants(pid: int) -> set[int]:
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children_of(todo.pop()):
            found.add(child)
            todo.append(child)
    return found


def change_files(root: Path, count: int, tag: str) -> None:
    """``count`` files of ``make_repo``'s package, each given a new function ``{tag}_<n>``."""
    for n in range(count):
        path = root / "pkg" / f"m{n}.py"
        path.write_text(path.read_text() + f"\n\ndef {tag}_{n}():\n    return {n}\n")


def has_symbol(root: Path, name: str) -> bool:
    with Index.open_reader(root) as idx:
        return any(s["name"] == name for s in idx.symbols(name))


def stop_within(proc: Process, bound: float) -> tuple[int, float]:
    """SIGTERM ``proc`` and wait for it (killed, and failed, past ``bound`` seconds)."""
    t0 = time.monotonic()
    proc.proc.send_signal(signal.SIGTERM)
    try:
        code = proc.proc.wait(bound)
    except Exception:
        proc.proc.kill()
        proc.proc.wait(5)
        raise AssertionError(f"still running {bound} s after SIGTERM; "
                             f"output: {proc.drain()[-15:]}") from None
    return code, time.monotonic() - t0


@pytest.fixture
def big_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    make_repo(root, 400)
    return root


@pytest.mark.heavy
def test_serve_watch_applies_a_batch_of_40_files_and_stops_on_sigterm(big_repo: Path) -> None:
    import httpx

    proc, url = start_server(big_repo, "--watch", "--debounce-ms", "50")
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            wait_for(lambda: client.get("/status").json()["phase"] == "idle", timeout=120,
                     what="the watcher's first update")
            for round_ in range(3):  # the hang came in some large batches, not all
                change_files(big_repo, 40, f"batch{round_}")
                wait_for(lambda r=round_: client.get(f"/symbols?q=batch{r}_39").json()["symbols"],
                         timeout=60, what=f"batch {round_} through the API")
            assert has_symbol(big_repo, "batch2_0")
        workers = descendants(proc.proc.pid)
        code, _ = stop_within(proc, STOP_BOUND_S)
        assert code == 0
        wait_for(lambda: not alive(workers), what="the workers gone")
    finally:
        if proc.proc.poll() is None:
            proc.proc.kill()


@pytest.mark.heavy
def test_watch_applies_a_batch_of_40_files_and_stops_on_sigterm(big_repo: Path) -> None:
    proc = Process(knoxidx_command("watch", str(big_repo), "--json", "--debounce-ms", "50"))
    try:
        proc.expect(r'"event": "batch".*"reason": "start"', stream="out", timeout=120)
        change_files(big_repo, 40, "watched")
        proc.expect(r'"event": "batch".*"reason": "changes"', stream="out", timeout=60)
        wait_for(lambda: has_symbol(big_repo, "watched_39"), what="the batch in the index")
        workers = descendants(proc.proc.pid)
        code, _ = stop_within(proc, STOP_BOUND_S)
        assert code == 0
        proc.expect(r'"event": "stop"', stream="out")
        wait_for(lambda: not alive(workers), what="the workers gone")
    finally:
        if proc.proc.poll() is None:
            proc.proc.kill()


@pytest.mark.slow
@pytest.mark.parametrize("face", ["serve", "watch"])
def test_sigterm_mid_batch_ends_the_process_in_bounded_time(tmp_path: Path, face: str) -> None:
    root = tmp_path / "repo"
    make_repo(root, 2500)
    if face == "serve":
        proc, _ = start_server(root, "--watch", "--debounce-ms", "50")
    else:
        proc = Process(knoxidx_command("watch", str(root), "--json", "--debounce-ms", "50"))
    try:
        proc.expect(r"reason.: .start|initial update|watching", timeout=180)
        wait_for(lambda: has_symbol(root, "f2499"), timeout=180, what="the first update")
        time.sleep(0.5)
        change_files(root, 2500, "late")
        time.sleep(1.0)  # mid-batch: the update of 2,500 files takes several seconds
        workers = descendants(proc.proc.pid)
        code, took = stop_within(proc, STOP_BOUND_S)
        assert code in (0, 1), proc.drain()[-10:]
        wait_for(lambda: not alive(workers), what="the workers gone")
        assert not any("Traceback" in line for _, line in proc.drain())
    finally:
        if proc.proc.poll() is None:
            proc.proc.kill()
    # nothing lost: the next start applies the abandoned batch
    done = Process(knoxidx_command("index", str(root)))
    assert done.proc.wait(300) == 0
    assert has_symbol(root, "late_2499")


def test_a_process_with_threads_never_forks_its_chunking_workers(tmp_path: Path) -> None:
    """A fork of a threaded server copied the locks its threads held and its do-nothing
    SIGTERM handler; the workers now come from the forkserver."""
    root = tmp_path / "repo"
    make_repo(root, 60)
    with Index.open(root, create=True) as idx:
        idx.update(jobs=2, retrieval=False)
    me = os.getpid()
    cmdline = Path(f"/proc/{me}/cmdline").read_bytes()
    forked: set[int] = set()

    def progress(phase: str, done: int, total: int) -> None:
        if phase == "chunk":
            for pid in children_of(me):
                try:
                    if Path(f"/proc/{pid}/cmdline").read_bytes() == cmdline:
                        forked.add(pid)
                except OSError:
                    pass

    stop = threading.Event()
    other = threading.Thread(target=stop.wait)  # the process now has a second thread
    other.start()
    try:
        with Index.open(root) as idx:
            report = idx.update(jobs=2, progress=progress)
    finally:
        stop.set()
        other.join()
    assert report.retrieval and report.retrieval["added"] > 0
    assert not forked, f"forked workers: {forked}"


@pytest.mark.heavy
def test_mcp_watch_applies_a_batch_of_40_files_and_stops_on_sigterm(big_repo: Path) -> None:
    import subprocess

    proc = Process(knoxidx_command("mcp", str(big_repo), "--watch", "--debounce-ms", "50"),
                   stdin=subprocess.PIPE)
    try:
        proc.expect(r"initial update", stream="err", timeout=120)
        change_files(big_repo, 40, "mcp")
        wait_for(lambda: has_symbol(big_repo, "mcp_39"), timeout=60, what="the batch")
        workers = descendants(proc.proc.pid)
        code, _ = stop_within(proc, STOP_BOUND_S)
        assert code in (0, -signal.SIGTERM)
        wait_for(lambda: not alive(workers), what="the workers gone")
    finally:
        if proc.proc.poll() is None:
            proc.proc.kill()
