"""A gathered context state saved during a walk and restored for the tuner: the candidates
with their features and the (masked) lines and token counts of their files, so that a pack can
be ranked and packed again under other weights without the index or the checkout."""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from knoxidx.answers.context import Candidate, Gathered
from knoxidx.answers.pack_files import Files
from knoxidx.retrieval.tokens import default_counter

_TUPLES = ("match", "outline")


def saved_state(gathered: Gathered) -> dict[str, Any]:
    files = gathered.files
    fill = gathered.search_fill()
    paths = sorted({c.path for c in [*gathered.candidates.values(), *fill]})
    return {
        "query": gathered.query, "search": gathered.search, "wanted": gathered.wanted,
        "refused": gathered.refused,
        "candidates": [asdict(c) for c in gathered.candidates.values()],
        "fill": [asdict(c) for c in fill],
        "files": {p: {"lines": files.lines(p), "tokens": files.tokens(p)} for p in paths},
    }


def restored(saved: dict[str, Any], files: Files | None = None) -> Gathered:
    """A fresh :class:`Gathered` (its candidates are new objects: ranking rewrites them);
    ``files`` from an earlier restore of the same state keeps what it counted."""
    candidates = {}
    for row in saved["candidates"]:
        cand = _candidate(row)
        candidates[cand.key] = cand
    if files is None:
        files = Files(None, default_counter())
        for path, saved_file in saved["files"].items():
            files._lines[path] = saved_file["lines"]
            files._tokens[path] = saved_file["tokens"]
    return Gathered(saved["query"], candidates, saved["search"], files, saved["wanted"],
                    saved["refused"], [_candidate(row) for row in saved.get("fill", [])])


def _candidate(row: dict[str, Any]) -> Candidate:
    names = {f.name for f in fields(Candidate)}
    values = {k: v for k, v in row.items() if k in names}
    for key in _TUPLES:
        if values.get(key) is not None:
            values[key] = tuple(values[key])
    values["matches"] = [tuple(m) for m in values.get("matches", [])]
    values["links"] = [tuple(link) for link in values.get("links", [])]
    return Candidate(**values)
