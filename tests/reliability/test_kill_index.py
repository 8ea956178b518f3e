"""SIGKILL of ``knoxidx index`` at random points (quick form; ``python -m bench.reliability``
runs >= 50 trials over a real corpus): integrity ok, the kill leaves the old graph or the new
one, the next run completes and equals a clean rebuild, and the search side catches up."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.reliability.kill_index import kill_index
from tests.test_crash import make_repo


@pytest.mark.heavy
def test_killed_indexer_loses_nothing(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    make_repo(corpus, 80)
    outcome = kill_index(corpus, trials=2, seed=3, workdir=tmp_path)
    assert outcome.ok, (outcome.failures, outcome.figures)
