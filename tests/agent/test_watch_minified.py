"""The watcher skips a file that an edit makes minified, and indexes it again once readable."""

from __future__ import annotations

from pathlib import Path

from knoxidx.index import Index
from knoxidx.watch import Watcher
from tests.agent.support import wait_for
from tests.agent.test_watch import Recorder
from tests.test_minified import MINIFIED_LIB, READABLE_LIB


def status_of(root: Path, path: str) -> str | None:
    with Index.open_reader(root) as idx:
        state = idx.store.file_states().get(path)
        return state.status if state else None


def test_watch_skips_a_minified_file_and_indexes_it_once_readable(agent_repo: Path) -> None:
    recorder = Recorder()
    watcher = Watcher(agent_repo, debounce_ms=100, jobs=1, reconcile_s=0, emit=recorder)
    watcher.start()
    try:
        wait_for(lambda: watcher.snapshot()["phase"] == "idle", what="the initial update")
        (agent_repo / "lib.js").write_text(MINIFIED_LIB, encoding="utf-8")
        wait_for(lambda: status_of(agent_repo, "lib.js") == "minified", what="the skip")
        with Index.open_reader(agent_repo) as idx:
            assert not [s for s in idx.symbols("helper") if s["path"] == "lib.js"]
        (agent_repo / "lib.js").write_text(READABLE_LIB, encoding="utf-8")
        wait_for(lambda: status_of(agent_repo, "lib.js") == "ok", what="the readable file")
        with Index.open_reader(agent_repo) as idx:
            assert [s["path"] for s in idx.symbols("helper") if s["name"] == "helper"] == \
                ["lib.js"]
    finally:
        watcher.stop()


def test_a_settings_file_saved_while_watching_applies_at_once(agent_repo: Path) -> None:
    """``knoxidx.toml`` is no source file, yet its ``[index] minified`` decides what is read:
    saving it is a change the watcher must act on, not wait for its next re-walk."""
    (agent_repo / "lib.js").write_text(MINIFIED_LIB, encoding="utf-8")
    recorder = Recorder()
    watcher = Watcher(agent_repo, debounce_ms=100, jobs=1, reconcile_s=0, emit=recorder)
    watcher.start()
    try:
        wait_for(lambda: status_of(agent_repo, "lib.js") == "minified", what="the skip")
        (agent_repo / "knoxidx.toml").write_text("[index]\nminified = true\n", encoding="utf-8")
        wait_for(lambda: status_of(agent_repo, "lib.js") == "ok", what="the setting applied")
        (agent_repo / "knoxidx.toml").unlink()
        wait_for(lambda: status_of(agent_repo, "lib.js") == "minified", what="the default back")
    finally:
        watcher.stop()
