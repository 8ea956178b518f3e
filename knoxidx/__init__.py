"""knoxidx: a local code graph and code search, as a library.

``from knoxidx import Index`` opens an index; every error knoxidx raises on purpose is a
:class:`KnoxidxError` and importable from here. Names load on first use, so that ``import
knoxidx`` (and every ``knoxidx.<module>`` import, the CLI's included) loads nothing else.
"""

from __future__ import annotations

import importlib

# typing itself is left unimported: ``import knoxidx`` stays a few hundred microseconds
TYPE_CHECKING = False

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "Index": "knoxidx.index",
    **dict.fromkeys(
        ("KnoxidxError", "IndexNotFoundError", "IndexGoneError", "SymbolNotFoundError",
         "AmbiguousSymbolError", "IndexLockedError", "CorruptIndexError", "BadPathError",
         "BadInputError", "IndexWriteError", "HistoryUnavailableError", "ForbiddenPathError",
         "SourceNotFoundError", "LineRangeError"),
        "knoxidx.core.errors"),
    **dict.fromkeys(
        ("RetrievalError", "SearchInputError", "SearchIndexMissingError",
         "ModelUnavailableError", "EmbeddingConfigError", "ServiceError", "CircuitOpenError",
         "RetriesExhaustedError"),
        "knoxidx.retrieval.errors"),
    "EgressBlockedError": "knoxidx.retrieval.egress",
    "LedgerUnreadableError": "knoxidx.retrieval.ledger",
    "NeverSendError": "knoxidx.retrieval.disclosure",
    "ConfigError": "knoxidx.core.config",
    "StoreConfigError": "knoxidx.core.store_url",
    "StoreUnavailableError": "knoxidx.graph.pg_schema",
    "CommittedIndexLinkError": "knoxidx.graph.index_link",
    "CommittedIndexError": "knoxidx.graph.index_link",
    "InputError": "knoxidx.api.schemas",
    "GitUnavailableError": "knoxidx.history.gitlog",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from typing import Any

    from knoxidx.api.schemas import InputError
    from knoxidx.core.config import ConfigError
    from knoxidx.core.errors import (
        AmbiguousSymbolError,
        BadInputError,
        BadPathError,
        CorruptIndexError,
        ForbiddenPathError,
        HistoryUnavailableError,
        IndexGoneError,
        IndexLockedError,
        IndexNotFoundError,
        IndexWriteError,
        KnoxidxError,
        LineRangeError,
        SourceNotFoundError,
        SymbolNotFoundError,
    )
    from knoxidx.core.store_url import StoreConfigError
    from knoxidx.graph.index_link import CommittedIndexError, CommittedIndexLinkError
    from knoxidx.graph.pg_schema import StoreUnavailableError
    from knoxidx.history.gitlog import GitUnavailableError
    from knoxidx.index import Index
    from knoxidx.retrieval.disclosure import NeverSendError
    from knoxidx.retrieval.egress import EgressBlockedError
    from knoxidx.retrieval.errors import (
        CircuitOpenError,
        EmbeddingConfigError,
        ModelUnavailableError,
        RetriesExhaustedError,
        RetrievalError,
        SearchIndexMissingError,
        SearchInputError,
        ServiceError,
    )
    from knoxidx.retrieval.ledger import LedgerUnreadableError


def __getattr__(name: str) -> Any:
    # lazy (PEP 562): graph-only commands must not pay for retrieval's or the server's imports
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'knoxidx' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
