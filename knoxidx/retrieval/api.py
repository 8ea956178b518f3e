"""The retrieval side of :class:`knoxidx.index.Index` (placeholder until wired: see below)."""

from __future__ import annotations

from typing import Any


def update_retrieval(index: Any, changed: list[str], removed: list[str], *, jobs: int | None,
                     progress: Any, embed: bool) -> dict[str, Any]:
    return {}


def search(index: Any, query: str, *, k: int, mode: str, language: str | None,
           path_glob: str | None) -> dict[str, Any]:
    raise NotImplementedError("search is being wired")


def embed_pending_chunks(index: Any, *, progress: Any, limit: int | None) -> dict[str, Any]:
    raise NotImplementedError("embedding is being wired")
