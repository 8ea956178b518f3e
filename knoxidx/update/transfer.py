"""``knoxidx push`` and ``pull``: copy one repository's index between a local ``.knoxidx``
database and a shared PostgreSQL store, rows as they are (nothing is re-parsed), so CI can
index and publish and a laptop can start from what CI built.

Each direction is one transaction on the receiving side, under that side's writer lock:
readers see the old copy or the new one. File and chunk ids are renumbered on the way into
PostgreSQL (its ids are shared by every repository); node ids are content-derived and stay.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knoxidx.core.errors import IndexNotFoundError
from knoxidx.graph.pg_store import PgStore, delete_repo
from knoxidx.graph.sqlite_schema import NODE_COLUMNS, find_index_root
from knoxidx.graph.store import SQLiteStore
from knoxidx.retrieval.store import _CHUNK_COLUMNS, ChunkStore, _row_to_chunk, fts_columns
from knoxidx.retrieval.store_schema import NAMES_PER_CHUNK, create_schema

_FILE_COLUMNS = "path, language, size, mtime_ns, hash, lines, status, message, iface, facts"
_CHUNK_DATA = _CHUNK_COLUMNS.split(", ", 1)[1]  # every chunk column but its id


def push(root: Path, url: str, repo: str, *, wait: bool = False) -> dict[str, int]:
    """Copy the local index of ``root`` into ``url`` as repository ``repo``, replacing it."""
    found = find_index_root(root)
    if found is None:
        raise IndexNotFoundError(f"no knoxidx index at or above {root}; run `knoxidx index` first")
    local = SQLiteStore.open(found, readonly=True)
    shared = PgStore.open(url, repo, create=True)
    lock = shared.write_lock()
    lock.acquire(wait=wait)
    try:
        with shared.conn.transaction():
            counts = _push_rows(local.conn, shared.conn, repo)
            shared.set_root(found)
        return counts
    finally:
        lock.release()
        shared.close()
        local.close()


def _push_rows(src: Any, dst: Any, repo: str) -> dict[str, int]:
    delete_repo(dst, repo)
    dst.execute("INSERT INTO knoxidx.repos(repo) VALUES (%s)", (repo,))
    counts: dict[str, int] = {}
    files = src.execute(f"SELECT id, {_FILE_COLUMNS} FROM files").fetchall()
    file_map = dict(zip((r[0] for r in files), _new_ids(dst, "files", len(files)), strict=True))

    def fid(old: int | None) -> int | None:
        return None if old is None else file_map[old]

    _copy(dst, f"files(id, repo, {_FILE_COLUMNS})",
          ((file_map[r[0]], repo, *r[1:]) for r in files))
    counts["files"] = len(files)
    file_pos = NODE_COLUMNS.index("file_id")
    counts["nodes"] = _copy(dst, f"nodes(repo, {', '.join(NODE_COLUMNS)})", (
        (repo, *r[:file_pos], fid(r[file_pos]), *r[file_pos + 1:])
        for r in src.execute(f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes")))
    counts["edges"] = _copy(dst, "edges(repo, source, target, type, confidence, file_id, line)", (
        (repo, s, t, ty, c, fid(f), ln)
        for s, t, ty, c, f, ln in src.execute(
            "SELECT source, target, type, confidence, file_id, line FROM edges")))
    _copy(dst, "unresolved(repo, file_id, source, kind, name, line, reason, candidates)", (
        (repo, fid(r[0]), *r[1:]) for r in src.execute(
            "SELECT file_id, source, kind, name, line, reason, candidates FROM unresolved")))
    _copy(dst, "lookups(repo, file_id, key)",
          ((repo, fid(f), k) for f, k in src.execute("SELECT file_id, key FROM lookups")))
    _copy(dst, "modules(repo, family, key, file_id, rank)", (
        (repo, fam, k, fid(f), rank)
        for fam, k, f, rank in src.execute("SELECT family, key, file_id, rank FROM modules")))
    _copy(dst, "externals(repo, id, family, name)",
          ((repo, *r) for r in src.execute("SELECT id, family, name FROM externals")))
    _copy(dst, "repo_meta(repo, key, value)", ((repo, k, v) for k, v in src.execute(
        "SELECT key, value FROM meta WHERE key != 'schema_version'")))
    if _has_table(src, "chunk"):
        counts.update(_push_chunks(src, dst, repo))
    return counts


def _push_chunks(src: Any, dst: Any, repo: str) -> dict[str, int]:
    rows = src.execute(f"SELECT {_CHUNK_COLUMNS} FROM chunk").fetchall()
    chunk_map = dict(zip((r[0] for r in rows), _new_ids(dst, "chunk", len(rows)), strict=True))
    dst.execute(
        "CREATE TEMP TABLE kx_chunk_in (LIKE knoxidx.chunk INCLUDING DEFAULTS, body TEXT,"
        " syms TEXT, pth TEXT) ON COMMIT DROP")
    dst.execute("ALTER TABLE kx_chunk_in ALTER COLUMN fts DROP NOT NULL")
    _copy(dst, f"kx_chunk_in(id, repo, {_CHUNK_DATA}, body, syms, pth)", (
        (chunk_map[r[0]], repo, *r[1:], *fts_columns(_row_to_chunk(r))) for r in rows),
        schema="")
    dst.execute(
        f"INSERT INTO knoxidx.chunk(id, repo, {_CHUNK_DATA}, fts) SELECT id, repo, {_CHUNK_DATA},"
        " setweight(to_tsvector('simple', body), 'D') || setweight(to_tsvector('simple', syms),"
        " 'A') || setweight(to_tsvector('simple', pth), 'B') FROM kx_chunk_in")
    if _has_table(src, "chunk_name"):  # (an index chunked before it existed has none)
        dst.execute("CREATE TEMP TABLE kx_name_in (chunk_id BIGINT, n INTEGER, name TEXT,"
                    " scope TEXT) ON COMMIT DROP")
        _copy(dst, "kx_name_in(chunk_id, n, name, scope)", (
            (chunk_map[rowid // NAMES_PER_CHUNK], rowid % NAMES_PER_CHUNK, name, scope)
            for rowid, name, scope in src.execute("SELECT rowid, name, scope FROM chunk_name")
            if rowid // NAMES_PER_CHUNK in chunk_map), schema="")
        dst.execute("INSERT INTO knoxidx.chunk_name(chunk_id, n, repo, name, scope, tsv)"
                    " SELECT chunk_id, n, %s, name, scope, to_tsvector('simple', name)"
                    " FROM kx_name_in", (repo,))
    if _has_table(src, "chunk_declaration"):  # (nor the declarations)
        _copy(dst, "chunk_declaration(chunk_id, n, repo, text, text_hash, dim, embedding)", (
            (chunk_map[i // NAMES_PER_CHUNK], i % NAMES_PER_CHUNK, repo, text, h,
             len(blob) // 4 if blob is not None else None,
             _vector_text(blob) if blob is not None else None)
            for i, text, h, blob in src.execute(
                "SELECT id, text, text_hash, vector FROM chunk_declaration")
            if i // NAMES_PER_CHUNK in chunk_map))
    vectors = _copy(dst, "chunk_vector(chunk_id, repo, text_hash, dim, embedding)", (
        (chunk_map[c], repo, h, len(blob) // 4, _vector_text(blob))
        for c, h, blob in src.execute("SELECT chunk_id, text_hash, vector FROM chunk_vector")))
    _copy(dst, "embed_pending(chunk_id, repo, attempts, last_error)", (
        (chunk_map[c], repo, a, e) for c, a, e in src.execute(
            "SELECT chunk_id, attempts, last_error FROM embed_pending")))
    _copy(dst, "embed_meta(repo, key, value)",
          ((repo, k, v) for k, v in src.execute("SELECT key, value FROM embed_meta")))
    _copy(dst, "chunk_source(repo, path, hash)",
          ((repo, p, h) for p, h in src.execute("SELECT path, hash FROM chunk_source")))
    dim = src.execute("SELECT value FROM embed_meta WHERE key = 'dimension'").fetchone()
    if dim:
        from knoxidx.retrieval.pg_store import PgChunkStore

        model = src.execute("SELECT value FROM embed_meta WHERE key = 'model'").fetchone()
        PgChunkStore(dst, repo).record_model(model[0] if model else "", int(dim[0]))
    return {"chunks": len(rows), "vectors": vectors}


def pull(url: str, repo: str, root: Path, *, wait: bool = False) -> dict[str, int]:
    """Replace the local index of ``root`` with repository ``repo`` of the store at ``url``."""
    if not root.is_dir():
        raise IndexNotFoundError(f"no such directory: {root}")
    shared = PgStore.open(url, repo, readonly=True)
    local = SQLiteStore.open(root, create=True)
    lock = local.write_lock()
    lock.acquire(wait=wait)
    try:
        with shared.read_snapshot(), local.transaction():
            counts = _pull_rows(shared.conn, local.conn, repo)
            local.index_file_rows()
            ChunkStore(local.conn).rebuild_names(lambda path: _definitions(local, path))
        return counts
    finally:
        lock.release()
        local.close()
        shared.close()


def _pull_rows(src: Any, dst: Any, repo: str) -> dict[str, int]:
    counts: dict[str, int] = {}

    def fetch(sql: str) -> Any:
        return src.execute(sql, (repo,))

    def put(table: str, columns: str, rows: Any) -> int:
        rows = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows]
        marks = ",".join("?" * len(columns.split(",")))
        dst.executemany(f"INSERT INTO {table}({columns}) VALUES ({marks})", rows)
        return len(rows)

    create_schema(dst, cache_schema=None)
    for table in ("meta", "files", "nodes", "edges", "unresolved", "lookups", "file_rows",
                  "modules", "externals", "chunk", "chunk_fts", "chunk_name", "chunk_declaration",
                  "chunk_vector", "embed_pending",
                  "embed_meta", "chunk_source"):
        dst.execute(f"DELETE FROM {table}" + (" WHERE key != 'schema_version'"
                                              if table == "meta" else ""))
    put("meta", "key, value", fetch("SELECT key, value FROM knoxidx.repo_meta WHERE repo = %s"))
    counts["files"] = put("files", f"id, {_FILE_COLUMNS}",
                          fetch(f"SELECT id, {_FILE_COLUMNS} FROM knoxidx.files WHERE repo = %s"))
    columns = ", ".join(NODE_COLUMNS)
    counts["nodes"] = put("nodes", columns,
                          fetch(f"SELECT {columns} FROM knoxidx.nodes WHERE repo = %s"))
    # a file's edges, unresolved references and lookup keys one run of rowids each, in file
    # order (see ``index_file_rows``)
    counts["edges"] = put("edges", "source, target, type, confidence, file_id, line", fetch(
        "SELECT source, target, type, confidence, file_id, line FROM knoxidx.edges"
        " WHERE repo = %s ORDER BY file_id NULLS FIRST"))
    for table, columns, order in (
        ("unresolved", "file_id, source, kind, name, line, reason, candidates",
         " ORDER BY file_id"),
        ("lookups", "file_id, key", " ORDER BY file_id"),
        ("modules", "family, key, file_id, rank", ""), ("externals", "id, family, name", ""),
    ):
        put(table, columns,
            fetch(f"SELECT {columns} FROM knoxidx.{table} WHERE repo = %s{order}"))
    chunks = fetch(f"SELECT {_CHUNK_COLUMNS} FROM knoxidx.chunk WHERE repo = %s").fetchall()
    counts["chunks"] = put("chunk", _CHUNK_COLUMNS, chunks)
    dst.executemany("INSERT INTO chunk_fts (rowid, body, symbols, path) VALUES (?, ?, ?, ?)",
                    [(r[0], *fts_columns(_row_to_chunk(r))) for r in chunks])
    counts["vectors"] = put("chunk_vector", "chunk_id, text_hash, vector", (
        (c, h, _vector_blob(text)) for c, h, text in fetch(
            "SELECT chunk_id, text_hash, embedding::text FROM knoxidx.chunk_vector"
            " WHERE repo = %s")))
    put("chunk_declaration", "id, text, text_hash, vector", (
        (c * NAMES_PER_CHUNK + n, t, h, _vector_blob(v) if v is not None else None)
        for c, n, t, h, v in fetch(
            "SELECT chunk_id, n, text, text_hash, embedding::text FROM knoxidx.chunk_declaration"
            " WHERE repo = %s")))
    put("embed_pending", "chunk_id, attempts, last_error", fetch(
        "SELECT chunk_id, attempts, last_error FROM knoxidx.embed_pending WHERE repo = %s"))
    put("embed_meta", "key, value",
        fetch("SELECT key, value FROM knoxidx.embed_meta WHERE repo = %s"))
    put("chunk_source", "path, hash",
        fetch("SELECT path, hash FROM knoxidx.chunk_source WHERE repo = %s"))
    return counts


# ---- helpers ---------------------------------------------------------------------------------


def _definitions(store: SQLiteStore, path: str) -> Any:
    facts = store.load_facts(path)
    return facts.defs if facts is not None else None


def _copy(conn: Any, target: str, rows: Any, schema: str = "knoxidx.") -> int:
    count = 0
    with conn.cursor() as cur, cur.copy(f"COPY {schema}{target} FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
            count += 1
    return count


def _new_ids(conn: Any, table: str, n: int) -> list[int]:
    if n == 0:
        return []
    return [r[0] for r in conn.execute(
        "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
        (f"knoxidx.{table}", n))]


def _has_table(conn: Any, name: str) -> bool:
    return conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone() is not None


def _vector_text(blob: bytes) -> str:
    import numpy as np

    return "[" + ",".join(f"{x:.9g}" for x in np.frombuffer(blob, dtype="<f4").tolist()) + "]"


def _vector_blob(text: str) -> bytes:
    import numpy as np

    return np.asarray(json.loads(text), dtype="<f4").tobytes()
