"""``python -m bench.graphsum INDEX_DB``: a hash of each part of a graph index, to check that a
change to extraction, resolution or the build leaves the graph as it was.

Rows are joined to file paths (file ids follow the order workers finish in) and sorted, so two
builds of the same tree hash equal whatever their order. The stored facts are compared decoded:
marshal's bytes depend on reference counts, which differ between equal values.
"""

from __future__ import annotations

import hashlib
import marshal
import sqlite3
import sys
from pathlib import Path

from knoxidx.core.facts import blob_fields

QUERIES = {
    "nodes": "SELECT n.id, kind, name, qualified_name, f.path, def_index, parent_id, start_line, "
             "end_line, start_byte, end_byte, n.language, family, signature, doc, exported, "
             "owner, member FROM nodes n LEFT JOIN files f ON f.id = n.file_id",
    "edges": "SELECT source, target, type, confidence, f.path, line "
             "FROM edges e LEFT JOIN files f ON f.id = e.file_id",
    "lookups": "SELECT f.path, key FROM lookups l JOIN files f ON f.id = l.file_id",
    "unresolved": "SELECT f.path, source, kind, name, line, reason, candidates "
                  "FROM unresolved u JOIN files f ON f.id = u.file_id",
}


def summarize(db_path: Path) -> dict[str, tuple[int, str]]:
    """Part -> (rows, hash) for nodes, edges, lookups, unresolved references and files."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        out = {part: _digest(db.execute(query)) for part, query in QUERIES.items()}
        files = ((path, digest, status, message, iface, _facts(blob))
                 for path, digest, status, message, iface, blob in db.execute(
                     "SELECT path, hash, status, message, iface, facts FROM files"))
        out["files"] = _digest(files)
    finally:
        db.close()
    return out


def _facts(blob: bytes | None) -> tuple | None:
    """A file's stored facts decoded, the references too (``dump_facts`` marshals them on their
    own, inside: compared as bytes, equal references of two builds differed)."""
    if blob is None:
        return None
    facts = blob_fields(blob)
    if len(facts) > 10 and isinstance(facts[10], bytes):  # (the node ids may follow)
        facts = (*facts[:10], marshal.loads(facts[10]), *facts[11:])
    return facts


def _digest(rows) -> tuple[int, str]:
    lines = sorted(map(repr, rows))
    return len(lines), hashlib.sha256("\n".join(lines).encode()).hexdigest()[:12]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m bench.graphsum PATH/.knoxidx/index.db", file=sys.stderr)
        return 2
    for part, (rows, digest) in summarize(Path(args[0])).items():
        print(f"{part:<11}{rows:>9,}  {digest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
