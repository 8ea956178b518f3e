"""Voyage AI: ``voyage-code-3`` embeddings and ``rerank-2.5``, through the official client.

The client's own retries are switched off (``max_retries=0``); every call goes through
:class:`~knoxidx.retrieval.resilience.Resilient`, with the client's exceptions translated to
:class:`ServiceError` first. Requests stay inside Voyage's documented limits: at most 1,000
texts and 120K tokens per embedding request for voyage-code-3 (we count with the local
tokenizer and keep a safety margin, since Voyage's tokenizer is not available offline).

Every text goes through an :class:`~knoxidx.retrieval.egress.Egress` gate first (never-send
files refused, secrets masked, the request written to the ledger), inside the retried call, so
each HTTP attempt is recorded; with ``$KNOXIDX_OFFLINE`` set no client is ever created.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from knoxidx.core.config import endpoint_problem
from knoxidx.retrieval.chunker import Chunk
from knoxidx.retrieval.egress import Egress, Outgoing, offline_from_env
from knoxidx.retrieval.errors import EmbeddingConfigError, ModelUnavailableError, ServiceError
from knoxidx.retrieval.resilience import CircuitBreaker, Resilient, RetryPolicy, is_retryable_status
from knoxidx.retrieval.text_views import full_view
from knoxidx.retrieval.tokens import TokenCounter, default_counter

if TYPE_CHECKING:
    import numpy as np

T = TypeVar("T")

VOYAGE_DIMENSIONS = (256, 512, 1024, 2048)
MAX_TEXTS_PER_REQUEST = 1000
MAX_TOKENS_PER_REQUEST = 120_000
TOKEN_SAFETY = 0.7  # our WordPiece count vs Voyage's tokenizer: leave room
MIN_ATTEMPT_TIMEOUT = 0.1  # seconds: an attempt begun just inside a deadline still gets to try


def _client(api_key: str | None, base_url: str | None, timeout: float) -> Any:
    if offline_from_env():
        raise EmbeddingConfigError("offline ($KNOXIDX_OFFLINE): no Voyage client is created")
    if not api_key:
        raise EmbeddingConfigError("the Voyage embedder needs VOYAGE_API_KEY")
    problem = endpoint_problem(base_url) if base_url is not None else ""
    if problem:  # the key goes with every request
        raise EmbeddingConfigError(f"Voyage base URL {problem}")
    try:
        import voyageai
    except ImportError as exc:
        raise ModelUnavailableError(
            "Voyage needs the `voyageai` package: pip install voyageai"
        ) from exc
    return voyageai.Client(api_key=api_key, max_retries=0, timeout=timeout, base_url=base_url)


def default_resilience(name: str) -> Resilient:
    return Resilient(policy=RetryPolicy(), breaker=CircuitBreaker(name=name))


class _TimedClient:
    """The Voyage client, and for a call under a deadline one whose timeout is what is left
    of it: a hanging server then costs the deadline, not the full timeout per attempt."""

    def __init__(self, api_key: str | None, base_url: str | None, timeout: float,
                 resilient: Resilient) -> None:
        self.api_key, self.base_url, self.timeout = api_key, base_url, timeout
        self.resilient = resilient
        self.full = _client(api_key, base_url, timeout)

    def for_attempt(self, started: float) -> Any:
        left = self.resilient.time_left(started)
        if left is None or left >= self.timeout:
            return self.full
        return _client(self.api_key, self.base_url, max(left, MIN_ATTEMPT_TIMEOUT))


def parse_retry_after(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Retry-After is either seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - now(), 0.0)


def translate_error(exc: Exception) -> ServiceError:
    """Map a ``voyageai`` exception (or a malformed response) to a :class:`ServiceError`."""
    from voyageai import error as verr

    status = getattr(exc, "http_status", None)
    if isinstance(exc, (verr.Timeout, verr.APIConnectionError, verr.TryAgain)):
        return ServiceError(f"Voyage unreachable: {exc}", retryable=True, status=status)
    if isinstance(exc, verr.VoyageError):
        headers = getattr(exc, "headers", None) or {}
        retry_after = parse_retry_after(headers.get("retry-after") or headers.get("Retry-After"))
        if status is None:
            return ServiceError(f"Voyage error: {exc}", retryable=True)
        retryable = is_retryable_status(status) or 200 <= status < 300  # 2xx: garbled body
        return ServiceError(
            f"Voyage answered HTTP {status}: {exc}",
            retryable=retryable,
            status=status,
            retry_after=retry_after if status == 429 else None,
        )
    return ServiceError(f"malformed response from Voyage: {exc!r}", retryable=True)


def _guarded(fn: Callable[[], T]) -> Callable[[], T]:
    def call() -> T:
        try:
            return fn()
        except ServiceError:
            raise
        except (ImportError, EmbeddingConfigError):
            raise
        except Exception as exc:  # the client's errors and malformed payloads, translated
            raise translate_error(exc) from exc

    return call


class VoyageEmbedder:
    def __init__(
        self,
        *,
        api_key: str | None,
        model: str = "voyage-code-3",
        output_dimension: int | None = None,
        base_url: str | None = None,
        timeout: float = 30.0,
        resilient: Resilient | None = None,
        max_texts: int = 128,
        max_tokens: int = int(MAX_TOKENS_PER_REQUEST * TOKEN_SAFETY),
        counter: TokenCounter | None = None,
        egress: Egress | None = None,
    ) -> None:
        if output_dimension is not None and output_dimension not in VOYAGE_DIMENSIONS:
            raise EmbeddingConfigError(
                f"Voyage output dimension must be one of {VOYAGE_DIMENSIONS}"
            )
        self.model = model
        self.output_dimension = output_dimension
        self.dimension = output_dimension or 1024
        self.model_id = f"voyage/{model}" + (f"/{output_dimension}" if output_dimension else "")
        self.max_texts = min(max_texts, MAX_TEXTS_PER_REQUEST)
        self.max_tokens = max_tokens
        self.resilient = resilient or default_resilience("Voyage embeddings")
        self._counter = counter
        self.egress = egress or Egress()
        self._client = _TimedClient(api_key, base_url, timeout, self.resilient)

    def document_text(self, chunk: Chunk) -> str:
        return full_view(chunk)

    def batches(self, texts: Sequence[str]) -> list[list[int]]:
        """Indices of ``texts`` grouped to respect the per-request count and token limits."""
        counter = self._counter or default_counter()
        sizes = counter.count_many(texts) if texts else []
        out: list[list[int]] = []
        current: list[int] = []
        tokens = 0
        for i, size in enumerate(sizes):
            if current and (len(current) >= self.max_texts or tokens + size > self.max_tokens):
                out.append(current)
                current, tokens = [], 0
            current.append(i)
            tokens += size
        if current:
            out.append(current)
        return out

    def embed_documents(
        self, texts: Sequence[str], paths: Sequence[str] | None = None
    ) -> np.ndarray:
        """``paths``: the file each text comes from (checked against never-send, recorded)."""
        import numpy as np

        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for batch in self.batches(texts):
            out[batch] = self._embed(
                [texts[i] for i in batch], "document",
                [paths[i] for i in batch] if paths is not None else None,
            )
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], "query", None)[0]

    def _embed(self, texts: list[str], input_type: str, paths: list[str] | None) -> np.ndarray:
        from knoxidx.retrieval.vectors import normalize

        outgoing = self.egress.outgoing(texts, paths)
        chunks = len(texts) if input_type == "document" else 0
        started = self.resilient.clock()

        def request() -> Any:
            self.egress.record("voyage", "embeddings", self.model, outgoing, chunks=chunks)
            result = self._client.for_attempt(started).embed(
                outgoing.texts,
                model=self.model,
                input_type=input_type,
                truncation=True,
                output_dimension=self.output_dimension,
            )
            vectors = result.embeddings
            if len(vectors) != len(texts) or any(len(v) != self.dimension for v in vectors):
                raise ServiceError(
                    f"Voyage returned {len(vectors)} vectors for {len(texts)} texts "
                    f"(or of the wrong size)",
                    retryable=True,
                )
            return vectors

        vectors = self.resilient.call(_guarded(request), "Voyage embedding")
        return normalize(vectors)


class VoyageReranker:
    """``rerank-2.5``: scores (query, document) pairs; returns (index, score) best first."""

    def __init__(
        self,
        *,
        api_key: str | None,
        model: str = "rerank-2.5",
        base_url: str | None = None,
        timeout: float = 30.0,
        resilient: Resilient | None = None,
        egress: Egress | None = None,
    ) -> None:
        self.model = model
        self.resilient = resilient or default_resilience("Voyage rerank")
        self.egress = egress or Egress()
        self._client = _TimedClient(api_key, base_url, timeout, self.resilient)

    def rerank(
        self,
        query: str,
        documents: Sequence[str],
        top_k: int,
        paths: Sequence[str] | None = None,
    ) -> list[tuple[int, float]]:
        """``paths``: the file each document comes from (checked against never-send)."""
        if not documents:
            return []
        documents = list(documents[:MAX_TEXTS_PER_REQUEST])
        paths = list(paths[: len(documents)]) if paths is not None else None
        sent_query = self.egress.outgoing([query])
        sent_docs = self.egress.outgoing(documents, paths)
        outgoing = Outgoing(
            [*sent_query.texts, *sent_docs.texts],
            ["", *sent_docs.paths],
            sent_query.masked + sent_docs.masked,
        )

        started = self.resilient.clock()

        def request() -> list[tuple[int, float]]:
            self.egress.record("voyage", "rerank", self.model, outgoing, chunks=len(documents))
            result = self._client.for_attempt(started).rerank(
                sent_query.texts[0], sent_docs.texts, model=self.model, top_k=top_k
            )
            return [(int(r.index), float(r.relevance_score)) for r in result.results]

        return self.resilient.call(_guarded(request), "Voyage rerank")
