"""SIGKILL of the watch daemon mid-batch (quick form): on restart the index is reconciled
with the files on disk: nothing missed, no ghost nodes."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.reliability.kill_watch import kill_watch
from tests.test_crash import make_repo


@pytest.mark.heavy
def test_killed_watcher_reconciles_on_restart(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    make_repo(corpus, 60)
    outcome = kill_watch(corpus, trials=2, seed=5, workdir=tmp_path)
    assert outcome.ok, (outcome.failures, outcome.figures)
