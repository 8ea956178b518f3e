"""HTTP load (quick form, no timing assertion: the machine running the tests may be busy;
``python -m bench.reliability`` holds the target of >= 200 req/s with p99 < 200 ms for 60 s):
a closed loop of mixed symbols/callers/search requests from this process against a
`knoxidx serve` process gets no error and no status but 200."""

from __future__ import annotations

from pathlib import Path

from bench.reliability.load import load
from tests.test_crash import make_repo


def test_mixed_load_has_zero_errors(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    make_repo(corpus, 60)
    outcome = load(corpus, seconds=3, workdir=tmp_path)
    assert outcome.ok, (outcome.failures, outcome.figures)
    assert outcome.figures["requests"] > 50
    assert set(outcome.figures["p99_ms_by_kind"]) == {"/symbols", "/callers", "/search"}
