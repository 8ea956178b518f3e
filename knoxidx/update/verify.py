"""``knoxidx verify``: the index must equal a clean rebuild of the same files."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from knoxidx.graph import export
from knoxidx.graph.queries import GraphQueries
from knoxidx.graph.store import SQLiteStore
from knoxidx.parse.discovery import DEFAULT_MAX_BYTES


def clean_graph(root: Path, max_bytes: int = DEFAULT_MAX_BYTES,
                keep_minified: bool = False) -> export.Canonical:
    """The nodes, edges and unresolved calls a clean build of ``root``'s files gives
    (order-free), built in a scratch database that is thrown away."""
    from knoxidx.update.graph_update import update_index

    scratch = Path(tempfile.mkdtemp(prefix="knoxidx-verify-"))
    try:
        clean = SQLiteStore.open_at(scratch / "index.db", create=True)
        try:
            update_index(root, clean, max_bytes=max_bytes, keep_minified=keep_minified)
            return export.canonical(GraphQueries(clean))
        finally:
            clean.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def orphan_chunk_paths(store: Any) -> list[str]:
    """Paths whose chunks are searched though the index holds no readable file there (a clean
    build never has any: they are what a broken update left behind)."""
    from knoxidx.retrieval.stores import chunk_store_for

    chunks = chunk_store_for(store)
    if not chunks.has_schema():  # a graph-only index
        return []
    indexed = set(store.ok_file_hashes())
    return [path for path in chunks.paths() if path not in indexed]


# the ways an index can differ from a clean rebuild, as verify_index names them
DIFFERENCES = ("missing_nodes", "extra_nodes", "missing_edges", "extra_edges",
               "missing_unresolved", "extra_unresolved", "orphan_chunk_paths")


def verify_index(idx: Any, sample: int = 20) -> dict[str, Any]:
    integrity = idx.q.integrity()
    current = export.canonical(idx.q)
    # the size limit the index was built with: else a raised limit reads as a difference
    limit = idx.store.get_meta("max_bytes")
    from knoxidx.update.graph_update import MINIFIED_META_KEY

    keep_minified = idx.store.get_meta(MINIFIED_META_KEY) == "indexed"  # ... and the same way
    clean = clean_graph(idx.root, int(limit) if limit else DEFAULT_MAX_BYTES, keep_minified)
    from knoxidx.history.verify import verify_history

    history = verify_history(idx.root, idx.store)
    orphans = orphan_chunk_paths(idx.store)
    differences: dict[str, Any] = {
        "missing_nodes": clean.nodes - current.nodes,
        "extra_nodes": current.nodes - clean.nodes,
        "missing_edges": clean.edges - current.edges,
        "extra_edges": current.edges - clean.edges,
        # an unresolved call as stored: (path, line, kind, name, reason, candidates, source,
        # times at that site)
        "missing_unresolved": clean.unresolved - current.unresolved,
        "extra_unresolved": current.unresolved - clean.unresolved,
        "orphan_chunk_paths": orphans,
    }
    return {
        "integrity": integrity,
        "equal": current == clean and (history is None or history["equal"]) and not orphans,
        "history": history,
        # a stale extraction explains a difference: `knoxidx index` reads every file again
        "extraction": idx.extraction(),
        "nodes": len(current.nodes),
        "edges": len(current.edges),
        # each kind of difference: the first ``sample`` of them, and how many there are
        **{key: sorted(map(str, rows))[:sample] for key, rows in differences.items()},
        **{f"{key}_count": len(rows) for key, rows in differences.items()},
    }
