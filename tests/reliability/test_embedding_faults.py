"""Embedding API faults, filling what tests/retrieval/test_voyage.py and test_resilience.py
leave open (audit in RELIABILITY.md): a connection reset, jitter on the real client's
retries, the breaker counting exactly 5 consecutive failures across calls and half-opening
after 60 s, and, end to end through ``Index.update(embed=True)``, an outage mid-run: the
update finishes, the chunks it could not embed stay pending with the error noted, and the next
run embeds them; no chunk lost, none embedded twice.

The real ``voyageai`` client talks to a fake Voyage server on 127.0.0.1; clocks and sleeps
are injected."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from knoxidx.index import Index
from knoxidx.retrieval.errors import CircuitOpenError, RetriesExhaustedError
from knoxidx.retrieval.resilience import BreakerState, CircuitBreaker, Resilient, RetryPolicy
from tests.helpers import write_tree
from tests.retrieval.fake_voyage import Clock, FakeVoyage

pytest.importorskip("voyageai")




def voyage(fake: FakeVoyage, *, attempts: int = 4, rng: float = 0.0, clock: Clock | None = None,
           timeout: float = 30.0, **kwargs: object) -> tuple[object, list[float]]:
    from knoxidx.retrieval.voyage import VoyageEmbedder

    sleeps: list[float] = []
    resilient = Resilient(RetryPolicy(max_attempts=attempts),
                          breaker=CircuitBreaker(clock=clock or Clock()),
                          sleep=sleeps.append, rng=lambda: rng)
    embedder = VoyageEmbedder(api_key="test-key", base_url=fake.base_url, timeout=timeout,
                              resilient=resilient, output_dimension=256, **kwargs)
    return embedder, sleeps


def test_connection_reset_is_retried(fake: FakeVoyage) -> None:
    fake.then(("reset",), ("reset",), ("ok",))
    embedder, sleeps = voyage(fake)
    assert embedder.embed_documents(["def a(): pass"]).shape == (1, 256)
    assert len(fake.requests) == 3 and sleeps == [0.5, 1.0]


def test_backoff_carries_jitter_through_the_client(fake: FakeVoyage) -> None:
    fake.then(("status", 500), ("status", 502), ("ok",))
    embedder, sleeps = voyage(fake, rng=1.0)  # the most jitter the policy allows: +25 %
    embedder.embed_documents(["x"])
    assert sleeps == [pytest.approx(0.625), pytest.approx(1.25)]


def test_breaker_counts_five_consecutive_failures_across_calls_then_half_opens(
        fake: FakeVoyage) -> None:
    clock = Clock()
    embedder, _ = voyage(fake, attempts=1, clock=clock)
    fake.then(*[("status", 503)] * 4, ("ok",), *[("status", 500)] * 5)
    for _ in range(4):
        with pytest.raises(RetriesExhaustedError):
            embedder.embed_documents(["x"])
    embedder.embed_documents(["x"])  # a success resets the count
    breaker = embedder.resilient.breaker
    for i in range(5):
        assert breaker.state is BreakerState.CLOSED, i
        with pytest.raises(RetriesExhaustedError):
            embedder.embed_documents(["y"])
    assert breaker.state is BreakerState.OPEN
    sent = len(fake.requests)
    with pytest.raises(CircuitOpenError):
        embedder.embed_documents(["z"])
    assert len(fake.requests) == sent  # open: failing fast, nothing sent
    clock.now += 59.9
    with pytest.raises(CircuitOpenError):
        embedder.embed_documents(["z"])
    clock.now += 0.1
    assert breaker.state is BreakerState.HALF_OPEN
    embedder.embed_documents(["z"])  # the probe goes through
    assert len(fake.requests) == sent + 1


def test_outage_mid_index_finishes_leaves_pending_and_the_next_run_embeds_them(
        tmp_path: Path, fake: FakeVoyage, monkeypatch: pytest.MonkeyPatch) -> None:
    from knoxidx.update import retrieval_steps as api

    body = "".join(f"    y{j} = x * {j}  # step {j} of the computation\n" for j in range(60))
    files = {f"pkg/m{i}.py": "".join(  # functions big enough to be a chunk each
        f"def f{i}_{k}(x):\n    '''Step {k} of module {i}.'''\n{body}    return x\n\n\n"
        for k in range(3)) for i in range(6)}
    root = write_tree(tmp_path / "repo", {"pkg/__init__.py": "", **files})
    clock = Clock()
    # the one timeout below waits this long; every answer must come within it (a loaded
    # machine's fake that answered late made the client send a batch twice)
    embedder, _ = voyage(fake, attempts=3, clock=clock, max_texts=4, timeout=5.0)
    monkeypatch.setattr(api, "select_embedder", lambda *a, **k: embedder)
    monkeypatch.setattr(api, "EMBED_BATCH", 4)
    # two batches answered (each chunk goes with its declaration: two requests a batch), then
    # the service fails: timeouts, 429s, 500s, garbage, resets
    fake.then(("ok",), ("ok",), ("ok",), ("ok",), ("hang",), ("status", 429, {"Retry-After": "1"}),
              ("status", 500), ("raw", 200, b"{not json"), ("reset",), *[("status", 503)] * 20)
    with Index.open(root, create=True) as idx:
        report = idx.update(jobs=1, embed=True)  # finishes, despite the outage
        first = report.retrieval
        chunks = first["chunks"]
        assert first["embedded"] == 8 and first["stopped"]
        assert first["pending"] == chunks - 8 > 0
    conn = sqlite3.connect(root / ".knoxidx" / "index.db")
    noted = conn.execute("SELECT count(*) FROM embed_pending WHERE attempts > 0 AND "
                         "last_error != ''").fetchone()[0]
    conn.close()
    assert noted >= 1  # the failed batch says why it waits
    fake.actions.clear()  # the service is back
    clock.now += 61  # (were the breaker open, it would half-open now)
    with Index.open(root) as idx:
        again = idx.update(jobs=1, embed=True).retrieval
        assert again["pending"] == 0 and not again["stopped"]
        assert again["embedded"] + again["from_cache"] == chunks - 8
        status = idx.status()["retrieval"]
    assert status["embedded"] == status["chunks"] == chunks  # no chunk lost
    conn = sqlite3.connect(root / ".knoxidx" / "index.db")
    declared, embedded = conn.execute(
        "SELECT count(*), count(vector) FROM chunk_declaration").fetchone()
    conn.close()
    assert declared == embedded == 18  # nor a declaration
    texts = fake.embedded_texts()
    assert len(texts) == len(set(texts)) == chunks + declared  # none embedded twice
