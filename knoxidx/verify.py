"""``knoxidx verify``: the index must equal a clean rebuild of the same files."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from knoxidx.graph import export
from knoxidx.graph.store import GraphQueries, SQLiteStore


def verify_index(idx: Any, sample: int = 20) -> dict[str, Any]:
    from knoxidx.indexer.discovery import DEFAULT_MAX_BYTES
    from knoxidx.indexer.pipeline import update_index

    integrity = GraphQueries(idx.store).integrity()
    current_nodes, current_edges = export.canonical(idx.q)
    scratch = Path(tempfile.mkdtemp(prefix="knoxidx-verify-"))
    try:
        clean = SQLiteStore.open_at(scratch / "index.db", create=True)
        try:
            # the size limit the index was built with: else a raised limit reads as a difference
            limit = idx.store.get_meta("max_bytes")
            update_index(idx.root, clean, max_bytes=int(limit) if limit else DEFAULT_MAX_BYTES)
            clean_nodes, clean_edges = export.canonical(GraphQueries(clean))
        finally:
            clean.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "integrity": integrity,
        "equal": current_nodes == clean_nodes and current_edges == clean_edges,
        "nodes": len(current_nodes),
        "edges": len(current_edges),
        "missing_nodes": sorted(map(str, clean_nodes - current_nodes))[:sample],
        "extra_nodes": sorted(map(str, current_nodes - clean_nodes))[:sample],
        "missing_edges": sorted(map(str, clean_edges - current_edges))[:sample],
        "extra_edges": sorted(map(str, current_edges - clean_edges))[:sample],
    }
