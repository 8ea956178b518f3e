"""The watcher follows HEAD: a commit, a branch switch or a reset that leaves every file as it
was still changes what the history answers (a definition's creation, its changes)."""

from __future__ import annotations

from pathlib import Path

from knoxidx.history.tables import tables_of
from knoxidx.index import Index
from knoxidx.watch import Watcher
from tests.agent.support import wait_for
from tests.agent.test_watch import Recorder
from tests.history.gitrepo import Repo, git


def stored_head(root: Path) -> str | None:
    with Index.open_reader(root) as idx:
        tables = tables_of(idx.store)
        return tables.get("head") if tables is not None else None


def test_a_commit_that_changes_no_file_reaches_the_history(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    first = repo.commit("add greet", {"app.py": "def greet():\n    return 1\n"})
    with Index.open(repo.root, create=True) as idx:
        idx.update(jobs=1)
    watcher = Watcher(repo.root, debounce_ms=100, jobs=1, reconcile_s=0, emit=Recorder())
    watcher.start()
    try:
        wait_for(lambda: watcher.snapshot()["phase"] == "idle", what="the initial update")
        assert stored_head(repo.root) == first
        second = repo.commit("nothing but a message", {})
        wait_for(lambda: stored_head(repo.root) == second, what="the new commit")
        git(repo.root, "reset", "-q", "--soft", first)
        wait_for(lambda: stored_head(repo.root) == first, what="the reset")
    finally:
        watcher.stop()
