"""The watcher, driven by real file writes in a temporary repository: edits, atomic saves,
deletes, a 500-file burst in one batch, ignored paths, .gitignore changes, the writer lock,
signals and recovery after a crash. Every wait polls with a deadline."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from knoxidx.index import Index
from knoxidx.watch import Watcher
from tests.agent.support import Process, knoxidx_command, wait_for, write_whole


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()

    def __call__(self, event: str, data: dict[str, Any]) -> None:
        with self.lock:
            self.events.append((event, data))

    def batches(self) -> list[dict[str, Any]]:
        with self.lock:
            return [d for e, d in self.events if e == "batch" and d["reason"] == "changes"]

    def of(self, event: str) -> list[dict[str, Any]]:
        with self.lock:
            return [d for e, d in self.events if e == event]


@pytest.fixture
def watching(agent_repo: Path) -> Iterator[tuple[Path, Watcher, Recorder]]:
    recorder = Recorder()
    watcher = Watcher(agent_repo, debounce_ms=100, jobs=1, reconcile_s=0, emit=recorder)
    watcher.start()
    wait_for(lambda: watcher.snapshot()["phase"] == "idle", what="the initial update")
    yield agent_repo, watcher, recorder
    watcher.stop()
    assert watcher.snapshot()["phase"] == "stopped"


def names(root: Path, name: str) -> list[str]:
    with Index.open_reader(root) as idx:
        return [s["qualified_name"] for s in idx.symbols(name)
                if s["name"] == name and s["kind"] not in ("Module", "File")]


def test_edit_is_applied(watching: tuple[Path, Watcher, Recorder]) -> None:
    root, _, recorder = watching
    with open(root / "app" / "util.py", "a", encoding="utf-8") as fh:
        fh.write("\n\ndef brand_new(x):\n    return normalise(x)\n")
    wait_for(lambda: names(root, "brand_new"), what="the new function")
    with Index.open_reader(root) as idx:
        callees = idx.callees("brand_new")["callees"]
    assert [c["qualified_name"] for c in callees] == ["app.util.normalise"]
    # the first batch: a writer descheduled between its write and its close gives a second
    # one for the close alone, which changes nothing
    batch = wait_for(recorder.batches)[0]
    assert batch["changed"] == 1 and batch["nodes_delta"] == 1 and batch["edges_delta"] >= 1
    assert batch["sample"] == ["app/util.py"]


def test_the_collector_is_left_as_it_was_found(agent_repo: Path) -> None:
    """The watcher pauses Python's cyclic collector during small batches and freezes the heap
    between them: once it stops, the host process has its collector back, nothing frozen."""
    import gc

    recorder = Recorder()
    watcher = Watcher(agent_repo, debounce_ms=50, jobs=1, reconcile_s=0, emit=recorder)
    watcher.start()
    wait_for(lambda: watcher.snapshot()["phase"] == "idle", what="the initial update")
    # the start's heap goes out of the collector's sight (just after the phase turns idle)
    wait_for(lambda: gc.get_freeze_count() > 0, what="the frozen heap")
    for i in range(3):
        with open(agent_repo / "app" / "util.py", "a", encoding="utf-8") as fh:
            fh.write(f"\n\ndef gc_probe_{i}():\n    return {i}\n")
        wait_for(lambda i=i: names(agent_repo, f"gc_probe_{i}"), what=f"gc_probe_{i}")
        # the collector comes back once the batch is over (its commit, which made the name
        # visible, comes first: asserting at once failed now and then), and an update leaves
        # a freeze made further out in place (gc.unfreeze returns it all)
        wait_for(gc.isenabled, what="the collector after the batch")
        assert gc.get_freeze_count() > 0
    watcher.stop()
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_atomic_save_delete_and_move(watching: tuple[Path, Watcher, Recorder]) -> None:
    root, _, recorder = watching
    # an editor's atomic save: write a temporary file, rename it over the original
    tmp = root / "app" / ".util.py.tmp~"
    tmp.write_text("def read_text(path):\n    return path\n\n\ndef swapped():\n    pass\n")
    os.replace(tmp, root / "app" / "util.py")
    wait_for(lambda: names(root, "swapped"), what="the atomically saved file")
    assert names(root, "normalise") == []
    (root / "app" / "main.py").unlink()
    wait_for(lambda: not names(root, "run"), what="the deleted file's symbols to go")
    os.rename(root / "tools", root / "scripts")  # a directory moved
    wait_for(lambda: names(root, "main") == ["other.main"] and
             Index.open_reader(root).q.file_node("scripts/other.py"), what="the moved tree")
    assert all(b["removed"] + b["changed"] + b["added"] >= 1 for b in recorder.batches())


@pytest.mark.heavy
def test_burst_of_500_files_is_one_batch(agent_repo: Path) -> None:
    burst = agent_repo / "gen"
    burst.mkdir()  # watched from the start: each of its files is heard
    recorder = Recorder()
    watcher = Watcher(agent_repo, debounce_ms=800, jobs=1, reconcile_s=0, emit=recorder)
    watcher.start()
    try:
        wait_for(lambda: watcher.snapshot()["phase"] == "idle", what="the initial update")
        # as a `git checkout` writes them, under git's index lock: a writer descheduled for
        # longer than the debounce mid-burst made two batches of it
        git_lock = agent_repo / ".git" / "index.lock"
        git_lock.parent.mkdir(exist_ok=True)
        git_lock.write_text("")
        for i in range(500):
            (burst / f"m{i:03d}.py").write_text(f"def f{i}():\n    return {i}\n")
        wait_for(lambda: watcher.snapshot()["pending_paths"] == 500, what="the burst's events")
        git_lock.unlink()
        batch = wait_for(recorder.batches, timeout=60, what="the burst's batch")[0]
        assert batch["added"] == 500
        assert batch["nodes_delta"] >= 1000  # 500 files + 500 functions
        assert len(names(agent_repo, "f499")) == 1
        assert len(recorder.batches()) == 1
    finally:
        watcher.stop()


def test_ignored_paths_cost_nothing(watching: tuple[Path, Watcher, Recorder]) -> None:
    root, _, recorder = watching
    for rel in (".git/objects/ab/cdef", ".git/index", "node_modules/lib/index.js",
                "secrets/more.py", "app/debug.log", "app/__pycache__/util.cpython-311.pyc",
                ".knoxidx/scratch", "notes.txt", "app/.util.py.swp"):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    # then one real change: the only batch, with only its own path in it
    (root / "app" / "extra.py").write_text("def extra():\n    pass\n")
    batch = wait_for(recorder.batches, what="a batch")[0]
    assert batch["sample"] == ["app/extra.py"] and batch["paths"] == 1
    # created, modified, closed: the ignored writes were dropped (a writer descheduled between
    # those events gives more than one batch, each of the one path)
    batches = recorder.batches()
    assert all(b["sample"] == ["app/extra.py"] for b in batches)
    assert sum(b["events"] for b in batches) <= 3


def test_gitignore_change_reindexes(watching: tuple[Path, Watcher, Recorder]) -> None:
    root, _, _ = watching
    assert names(root, "main") == ["app.main.main", "other.main"]
    with open(root / ".gitignore", "a", encoding="utf-8") as fh:
        fh.write("tools/\n")
    wait_for(lambda: names(root, "main") == ["app.main.main"], what="tools/ to be dropped")
    (root / ".gitignore").write_text("")
    wait_for(lambda: names(root, "TOKEN"), what="secrets/ to be indexed once not ignored")


def test_a_bad_settings_file_is_one_line_until_fixed(
        watching: tuple[Path, Watcher, Recorder], caplog: pytest.LogCaptureFixture) -> None:
    """A typo in ``knoxidx.toml`` fails each try with the error that names it (as `index`
    does, exit 2), not a traceback per retry; fixed, the waiting edit goes in."""
    root, _, recorder = watching
    (root / "knoxidx.toml").write_text("[index]\nminifed = true\n", encoding="utf-8")
    (root / "app" / "late.py").write_text("def late():\n    return 1\n", encoding="utf-8")
    wait_for(lambda: recorder.of("error"), what="the settings error")
    assert "unknown setting 'index.minifed'" in recorder.of("error")[0]["error"]
    assert not [r for r in caplog.records if r.exc_info], "a user's typo is not a crash"
    (root / "knoxidx.toml").write_text("[index]\nminified = false\n", encoding="utf-8")
    wait_for(lambda: names(root, "late"), timeout=30, what="the edit once the file is fixed")


def test_a_directory_replaced_by_a_link_out_of_the_root_is_dropped(
        watching: tuple[Path, Watcher, Recorder]) -> None:
    """``mv tools elsewhere && ln -s elsewhere tools``: by the time its deletion is heard, the
    path is a link out of the root, which discovery skips; what the directory held must still
    leave the index."""
    root, _, _ = watching
    assert names(root, "main") == ["app.main.main", "other.main"]
    elsewhere = root.parent / "elsewhere"
    (root / "tools").rename(elsewhere)
    (root / "tools").symlink_to(elsewhere, target_is_directory=True)
    wait_for(lambda: names(root, "main") == ["app.main.main"], what="tools/ to be dropped")


def test_holds_the_writer_lock(watching: tuple[Path, Watcher, Recorder]) -> None:
    root, _, _ = watching
    proc = subprocess.run(knoxidx_command("index", str(root)), check=False, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 5
    assert "another knoxidx process" in proc.stderr and "is writing this index" in proc.stderr


def test_watch_command_logs_json_and_stops_on_sigterm(agent_repo: Path) -> None:
    proc = Process(knoxidx_command("watch", str(agent_repo), "--json", "--debounce-ms", "50"))
    try:
        proc.expect(r'"event": "batch".*"reason": "start"', stream="out")
        write_whole(agent_repo, "app/new.py", "def fresh():\n    pass\n")
        line = proc.expect(r'"event": "batch".*"reason": "changes"', stream="out").string
        batch = json.loads(line)
        assert batch["added"] == 1 and batch["ms"] > 0 and batch["nodes_delta"] >= 2
        assert proc.stop(signal.SIGTERM) == 0
        assert json.loads(proc.expect(r'"event": "stop"', stream="out").string)["event"] == "stop"
    finally:
        if proc.proc.poll() is None:
            proc.proc.kill()


def test_a_crash_loses_nothing(agent_repo: Path) -> None:
    proc = Process(knoxidx_command("watch", str(agent_repo), "--debounce-ms", "50"))
    proc.expect(r"initial update", stream="out")
    proc.stop(signal.SIGKILL)  # no cleanup at all
    (agent_repo / "app" / "while_down.py").write_text("def missed():\n    pass\n")
    assert names(agent_repo, "missed") == []
    recorder = Recorder()
    watcher = Watcher(agent_repo, debounce_ms=50, jobs=1, reconcile_s=0, emit=recorder)
    watcher.start()  # the lock died with the process: no stale lock
    try:
        wait_for(lambda: names(agent_repo, "missed"), what="the start-up reconcile")
        start = wait_for(lambda: [d for e, d in recorder.events if e == "batch"])[0]
        assert start["reason"] == "start" and start["added"] == 1
    finally:
        watcher.stop()


def test_serve_with_watch_shows_edits_and_its_state(agent_repo: Path) -> None:
    import httpx

    from tests.agent.support import start_server

    proc, url = start_server(agent_repo, "--watch", "--debounce-ms", "50")
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            wait_for(lambda: client.get("/status").json()["phase"] == "idle",
                     what="the watcher's first update")
            write_whole(agent_repo, "app/util.py", "def served_fresh():\n    pass\n")

            def visible() -> bool:
                return bool(client.get("/symbols?q=served_fresh").json()["symbols"])

            wait_for(visible, what="the edit through the API")
            status = wait_for(lambda: (s := client.get("/status").json())["watcher"][
                "batches"] >= 1 and s, what="the batch in /status")
            assert status["watcher"]["last_batch"]["changed"] == 1
            assert status["phase"] in ("idle", "pending", "indexing")
            # the watcher holds the lock: a second writer is refused
            other = subprocess.run(knoxidx_command("index", str(agent_repo)),
                                   check=False, capture_output=True, text=True, timeout=120)
            assert other.returncode == 5
        assert proc.stop() == 0  # SIGTERM: server and watcher stop cleanly
        proc.expect(r"stopped", stream="err")
    finally:
        if proc.proc.poll() is None:
            proc.proc.kill()


def test_discovery_cache_agrees_with_a_full_walk(agent_repo: Path) -> None:
    from knoxidx.parse.discovery import discover
    from knoxidx.parse.watch_filter import DiscoveryCache, RepoPathFilter

    cache = DiscoveryCache(RepoPathFilter(agent_repo))
    cache.full()
    (agent_repo / "app" / "util.py").write_text("def changed():\n    pass\n")
    (agent_repo / "app" / "main.py").unlink()
    (agent_repo / "app" / "added.py").write_text("X = 1\n")
    (agent_repo / "secrets" / "ignored.py").write_text("Y = 1\n")
    (agent_repo / "app" / "big.py").write_text("#" * (2 * 1024 * 1024))
    (agent_repo / "app" / "notes.txt").write_text("not code\n")
    os.symlink("/etc/hostname", agent_repo / "app" / "outside.py")
    paths = ["app/util.py", "app/main.py", "app/added.py", "secrets/ignored.py",
             "app/big.py", "app/notes.txt", "app/outside.py"]
    patched = cache.patched(paths)
    assert patched is not None
    assert patched.files == discover(agent_repo).files
    assert cache.patched(["app/util.py", ".gitignore"]) is None  # rules changed: walk again


def test_file_edits_skip_the_walk_directories_do_not(
        watching: tuple[Path, Watcher, Recorder], monkeypatch: pytest.MonkeyPatch) -> None:
    from knoxidx.update import graph_update as pipeline

    walks: list[object] = []
    real = pipeline.discover
    monkeypatch.setattr(pipeline, "discover", lambda *a, **k: walks.append(a) or real(*a, **k))
    root, _, recorder = watching
    (root / "app" / "util.py").write_text("def one():\n    pass\n")
    first = wait_for(recorder.batches, what="the edit's batch")[0]
    assert first["discovery"] == "incremental"
    (root / "app" / "sub").mkdir()
    (root / "app" / "sub" / "deep.py").write_text("def deep():\n    pass\n")
    # found by its path, not its place: the edit's events may have come as two batches
    second = wait_for(lambda: [b for b in recorder.batches()
                               if any(p.startswith("app/sub") for p in b["sample"])],
                      what="the new directory's batch")[0]
    assert second["discovery"] == "full"
    wait_for(lambda: names(root, "deep"), what="the file in the new directory")
    assert walks == []  # the pipeline used the watcher's discovery every time


def test_waits_while_git_is_mid_operation(watching: tuple[Path, Watcher, Recorder]) -> None:
    root, watcher, recorder = watching
    lock = root / ".git" / "index.lock"
    lock.parent.mkdir(exist_ok=True)
    lock.write_text("")  # as during `git checkout`
    (root / "app" / "during.py").write_text("def during():\n    pass\n")
    wait_for(lambda: watcher.snapshot()["pending_paths"] == 1, what="the change to be seen")
    deadline = time.monotonic() + 0.6  # several debounce periods
    while time.monotonic() < deadline:  # polled: nothing may happen meanwhile
        assert recorder.batches() == []
        time.sleep(0.01)
    lock.unlink()
    batch = wait_for(recorder.batches, what="the batch after git finished")[0]
    assert batch["added"] == 1


def test_memory_a_mangled_file_took_goes_back_to_the_system(
    watching: tuple[Path, Watcher, Recorder],
) -> None:
    """tree-sitter's error recovery takes ~300 MB for these 2.3 kB (found by bench.fuzz) and
    frees it with the tree; the C library kept the pages, so a watcher that met such a file
    once stayed 300 MB larger until it exited. (The watcher now parses in its standing
    worker, so the watcher's own memory is not where the parse happens at all.)"""
    from knoxidx.core.heap import resident_bytes

    root, _, recorder = watching
    before = resident_bytes()
    (root / "app" / "mangled.py").write_bytes(b"/*" * 200 + b"EOSException\n" + b"/*" * 934)
    wait_for(lambda: any(b["sample"] == ["app/mangled.py"] for b in recorder.batches()),
             what="the mangled file's batch")
    assert resident_bytes() - before < 100 << 20


def _standing_pids() -> set[int]:
    from knoxidx.parse.standing import STANDING

    standing = STANDING.get()
    pool = standing._pool if standing is not None else None
    return set(pool._processes or ()) if pool is not None else set()


def test_the_watcher_parses_in_one_standing_capped_worker(
    agent_repo: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A watcher's batches parse in one worker that outlives them (not in the watcher, which a
    runaway parse used to take down, nor in a worker forked from the threaded watcher per
    batch); a file that kills that worker is an error, the next worker takes the next save."""
    monkeypatch.setenv("KNOXIDX_WORKER_MEMORY_MB", "150")
    recorder = Recorder()
    watcher = Watcher(agent_repo, debounce_ms=50, jobs=1, reconcile_s=0, emit=recorder)
    watcher.start()
    try:
        wait_for(lambda: watcher.snapshot()["phase"] == "idle", what="the initial update")
        util = agent_repo / "app" / "util.py"
        pids = []
        for i in range(2):
            with open(util, "a", encoding="utf-8") as fh:
                fh.write(f"\n\ndef standing_{i}():\n    return {i}\n")
            wait_for(lambda i=i: names(agent_repo, f"standing_{i}"), what=f"standing_{i}")
            pids.append(_standing_pids())
        assert len(pids[0]) == 1 and pids[0] == pids[1]  # the same worker, both times
        assert os.getpid() not in pids[0]
        # ~760 MB uncapped: over the cap, the worker dies of it
        (agent_repo / "app" / "mangled.py").write_bytes(
            b"/*" * 200 + b"EOSException\n" + b"/*" * 1500)
        wait_for(lambda: any("mangled.py: the parse worker died" in w.get("message", "")
                             for w in recorder.of("warning")), what="the dead worker's warning")
        with open(util, "a", encoding="utf-8") as fh:
            fh.write("\n\ndef after_the_death():\n    return 2\n")
        wait_for(lambda: names(agent_repo, "after_the_death"), what="the save after it")
        assert _standing_pids() and _standing_pids() != pids[0]
        # the batch's names are visible from its commit; the watcher says idle a moment later
        # (it counts the totals first): asserted at once, this failed once in ~12 loaded runs
        wait_for(lambda: watcher.snapshot()["phase"] == "idle", what="idle after the save")
    finally:
        watcher.stop()
    assert _standing_pids() == set()  # gone with the watcher


def _kernel_watch_limit(monkeypatch: pytest.MonkeyPatch, allowed: int) -> None:
    """The kernel's per-user inotify watch limit, reached after ``allowed`` more watches: from
    then on ``inotify_add_watch`` fails with ENOSPC, as the kernel's does once
    ``fs.inotify.max_user_watches`` is reached (a system-wide setting a test cannot lower).
    The observer, its inotify instance and every watch placed before are real."""
    import ctypes
    import errno

    from watchdog.observers import inotify_c

    real = inotify_c.inotify_add_watch
    left = [allowed]

    def add_watch(fd: int, path: bytes, mask: int) -> int:
        if left[0] <= 0:
            ctypes.set_errno(errno.ENOSPC)
            return -1
        left[0] -= 1
        return real(fd, path, mask)

    monkeypatch.setattr(inotify_c, "inotify_add_watch", add_watch)


def _limited_tree(tmp_path: Path) -> None:
    for rel in ("a/x", "a/y", "b/x", "c"):
        (tmp_path / rel).mkdir(parents=True)
    (tmp_path / "a" / "x" / "ax.py").write_text("def ax():\n    return 1\n")
    (tmp_path / "b" / "bx.py").write_text("def bx():\n    return 1\n")
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1, retrieval=False)


def _limit_warning(watcher: Watcher, recorder: Recorder) -> str:
    wait_for(lambda: watcher.snapshot()["phase"] == "idle", what="the initial update")
    (warning,) = [w["message"] for w in recorder.of("warning")]
    assert warning.startswith("the inotify watch limit is reached "
                              "(fs.inotify.max_user_watches = ")
    assert "every 0.5 s" in warning
    assert watcher.snapshot()["watch_limited"] is True
    return warning


def test_the_inotify_watch_limit_is_a_warning_and_a_re_walk_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a repository with more directories than the kernel lets one user watch, the watcher
    stopped with a traceback ("OSError: inotify watch limit reached") when a top-level
    directory could not be watched. Now the watcher starts, says which limit and how to raise
    it, and re-walks the tree every ``limited_reconcile_s`` to find what changed where nothing
    is watched; what is watched still arrives at once."""
    _limited_tree(tmp_path)
    # room for the root and the whole of a (a, a/x, a/y); b and c are refused
    _kernel_watch_limit(monkeypatch, allowed=4)
    recorder = Recorder()
    watcher = Watcher(tmp_path, debounce_ms=50, jobs=1, reconcile_s=0, emit=recorder,
                      retrieval=False, limited_reconcile_s=0.5)
    watcher.start()
    try:
        assert "(top-level: b, c)" in _limit_warning(watcher, recorder)
        (tmp_path / "a" / "x" / "watched.py").write_text("def watched():\n    return 1\n")
        (tmp_path / "a" / "y" / "also_watched.py").write_text(
            "def also_watched():\n    return 1\n")
        (tmp_path / "c" / "refused.py").write_text("def refused():\n    return 1\n")
        for name in ("watched", "also_watched", "refused"):
            wait_for(lambda name=name: names(tmp_path, name), what=name)
        # the batch events follow the commits that made the names visible
        wait_for(lambda: {"changes", "reconcile"} <= {b["reason"] for b in recorder.of("batch")},
                 what="both batches' events")
        reasons = [b["reason"] for b in recorder.of("batch")]
        assert "changes" in reasons and "reconcile" in reasons
    finally:
        watcher.stop()


def test_a_subdirectory_over_the_watch_limit_is_found_by_the_re_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A top-level directory with room for some of its subdirectories' watches only: watchdog
    up to 7.1.0 watched the rest of it and left the subdirectory unwatched without a word (the
    watcher notices that no watch is left: its own probe); watchdog 7.1.1 refuses the whole
    directory (found when the registry started serving 7.1.1: the warning named a, b and c,
    where this test expected b and c). Either way the watcher warns and the re-walk finds a
    save in the unwatched subdirectory."""
    _limited_tree(tmp_path)
    _kernel_watch_limit(monkeypatch, allowed=3)  # the root, a and a/x; not a/y, b, c
    recorder = Recorder()
    watcher = Watcher(tmp_path, debounce_ms=50, jobs=1, reconcile_s=0, emit=recorder,
                      retrieval=False, limited_reconcile_s=0.5)
    watcher.start()
    try:
        warning = _limit_warning(watcher, recorder)
        assert "(top-level: b, c)" in warning or "(top-level: a, b, c)" in warning
        (tmp_path / "a" / "y" / "silent.py").write_text("def silent():\n    return 1\n")
        wait_for(lambda: names(tmp_path, "silent"), what="silent")
        # the batch event follows the commit that made the name visible
        wait_for(lambda: "reconcile" in [b["reason"] for b in recorder.of("batch")],
                 what="the re-walk's batch event")
        assert "reconcile" in [b["reason"] for b in recorder.of("batch")]
    finally:
        watcher.stop()


def test_without_the_limit_everything_is_watched(watching: tuple[Path, Watcher, Recorder]) -> None:
    _, watcher, recorder = watching
    assert watcher.snapshot()["watch_limited"] is False
    assert not [w for w in recorder.of("warning") if "inotify" in w["message"]]


def test_a_file_whose_name_is_not_utf8_does_not_stall_the_watcher(tmp_path: Path) -> None:
    """Saving a file whose name is not valid UTF-8 put its path in the batch; the JSON log line
    of the batch (``knoxidx watch --json``, written to a strict UTF-8 stream) then failed, so
    the batch failed and was retried for ever, with every later edit behind it. Such a path is
    now dropped where events arrive (discovery skips it anyway)."""
    import io

    from knoxidx.watch_log import line_emitter

    (tmp_path / "a.py").write_text("def a():\n    return 1\n")
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # as strict as a real stdout
    emitted: list[str] = []
    log_line = line_emitter(out, True)

    def emit(event: str, data: dict[str, Any]) -> None:
        log_line(event, data)
        emitted.append(event)

    watcher = Watcher(tmp_path, debounce_ms=50, jobs=1, reconcile_s=0, emit=emit,
                      retrieval=False)
    watcher.start()
    try:
        wait_for(lambda: watcher.snapshot()["phase"] == "idle", what="the initial update")
        with open(os.path.join(os.fsencode(tmp_path), b"bad\xff.py"), "wb") as fh:
            fh.write(b"def bad():\n    return 1\n")
        (tmp_path / "good.py").write_text("def good_after():\n    return 1\n")
        wait_for(lambda: names(tmp_path, "good_after"), what="the edit after it")
        assert "error" not in emitted and watcher.snapshot()["error"] == ""
    finally:
        watcher.stop()


def remove_tree_as_rm_rf(path: Path) -> None:
    """``rm -rf``: a file that is gone already is no error, and a file the running watcher
    writes meanwhile (its state, published by a rename) is removed on the next pass."""
    import shutil

    def gone_already(func: Any, name: str, exc_info: Any) -> None:
        if not issubclass(exc_info[0], FileNotFoundError):
            raise exc_info[1]

    for _ in range(20):
        try:
            shutil.rmtree(path, onerror=gone_already)
            return
        except OSError:  # the directory was not empty any more: go again
            time.sleep(0.05)
    shutil.rmtree(path, onerror=gone_already)


def test_a_deleted_index_stops_the_watcher_with_the_fix(tmp_path: Path) -> None:
    """``rm -rf .knoxidx`` (or ``git clean -xdf``) under a running watcher: it went on writing
    into the deleted file, idle and content, while every reader found no index. It now stops
    at the next batch and says what happened and what to do."""
    (tmp_path / "a.py").write_text("def a():\n    return 1\n")
    recorder = Recorder()
    watcher = Watcher(tmp_path, debounce_ms=50, jobs=1, reconcile_s=0, emit=recorder,
                      retrieval=False)
    watcher.start()
    try:
        wait_for(lambda: watcher.snapshot()["phase"] == "idle", what="the initial update")
        remove_tree_as_rm_rf(tmp_path / ".knoxidx")
        (tmp_path / "b.py").write_text("def b():\n    return 1\n")
        wait_for(lambda: watcher.snapshot()["phase"] == "failed", what="the watcher to stop")
        (error,) = [e for e in recorder.of("error") if e["fatal"]]
        assert "was deleted or replaced while this watcher held it" in error["error"]
        assert "start `knoxidx watch` again" in error["error"]
    finally:
        watcher.stop()
    # and a new watcher rebuilds it
    restarted = Watcher(tmp_path, debounce_ms=50, jobs=1, reconcile_s=0, retrieval=False)
    restarted.start()
    try:
        wait_for(lambda: restarted.snapshot()["phase"] == "idle", what="the rebuild")
        assert names(tmp_path, "b") == ["b.b"]
    finally:
        restarted.stop()


def test_status_sees_a_watcher_in_another_process(agent_repo: Path) -> None:
    """`/status` and MCP `index_status` said "not watching" while a separate `knoxidx watch`
    kept the index fresh; they show it now, and not once it is killed (its state file left
    behind is not taken for a live watcher)."""
    import httpx

    from knoxidx.api.readers import status_of
    from tests.agent.support import start_server

    server, url = start_server(agent_repo)
    watch = Process(knoxidx_command("watch", str(agent_repo), "--debounce-ms", "50"))
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            status = wait_for(lambda: (s := client.get("/status").json())["phase"] == "idle"
                              and s, what="the separate watcher's first update in /status")
            assert status["watcher"]["process"] == "separate"
            assert status["watcher"]["pid"] == watch.proc.pid
            write_whole(agent_repo, "app/util.py", "def watched_elsewhere():\n    pass\n")
            status = wait_for(lambda: (s := client.get("/status").json())["watcher"][
                "batches"] >= 1 and s, what="the batch in /status")
            assert status["watcher"]["last_batch"]["changed"] == 1
            with Index.open_reader(agent_repo) as idx:  # what MCP's index_status answers
                mcp_status = status_of(idx, None)
            assert mcp_status["phase"] != "not watching"
            assert mcp_status["watcher"]["pid"] == watch.proc.pid
            watch.stop(signal.SIGKILL)
            assert (agent_repo / ".knoxidx" / "watcher.json").exists()
            status = client.get("/status").json()
            assert status["phase"] == "not watching" and status["watcher"] is None
    finally:
        if watch.proc.poll() is None:
            watch.proc.kill()
        server.stop()
