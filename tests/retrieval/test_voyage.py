from __future__ import annotations

import numpy as np
import pytest
from fake_voyage import Clock, FakeVoyage
from pydefs import python_definitions
from retrieval_support import HashEmbedder

from knoxidx.retrieval.backends import select_embedder, select_reranker
from knoxidx.retrieval.chunker import ChunkBudget, chunk_file
from knoxidx.retrieval.errors import (
    CircuitOpenError,
    EmbeddingConfigError,
    RetriesExhaustedError,
    ServiceError,
)
from knoxidx.retrieval.hybrid_search import HybridSearch
from knoxidx.retrieval.resilience import BreakerState, CircuitBreaker, Resilient, RetryPolicy
from knoxidx.retrieval.voyage import VoyageEmbedder, VoyageReranker, parse_retry_after
from knoxidx.update.embedding_refresh import embed_pending, update_file

pytest.importorskip("voyageai")




def make(
    fake: FakeVoyage, *, timeout: float = 30.0, attempts: int = 4, **kwargs
) -> tuple[VoyageEmbedder, list[float], Clock]:
    sleeps: list[float] = []
    clock = Clock()
    resilient = Resilient(
        RetryPolicy(max_attempts=attempts),
        breaker=CircuitBreaker(clock=clock),
        sleep=sleeps.append,
        rng=lambda: 0.0,
    )
    embedder = VoyageEmbedder(
        api_key="test-key", base_url=fake.base_url, timeout=timeout, resilient=resilient, **kwargs
    )
    return embedder, sleeps, clock


def test_embeds_documents_and_queries_with_input_types(fake: FakeVoyage) -> None:
    embedder, _, _ = make(fake, output_dimension=256)
    vectors = embedder.embed_documents(["def a(): pass", "def b(): pass"])
    query = embedder.embed_query("find a")
    assert vectors.shape == (2, 256) and query.shape == (256,)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    (path1, first), (_, second) = fake.requests
    assert path1 == "/v1/embeddings" and first["model"] == "voyage-code-3"
    assert first["input_type"] == "document" and second["input_type"] == "query"
    assert first["output_dimension"] == 256 and first["truncation"] is True
    assert embedder.model_id == "voyage/voyage-code-3/256"


def test_batches_respect_count_and_token_limits(fake: FakeVoyage) -> None:
    embedder, _, _ = make(fake, max_texts=3, max_tokens=40)
    texts = [f"word{i} " * 5 for i in range(7)] + ["long " * 35]
    vectors = embedder.embed_documents(texts)
    assert vectors.shape == (8, 1024)
    sizes = [len(body["input"]) for _, body in fake.requests]
    assert sum(sizes) == 8 and max(sizes) <= 3
    assert fake.embedded_texts() == texts
    assert len(fake.requests) == 4  # the 35-token text could not share a 40-token request


def test_429_is_retried_after_retry_after(fake: FakeVoyage) -> None:
    fake.then(("status", 429, {"Retry-After": "3"}), ("ok",))
    embedder, sleeps, _ = make(fake)
    assert embedder.embed_documents(["x"]).shape == (1, 1024)
    assert sleeps == [3.0]


def test_500s_are_retried_with_backoff(fake: FakeVoyage) -> None:
    fake.then(("status", 500), ("status", 503), ("ok",))
    embedder, sleeps, _ = make(fake)
    embedder.embed_documents(["x"])
    assert sleeps == [0.5, 1.0] and len(fake.requests) == 3


def test_timeouts_are_retried(fake: FakeVoyage) -> None:
    fake.then(("hang",), ("ok",))
    # a timeout short enough for the test, which a loaded machine may also reach while the
    # fake answers: then the next attempt is answered too, after one more wait
    embedder, sleeps, _ = make(fake, timeout=1.0)
    assert embedder.embed_documents(["x"]).shape == (1, 1024)
    assert sleeps[0] == 0.5 and len(fake.requests) == len(sleeps) + 1


@pytest.mark.parametrize(
    "garbage",
    [
        b"{not json",
        b'{"object": "list"}',
        b'{"data": [{"embedding": [1, 2]}], "usage": {"total_tokens": 1}}',
    ],
)
def test_malformed_answers_are_retried(fake: FakeVoyage, garbage: bytes) -> None:
    fake.then(("raw", 200, garbage), ("ok",))
    embedder, sleeps, _ = make(fake)
    assert embedder.embed_documents(["x"]).shape == (1, 1024)
    assert len(sleeps) == 1


@pytest.mark.parametrize("status", [400, 401, 422])
def test_client_errors_fail_at_once(fake: FakeVoyage, status: int) -> None:
    fake.then(("status", status))
    embedder, sleeps, _ = make(fake)
    with pytest.raises(ServiceError) as info:
        embedder.embed_documents(["x"])
    assert info.value.status == status and not info.value.retryable
    assert sleeps == [] and len(fake.requests) == 1


def test_persistent_failure_exhausts_retries(fake: FakeVoyage) -> None:
    fake.then(*[("status", 500)] * 4)
    embedder, _, _ = make(fake)
    with pytest.raises(RetriesExhaustedError):
        embedder.embed_documents(["x"])


def test_outage_leaves_chunks_pending_and_a_later_run_finishes_without_duplicates(
    fake, store
) -> None:
    source = "\n\n".join(
        f"def f{i}(x):\n    return x + {i}\n" + "    # pad\n" * 40 for i in range(6)
    ).encode()
    chunks = chunk_file(
        "m.py",
        source,
        "python",
        python_definitions(source),
        budget=ChunkBudget(merge_tokens=16, min_tokens=1),
    )
    update_file(store, "m.py", chunks)
    total = store.pending_count()
    assert total >= 6
    embedder, _, clock = make(fake, max_texts=1, attempts=10)
    # the first batch works (its chunk, then its one declaration: a text per request), then
    # the service goes down
    fake.then(("ok",), ("ok",), *[("status", 503)] * 5)
    report = embed_pending(store, embedder, batch_size=1)
    assert report.embedded == 1 and report.pending == total - 1 and report.stopped
    assert embedder.resilient.breaker.state is BreakerState.OPEN
    requests_before = len(fake.requests)
    report = embed_pending(store, embedder, batch_size=1)  # breaker open: fails fast, no request
    assert len(fake.requests) == requests_before and report.pending == total - 1
    assert "failing" in report.stopped
    clock.now += 61  # half-open: probes go through, service is back
    report = embed_pending(store, embedder, batch_size=1)
    assert report.pending == 0 and report.embedded + report.from_cache == total - 1
    assert store.vector_count() == total
    texts = fake.embedded_texts()
    assert len(texts) == len(set(texts))  # nothing embedded twice (identical chunks share one)
    assert embedder.resilient.breaker.state is BreakerState.CLOSED


def test_rerank(fake: FakeVoyage) -> None:
    reranker = VoyageReranker(
        api_key="k", base_url=fake.base_url, resilient=Resilient(sleep=lambda s: None)
    )
    ranked = reranker.rerank(
        "parse the config file", ["draw a circle", "parse config file values"], 2
    )
    assert [i for i, _ in ranked] == [1, 0]
    path, body = fake.requests[-1]
    assert path == "/v1/rerank" and body["model"] == "rerank-2.5"


def test_search_falls_back_when_rerank_is_down(fake, store) -> None:
    source = (
        b"def parse_config(path):\n    return open(path).read()\n\n\n"
        + b"def draw_circle(r):\n    return r\n"
        + b"# x\n" * 300
    )
    update_file(store, "a.py", chunk_file("a.py", source, "python", [], budget=None))
    breaker = CircuitBreaker(clock=Clock(), failure_threshold=1)
    reranker = VoyageReranker(
        api_key="k",
        base_url=fake.base_url,
        resilient=Resilient(RetryPolicy(max_attempts=1), breaker=breaker),
    )
    fake.then(("status", 500))
    search = HybridSearch(store, HashEmbedder(), reranker=reranker)
    results = search.search("parse config")
    assert results and "rerank" not in results[0].sources
    with pytest.raises(CircuitOpenError):
        breaker.allow()
    assert search.search("parse config")  # still answers while the breaker is open


def test_selection_and_configuration_errors(monkeypatch) -> None:
    assert select_embedder(env={}).model_id.startswith("local/")
    with pytest.raises(EmbeddingConfigError):
        select_embedder(env={"KNOXIDX_EMBEDDER": "voyage"})
    voyage = select_embedder(
        env={"KNOXIDX_EMBEDDER": "voyage", "VOYAGE_API_KEY": "k", "KNOXIDX_VOYAGE_DIMENSION": "512"}
    )
    assert voyage.model_id == "voyage/voyage-code-3/512" and voyage.dimension == 512
    with pytest.raises(EmbeddingConfigError):
        select_embedder({"embedder": "nope"}, env={})
    with pytest.raises(EmbeddingConfigError):
        VoyageEmbedder(api_key="k", output_dimension=300)
    assert select_reranker(env={}) is None
    reranker = select_reranker(env={"KNOXIDX_EMBEDDER": "voyage", "VOYAGE_API_KEY": "k"})
    assert isinstance(reranker, VoyageReranker) and reranker.model == "rerank-2.5"


def test_parse_retry_after() -> None:
    assert parse_retry_after("5") == 5.0
    assert parse_retry_after(None) is None
    assert parse_retry_after(
        "Wed, 21 Oct 2015 07:28:10 GMT", now=lambda: 1445412480.0
    ) == pytest.approx(10.0)
    assert parse_retry_after("soon") is None
