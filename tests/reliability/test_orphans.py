"""An indexer killed alone (SIGKILL of its process id, as the OOM killer does, not of its
process group) leaves no worker behind and no lock: its children die with it, none of them
keeps the write lock, and a lock whose recorded holder is gone is taken over."""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from knoxidx.graph.spool import SPOOL_SUFFIX
from knoxidx.graph.write_lock import LOCK_NAME
from tests.helpers import CLI
from tests.test_crash import make_repo

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def children_of(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # the parent's id is the 2nd field after the command, which is in parentheses
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(int(entry.name))
    return found


def alive(pids: set[int]) -> set[int]:
    """Those of ``pids`` that still run (a zombie has ended)."""
    running = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            running.add(pid)
    return running


def wait_until(check, timeout: float, interval: float = 0.01):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(interval)
    return check()


def lock_is_free(index_dir: Path) -> bool:
    fd = os.open(index_dir / LOCK_NAME, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


@pytest.mark.slow
def test_killing_the_indexer_alone_mid_resolution_leaves_no_worker_and_no_lock(
        tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, 3000)
    index_dir = root / ".knoxidx"
    err = tmp_path / "stderr"
    with open(err, "wb") as stderr:
        proc = subprocess.Popen([*CLI, "index", "--jobs", "3", str(root)],
                                stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        # the spool appears just before the resolver workers fork
        assert wait_until(lambda: proc.poll() is not None or any(
            SPOOL_SUFFIX in p.name for p in index_dir.glob("*")), 120), "never resolved"
        assert proc.poll() is None, "finished before resolution: make the repository larger"
        workers = wait_until(lambda: children_of(proc.pid), 5)
        assert workers, "no resolver worker started"
        proc.send_signal(signal.SIGKILL)  # the indexer's process alone
        proc.wait()
        left = wait_until(lambda: not alive(workers), 10) or alive(workers)
        assert left is True, f"workers outlived the indexer: {left}"
    finally:
        for pid in alive(children_of(proc.pid)):
            os.kill(pid, signal.SIGKILL)
    assert lock_is_free(index_dir)
    assert "Traceback" not in err.read_text(errors="replace"), err.read_text()[-2000:]
    done = subprocess.run([*CLI, "index", "--jobs", "3", str(root)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr


# A process that takes a lock (the statement given), then forks a child that outlives it
HOLD_AND_FORK = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from knoxidx.graph.write_lock import WriteLock
    from knoxidx.watch_presence import WatcherPresence

    {take}
    # each line in one write: two processes share the pipe, and print() may write a line's
    # text and its end apart (unbuffered, as under PYTHONUNBUFFERED), read back as the lines
    # "heldforked" and ""
    if os.fork() == 0:  # a child that outlives its parent, as a stuck worker did
        os.write(1, b"forked\\n")  # its fork handlers have run by now
        time.sleep(60)
        os._exit(0)
    os.write(1, b"held\\n")
    time.sleep(60)
""")


@contextmanager
def holding_with_a_child(index_dir: Path, take: str) -> Iterator[tuple[subprocess.Popen[str],
                                                                        set[int]]]:
    """A process that ran ``take`` and forked a child, once both have run: the process and
    its child's pid; the child is killed after."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_AND_FORK.replace("{take}", take), str(index_dir)],
        stdout=subprocess.PIPE, text=True)
    child: set[int] = set()
    try:
        # the child may not have run at all yet when the parent has printed: wait for both
        assert proc.stdout is not None
        assert {proc.stdout.readline(), proc.stdout.readline()} == {"held\n", "forked\n"}
        child = children_of(proc.pid)
        yield proc, child
    finally:
        for pid in alive(child):
            os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.wait()


def test_a_forked_child_does_not_keep_the_write_lock(tmp_path: Path) -> None:
    index_dir = tmp_path / ".knoxidx"
    index_dir.mkdir()
    with holding_with_a_child(index_dir, "WriteLock(Path(sys.argv[1])).acquire()") as (
            proc, child):
        assert child and not lock_is_free(index_dir)
        proc.kill()
        proc.wait()
        assert alive(child)  # still running, as a worker stuck on a dead parent's lock was
        assert lock_is_free(index_dir)


def test_a_forked_child_does_not_show_a_killed_watcher_as_alive(tmp_path: Path) -> None:
    from knoxidx.watch_presence import watcher_elsewhere

    index_dir = tmp_path / ".knoxidx"
    index_dir.mkdir()
    with holding_with_a_child(index_dir, "WatcherPresence(Path(sys.argv[1])).claim()") as (
            proc, child):
        assert child and watcher_elsewhere(index_dir) is not None
        proc.kill()
        proc.wait()
        assert alive(child)
        assert watcher_elsewhere(index_dir) is None


def test_a_lock_whose_holder_is_gone_is_taken_over(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, 5)
    assert subprocess.run([*CLI, "index", str(root)], capture_output=True).returncode == 0
    index_dir = root / ".knoxidx"
    # what an earlier holder with a longer process id left: the new holder's record must
    # replace it whole, or its id would read as another, gone process
    (index_dir / LOCK_NAME).write_text(f"{10**9 - 1} {socket.gethostname()}/\n")
    # a holder that handed its lock on to a process that outlives it (what an older knoxidx's
    # resolver worker did): the lock stays held after the holder is gone
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import fcntl, os, subprocess, sys
        fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        heir = subprocess.Popen(["sleep", "600"], pass_fds=(fd,))
        print(heir.pid, flush=True)
        sys.stdin.read()
    """), str(index_dir / LOCK_NAME)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    heir = int(holder.stdout.readline())
    try:
        busy = subprocess.run([*CLI, "index", str(root)], capture_output=True, text=True)
        assert busy.returncode == 5 and f"pid {holder.pid}" in busy.stderr  # holder alive
        holder.kill()
        holder.wait()
        assert not lock_is_free(index_dir)  # the heir holds it
        # (it waited for the heir to end)
        done = subprocess.run([*CLI, "index", "--wait", str(root)], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "took over the write lock" in done.stderr
        again = subprocess.run([*CLI, "index", str(root)], capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
    finally:
        os.kill(heir, signal.SIGKILL)
