"""The one table from an error to what the faces call it: HTTP answers with its status and
``{"error": {"code", ...}}``, MCP names the code in its tool error's text, so a client of
either reads the same word for the same problem."""

from __future__ import annotations

from knoxidx.api.schemas import InputError
from knoxidx.core.errors import (
    AmbiguousSymbolError,
    BadPathError,
    CorruptIndexError,
    ForbiddenPathError,
    HistoryUnavailableError,
    IndexNotFoundError,
    KnoxidxError,
    LineRangeError,
    SourceNotFoundError,
    SymbolNotFoundError,
)
from knoxidx.retrieval.disclosure import NeverSendError
from knoxidx.retrieval.errors import ModelUnavailableError, SearchIndexMissingError

# the first class an error is an instance of decides (subclasses before their bases)
ERROR_CODES: tuple[tuple[type[KnoxidxError], int, str], ...] = (
    (NeverSendError, 403, "never_send"),
    (ForbiddenPathError, 403, "forbidden_path"),
    (SourceNotFoundError, 404, "file_not_found"),
    (SymbolNotFoundError, 404, "symbol_not_found"),
    (AmbiguousSymbolError, 409, "ambiguous_symbol"),
    (IndexNotFoundError, 503, "no_index"),
    (HistoryUnavailableError, 503, "no_history"),
    (SearchIndexMissingError, 503, "no_search_data"),
    (ModelUnavailableError, 503, "model_unavailable"),
    (CorruptIndexError, 500, "corrupt_index"),
    (LineRangeError, 400, "bad_range"),
    (InputError, 400, "bad_request"),
    (BadPathError, 400, "bad_path"),
)


def error_code(exc: KnoxidxError) -> tuple[int, str]:
    """The HTTP status and the code of ``exc``; 400 ``bad_request`` for any other."""
    for cls, status, code in ERROR_CODES:
        if isinstance(exc, cls):
            return status, code
    return 400, "bad_request"
