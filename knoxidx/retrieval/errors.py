"""Errors raised by the retrieval layer (chunking, embedding, vector search)."""

from __future__ import annotations

from knoxidx.core.errors import KnoxidxError


class RetrievalError(KnoxidxError):
    """Base class for retrieval problems."""


class SearchInputError(RetrievalError):
    """A search was asked with an invalid argument (k, mode, language, an empty query)."""

    exit_code = 2


class SearchIndexMissingError(RetrievalError):
    """The index has no chunks to search (it was built with ``--graph-only``)."""

    exit_code = 2


class ModelUnavailableError(RetrievalError):
    """A local model, tokenizer or optional client library is not installed or cannot load."""


class EmbeddingConfigError(RetrievalError):
    """The embedder configuration is invalid (unknown embedder, missing API key, bad dimension)."""


class ServiceError(RetrievalError):
    """A remote call (embedding, rerank) failed.

    ``retryable`` says whether the same call may succeed later (timeouts, 429, 5xx, garbled
    responses); ``retry_after`` is the server's own hint in seconds, when it gave one.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after


class CircuitOpenError(RetrievalError):
    """Calls are failing fast because the circuit breaker is open; try again later."""

    def __init__(self, message: str, retry_in: float) -> None:
        super().__init__(message)
        self.retry_in = retry_in


class RetriesExhaustedError(RetrievalError):
    """A retryable call kept failing until the retry budget ran out."""

    def __init__(self, message: str, last_error: BaseException) -> None:
        super().__init__(message)
        self.last_error = last_error
