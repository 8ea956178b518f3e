"""The stored history must equal the same commits read from scratch: what ``knoxidx verify``
checks of it, since an incremental read appends to what earlier reads left."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from knoxidx.history.gitlog import GitUnavailableError, read_commits
from knoxidx.history.store import HistoryTables
from knoxidx.history.tables import tables_of


def verify_history(root: Path, store: Any) -> dict[str, Any] | None:
    """Whether the history of ``store`` equals a read from scratch up to the commit it was
    read to; None when the index holds no history."""
    stored = tables_of(store)
    head = stored.get("head") if stored is not None else None
    if stored is None or head is None:
        return None
    scratch = HistoryTables(sqlite3.connect(":memory:"))
    try:
        scratch.ensure()
        scratch.append(read_commits(root, None, head), 0)
    except GitUnavailableError as exc:
        return {"equal": False, "head": head, "reason": f"cannot read the history again: {exc}"}
    current, clean = stored.dump(), scratch.dump()
    scratch.conn.close()
    return {"equal": current == clean, "head": head, "commits": len(current[0]),
            "clean_commits": len(clean[0])}
