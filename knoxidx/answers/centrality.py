"""Centrality: PageRank of every node over the weighted call/import graph, computed once per
index state and cached in ``.knoxidx/`` (one of the context builder's ranking factors)."""

from __future__ import annotations

import contextlib
import logging
import math
import os
import pickle
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from knoxidx.graph.protocol import IndexedGraph


log = logging.getLogger(__name__)


CENTRALITY_FILE = "centrality.pickle"
_CENTRALITY_VERSION = 1
_centrality_lock = threading.Lock()
_centrality_memo: dict[str, tuple[str, dict[int, float]]] = {}


def centrality_scores(index: IndexedGraph, edge_weights: tuple[tuple[str, float], ...]) -> dict[int, float]:
    """PageRank of every node over the weighted call/import graph, log-scaled to 0..1 (the
    most central node: 1). Computed once per index state (its files' content hashes and
    layout) and edge weights; kept in memory and in ``.knoxidx/centrality.pickle``."""
    key = _state_key(index, edge_weights)
    db = str(index.store.path)
    with _centrality_lock:  # one computation at a time; the others wait for its result
        memo = _centrality_memo.get(db)
        if memo is not None and memo[0] == key:
            return memo[1]
        cache = index.store.path.parent / CENTRALITY_FILE
        scores = _load_centrality(cache, key)
        if scores is None:
            scores = _pagerank(index, dict(edge_weights))
            _save_centrality(cache, key, scores)
        _centrality_memo[db] = (key, scores)
        return scores


def _state_key(index: IndexedGraph, edge_weights: tuple[tuple[str, float], ...]) -> str:
    import xxhash

    digest = xxhash.xxh64()
    layout = index.store.get_meta("layout")
    digest.update(f"v{_CENTRALITY_VERSION}|{edge_weights!r}|{layout}".encode())
    for path, state in sorted(index.store.file_states().items()):
        digest.update(f"\n{path}\x1f{state.hash}\x1f{state.status}".encode())
    return digest.hexdigest()


def _pagerank(index: IndexedGraph, weights: dict[str, float]) -> dict[int, float]:
    import networkx as nx

    totals: dict[tuple[int, int], float] = {}
    for source, target, kind in index.q.edges_of_types(tuple(weights)):
        if source != target:
            totals[(source, target)] = totals.get((source, target), 0.0) + weights[kind]
    if not totals:
        return {}
    graph = nx.DiGraph()
    graph.add_weighted_edges_from((s, t, w) for (s, t), w in sorted(totals.items()))
    try:
        ranks = nx.pagerank(graph, weight="weight")
    except ImportError:  # networkx's PageRank needs scipy; its pure-Python one is ~30x slower
        from networkx.algorithms.link_analysis.pagerank_alg import _pagerank_python

        ranks = _pagerank_python(graph, weight="weight")
    mean = 1.0 / graph.number_of_nodes()
    top = max(ranks.values())
    return {node: round(_log_scale(value, mean, top), 6) for node, value in ranks.items()}


def _load_centrality(path: Any, key: str) -> dict[int, float] | None:
    try:
        with open(path, "rb") as fh:
            data = pickle.load(fh)
    except (OSError, pickle.PickleError, EOFError, AttributeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key:
        return None
    return data.get("scores")


def _save_centrality(path: Any, key: str, scores: dict[int, float]) -> None:
    """Written beside the index, atomically; a read-only directory only costs recomputing."""
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            pickle.dump({"key": key, "scores": scores}, fh, protocol=5)
        os.replace(tmp, path)
    except OSError as exc:
        log.info("centrality cache not saved (%s)", exc)
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _log_scale(value: float, mean: float, top: float) -> float:
    if value <= 0 or top <= 0:
        return 0.0
    return math.log1p(value / mean) / math.log1p(top / mean)
