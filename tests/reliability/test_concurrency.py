"""The watch daemon writing while 8 readers hammer the HTTP API (quick form: a few seconds;
``python -m bench.reliability`` runs 60 s on a real corpus): zero failed requests, and no
reader ever sees a half-applied batch."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.reliability.concurrency import concurrency
from tests.test_crash import make_repo


@pytest.mark.heavy
def test_readers_never_fail_nor_see_half_a_batch(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    make_repo(corpus, 40)
    # at least 3 generations however slow the machine, not as many as 4 s allow
    outcome = concurrency(corpus, seconds=4, workdir=tmp_path, min_generations=3)
    assert outcome.ok, (outcome.failures, outcome.figures)
    assert outcome.figures["batches_written"] >= 3
    assert outcome.figures["pair_checks"] >= 20
