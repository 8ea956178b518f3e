"""A full disk, a read-only ``.knoxidx/`` and a damaged ``index.db``: every command fails
with one clear line naming the fix (never a traceback), a failed update leaves the previous
index whole, and the fix it names works.

The disk fills for real in the child: ``RLIMIT_FSIZE`` makes the kernel refuse writes past a
size (EFBIG, or a short write that SQLite reports as SQLITE_FULL), the path ENOSPC takes
through SQLite's pager. SIGXFSZ is ignored so the write fails instead of killing the process,
as ENOSPC would. Read-only as root drops the capabilities that bypass file modes (setpriv).
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bench.reliability.common import clear_error, graph_of, run_cli, verify
from bench.reliability.daemon import Daemon
from tests.helpers import write_tree


def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI's own entry point (``run``: errors to one line and an exit code) in this
    process: what a subprocess would run, without paying an interpreter start per call. An
    exception escaping it fails the test, as a traceback would."""
    from knoxidx.cli import run

    capsys.readouterr()
    monkeypatch.setattr(sys, "argv", ["knoxidx", *args])
    code = 0
    try:
        run()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out, err)

FILES = {
    "pkg/__init__.py": "",
    **{f"pkg/m{i}.py": (f"from pkg.m{(i + 1) % 12} import f{(i + 1) % 12}\n\n"
                        f"def f{i}():\n    return f{(i + 1) % 12}()\n\n"
                        f"class K{i}:\n    def run(self):\n        return f{i}()\n")
       for i in range(12)},
}
REBUILD = "knoxidx index --rebuild"


@pytest.fixture
def indexed(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "repo", FILES)
    from knoxidx.index import Index

    with Index.open(root, create=True) as idx:
        idx.update(jobs=1)
    return root


def db(root: Path) -> Path:
    return root / ".knoxidx" / "index.db"


# ---- a damaged database ------------------------------------------------------------------


def damage(path: Path, how: str) -> None:
    size = path.stat().st_size
    page = 4096
    with open(path, "r+b") as fh:
        if how == "truncated-to-page":
            fh.truncate(size - 2 * page)
        elif how == "truncated-mid-page":
            fh.truncate(size - 1000)
        elif how == "header":
            fh.write(b"this is not SQLite")
        elif how == "zeroed-pages":
            fh.seek((size // 2) // page * page)
            fh.write(b"\0" * 2 * page)
        elif how == "random-bytes":
            rng = random.Random(5)
            fh.seek(size // 3)
            fh.write(bytes(rng.randrange(256) for _ in range(size // 3)))


# detected when the database is opened (cheap checks), by every command
OPEN_DAMAGE = ("truncated-to-page", "truncated-mid-page", "header")
# inside the b-trees: found by the writer's check before it writes, and by any read that
# touches the damage; never a traceback either way
DEEP_DAMAGE = ("zeroed-pages", "random-bytes")


def checkpointed(root: Path) -> None:
    conn = sqlite3.connect(db(root))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


@pytest.mark.parametrize("how", OPEN_DAMAGE)
def test_damage_is_detected_at_open(indexed: Path, how: str, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    checkpointed(indexed)
    damage(db(indexed), how)
    for args in (("stats",), ("callers", "f3"), ("search", "run"), ("index",), ("verify",)):
        problem = clear_error(cli(capsys, monkeypatch, *args, str(indexed)), 6, REBUILD)
        assert problem is None, (args, problem)
    fixed = cli(capsys, monkeypatch, "index", "--rebuild", str(indexed))
    assert fixed.returncode == 0, fixed.stderr
    assert verify(indexed)["equal"]


@pytest.mark.parametrize("how", DEEP_DAMAGE)
def test_deep_damage_never_shows_a_traceback_and_blocks_writes(
        indexed: Path, how: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    checkpointed(indexed)
    damage(db(indexed), how)
    for args in (("stats",), ("callers", "f3"), ("symbols", "K1"), ("search", "run"),
                 ("verify",)):
        proc = cli(capsys, monkeypatch, *args, str(indexed))
        if proc.returncode != 0 and args != ("verify",):
            assert clear_error(proc, 6, REBUILD) is None, (args, proc.stderr)
    # the writer checks before it writes into a damaged database
    assert clear_error(cli(capsys, monkeypatch, "index", str(indexed)), 6, REBUILD) is None
    fixed = cli(capsys, monkeypatch, "index", "--rebuild", str(indexed))
    assert fixed.returncode == 0, fixed.stderr
    assert verify(indexed)["equal"]


def test_the_open_check_is_cheap(indexed: Path) -> None:
    """Readers pay only the header and size check; the full quick_check is the writer's."""
    import time

    from knoxidx.graph.store import SQLiteStore

    timings = []
    for _ in range(20):  # in CPU time: the wall clock counts a loaded machine's other work
        t0 = time.process_time()
        SQLiteStore.open(indexed, readonly=True).close()
        timings.append(time.process_time() - t0)
    assert sorted(timings)[10] < 0.05


# ---- a full disk -------------------------------------------------------------------------


def file_size_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:  # in the child, before exec
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def grow(root: Path, n: int) -> None:
    for i in range(n):
        body = "".join(f"\n\ndef g{i}_{k}(x):\n    return f{k % 12}() + x  # {'pad' * 20}\n"
                       for k in range(40))
        (root / "pkg" / f"big{i}.py").write_text(f"from pkg.m1 import f1\n{body}")


@pytest.mark.heavy
def test_disk_full_mid_update_loses_nothing(indexed: Path) -> None:
    checkpointed(indexed)
    before = graph_of(indexed)
    grow(indexed, 25)
    limit = db(indexed).stat().st_size + 64 * 1024  # the update needs far more than this
    proc = run_cli("index", "--jobs", "1", str(indexed), preexec=file_size_limit(limit))
    problem = clear_error(proc, 7, "disk is full")
    assert problem is None, problem
    assert graph_of(indexed) == before  # the failed update left the old graph whole
    conn = sqlite3.connect(db(indexed))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    done = run_cli("index", "--jobs", "1", str(indexed))  # space again: it completes
    assert done.returncode == 0, done.stderr
    assert verify(indexed)["equal"]


@pytest.mark.heavy
def test_disk_full_on_a_first_build(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", FILES)
    grow(root, 30)
    proc = run_cli("index", "--jobs", "1", str(root), preexec=file_size_limit(48 * 1024))
    assert clear_error(proc, 7, "disk is full") is None, proc.stderr
    done = run_cli("index", "--jobs", "1", str(root))
    assert done.returncode == 0, done.stderr
    assert verify(root)["equal"]


# ---- a read-only index directory ---------------------------------------------------------


def without_root_powers() -> list[str]:
    """As root, file modes bind only once the override capabilities are dropped."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: file modes cannot be enforced")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]


@pytest.mark.heavy
def test_read_only_index_directory(indexed: Path) -> None:
    checkpointed(indexed)
    before = graph_of(indexed)
    (indexed / "pkg" / "m2.py").write_text("def f2():\n    return 2\n")
    index_dir = indexed / ".knoxidx"
    modes = {p: p.stat().st_mode for p in [index_dir, *index_dir.iterdir()]}
    for p in index_dir.iterdir():
        p.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    index_dir.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    prefix = without_root_powers()
    try:
        proc = run_cli("index", str(indexed), prefix=prefix)
        assert clear_error(proc, 7, "read-only", str(index_dir)) is None, proc.stderr
        for args in (("stats",), ("callers", "f3")):  # reading still works
            proc = run_cli(*args, str(indexed), prefix=prefix)
            assert proc.returncode == 0, (args, proc.stderr)
        assert "pkg.m1.f1" in run_cli("callers", "f2", str(indexed), prefix=prefix).stdout
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
    assert graph_of(indexed) == before
    done = run_cli("index", str(indexed))
    assert done.returncode == 0, done.stderr
    assert verify(indexed)["equal"]


def test_a_first_build_killed_before_it_committed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An index.db without tables (the first build died before its first commit) is not
    damaged: a plain `knoxidx index` finishes the job, and readers say so."""
    root = write_tree(tmp_path / "repo", FILES)
    (root / ".knoxidx").mkdir()
    (root / ".knoxidx" / "index.db").write_bytes(b"")
    proc = cli(capsys, monkeypatch, "stats", str(root))
    assert clear_error(proc, 2, "run `knoxidx index`") is None, proc.stderr
    assert "--rebuild" not in proc.stderr
    assert cli(capsys, monkeypatch, "index", str(root)).returncode == 0
    assert verify(root)["equal"]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 2 MiB tmpfs, for a real ENOSPC (needs root and mount; skipped elsewhere, the
    RLIMIT_FSIZE tests stand in)."""
    mount = shutil.which("mount")
    if os.geteuid() != 0 or mount is None:
        pytest.skip("mounting a small tmpfs needs root")
    small = tmp_path / "small"
    small.mkdir()
    made = subprocess.run([mount, "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(small)],
                          capture_output=True, text=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield small
    finally:
        subprocess.run(["umount", "--lazy", str(small)], check=False)


def fill(disk: Path) -> Path:
    """Take every free byte of ``disk``; the file that holds them."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as fh:
        for size in (65536, 4096, 1):
            try:
                while True:
                    fh.write(b"\0" * size)
            except OSError:
                pass
    assert shutil.disk_usage(disk).free == 0
    return filler


def test_disk_full_on_a_real_small_filesystem(small_disk: Path) -> None:
    """The same as above with a real ENOSPC."""
    root = write_tree(small_disk / "repo", FILES)
    first = run_cli("index", "--jobs", "1", str(root))
    assert first.returncode == 0, first.stderr
    before = graph_of(root)
    grow(root, 60)  # fits on the disk, but its index does not
    proc = run_cli("index", "--jobs", "1", str(root))
    assert clear_error(proc, 7, "disk is full", "left as it was") is None, proc.stderr
    assert graph_of(root) == before
    for path in (root / "pkg").glob("big*.py"):
        path.unlink()
    done = run_cli("index", "--jobs", "1", str(root))
    assert done.returncode == 0, done.stderr
    assert verify(root)["equal"]


# An update committed, its process gone without the checkpoint at close: the commit is only in
# the WAL, which every reader must still see.
UPDATE_LEFT_IN_THE_WAL = """
import os, sys
from knoxidx.index import Index
idx = Index.open(sys.argv[1])
idx.store.conn.execute("PRAGMA wal_autocheckpoint=0")
idx.update(jobs=1)
os._exit(0)
"""


@pytest.mark.heavy
def test_reads_work_on_a_full_disk(small_disk: Path) -> None:
    """Reading writes nothing, but SQLite's first connection to an index must make (and
    grow) the WAL's shared-memory file: on a full disk every read command exited 7 with
    SQLITE_IOERR_SHMSIZE. They answer now, from the WAL's commits too; writers still say
    the disk is full."""
    root = write_tree(small_disk / "repo", FILES)
    assert run_cli("index", "--jobs", "1", str(root)).returncode == 0
    (root / "pkg" / "m2.py").write_text("from pkg.m5 import f5\n\ndef f2():\n    return f5()\n")
    left = subprocess.run([sys.executable, "-c", UPDATE_LEFT_IN_THE_WAL, str(root)],
                          capture_output=True, text=True, check=False)
    assert left.returncode == 0, left.stderr
    assert (root / ".knoxidx" / "index.db-wal").stat().st_size > 0
    # nobody has the index open: its shared memory is rebuilt from the WAL by the next
    # connection (whose space it would otherwise find again on the full disk)
    (root / ".knoxidx" / "index.db-shm").unlink()
    filler = fill(small_disk)
    for args in (("stats",), ("symbols", "K1"), ("export",), ("search", "run")):
        proc = run_cli(*args, str(root))
        assert proc.returncode == 0, (args, proc.stderr)
    callers = run_cli("callers", "pkg.m5.f5", str(root))
    assert callers.returncode == 0, callers.stderr
    assert "pkg.m2.f2" in callers.stdout and "pkg.m4.f4" in callers.stdout  # the WAL's commit
    server = Daemon("serve", str(root), "--port", "0")
    try:
        url = server.expect(r"on (http://\S+?:\d+)").group(1)
        with urllib.request.urlopen(f"{url}/callers?symbol=pkg.m5.f5", timeout=30) as answer:
            names = {hit["qualified_name"] for hit in json.loads(answer.read())["callers"]}
        assert "pkg.m2.f2" in names
    finally:
        assert server.stop() == 0
    for args in (("index",), ("embed",)):
        proc = run_cli(*args, str(root))
        assert clear_error(proc, 7, "disk is full") is None, (args, proc.stderr)
    filler.unlink()
    done = run_cli("index", "--jobs", "1", str(root))
    assert done.returncode == 0, done.stderr
    assert verify(root)["equal"]


def test_http_answers_a_damaged_index_with_the_fix(indexed: Path) -> None:
    from starlette.testclient import TestClient

    from knoxidx.api.http import create_app

    checkpointed(indexed)
    damage(db(indexed), "random-bytes")
    with TestClient(create_app(indexed), base_url="http://127.0.0.1") as client:
        seen = set()
        for url in ("/symbols?q=f1", "/symbols?q=K", "/callers?symbol=pkg.m1.f1",
                    "/search?q=run", "/status", "/impact?symbol=pkg.m2.f2"):
            response = client.get(url)
            seen.add(response.status_code)
            if response.status_code != 200:
                error = response.json()["error"]
                assert error["code"] == "corrupt_index", (url, error)
                assert REBUILD in error["message"], (url, error)
        assert 500 in seen  # the damage was met, and named


def test_the_watcher_refuses_to_write_a_damaged_index(indexed: Path) -> None:
    from knoxidx.core.errors import CorruptIndexError
    from knoxidx.watch import Watcher

    checkpointed(indexed)
    damage(db(indexed), "zeroed-pages")
    watcher = Watcher(indexed, jobs=1, reconcile_s=0)
    with pytest.raises(CorruptIndexError, match="knoxidx index --rebuild"):
        watcher.start()
    watcher.stop()
