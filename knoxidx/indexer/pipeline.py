"""An index update: discover -> read and extract (worker processes) -> store -> resolve.

Only files whose size/mtime changed are read, and only those whose content hash changed are
extracted. Resolution re-runs for the changed files plus the files whose last resolution
consulted something the change touched (see ``knoxidx.graph.resolve``). The whole update is one
transaction: a reader sees the old graph or the new one, and a killed indexer loses nothing.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import xxhash

from knoxidx.graph.layout import build_layout
from knoxidx.graph.model import NodeKind, file_node_id, module_node_id
from knoxidx.graph.resolve import FUNCTION, FileIndex, FileResolution, Resolver
from knoxidx.graph.store import FileState, SQLiteStore
from knoxidx.graph.workspace import StoreWorkspace
from knoxidx.indexer.discovery import DEFAULT_MAX_BYTES, SourceFile, discover
from knoxidx.indexer.extract import extract
from knoxidx.indexer.facts import FileFacts, RefKind
from knoxidx.indexer.languages import BY_NAME

Progress = Callable[[str, int, int], None]
# Below this many files to read, worker processes cost more than they save.
POOL_THRESHOLD = 48
# Resolving more files than this loads every index at once and forks resolver workers.
PRELOAD_THRESHOLD = 200
BINARY_SNIFF = 8192


@dataclass(slots=True)
class UpdateReport:
    files: int = 0
    read: int = 0
    changed: int = 0
    added: int = 0
    removed: int = 0
    resolved: int = 0
    lines: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    full_resolve: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": self.files, "read": self.read, "changed": self.changed,
            "added": self.added, "removed": self.removed, "resolved": self.resolved,
            "lines": self.lines, "skipped": dict(self.skipped), "warnings": self.warnings,
            "errors": self.errors, "full_resolve": self.full_resolve,
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
        }


@dataclass(frozen=True, slots=True)
class ReadResult:
    path: str
    language: str
    size: int
    mtime_ns: int
    status: str  # ok | unchanged | binary | unreadable | error
    hash: str = ""
    facts: FileFacts | None = None
    iface: str = ""
    message: str = ""


def read_and_extract(job: tuple[str, SourceFile, str | None]) -> ReadResult:
    """Read one file, skip it if its hash is unchanged, else extract its facts. Never raises."""
    root, src, known_hash = job
    base = (src.path, src.language, src.size, src.mtime_ns)
    try:
        with open(os.path.join(root, src.path), "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return ReadResult(*base, "unreadable", message=exc.strerror or str(exc))
    if b"\0" in data[:BINARY_SNIFF]:
        return ReadResult(*base, "binary")
    digest = xxhash.xxh3_128_hexdigest(data)
    if digest == known_hash:
        return ReadResult(*base, "unchanged", digest)
    message = ""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        message = f"invalid UTF-8 at byte {exc.start}; read with replacement characters"
    try:
        facts = extract(src.path, data, src.language)
    except Exception as exc:  # a crash in one file must not lose the others
        return ReadResult(*base, "error", digest, message=f"{type(exc).__name__}: {exc}")
    if facts.error_nodes and not message:
        message = f"{facts.error_nodes} syntax error(s); indexed what parsed"
    return ReadResult(*base, "ok", digest, facts, interface_fingerprint(facts), message)


def interface_fingerprint(facts: FileFacts) -> str:
    """A hash of what other files' resolution can consult in this one (not line numbers or
    function bodies): if it is unchanged, no other file needs re-resolving."""
    defs = facts.defs
    has_children = {d.parent for d in defs}
    h = xxhash.xxh3_64()
    h.update(facts.package.encode())
    h.update(repr([(d.kind, d.name, d.qualname, d.parent, d.owner, d.type_hint, d.exported)
                   for d in defs]).encode())
    h.update(repr([(i.module, i.name, i.alias, i.scope, i.reexport)
                   for i in facts.imports]).encode())
    h.update(repr([
        b for b in facts.bindings
        if b.scope < 0 or "." in b.name or defs[b.scope].kind != FUNCTION or b.scope in has_children
    ]).encode())
    h.update(repr([(r.path, r.scope) for r in facts.refs
                   if r.kind in (RefKind.EXTENDS, RefKind.IMPLEMENTS)]).encode())
    h.update(repr([(i.type_path, i.trait_path) for i in facts.impls]).encode())
    return h.hexdigest()


def _definition_names(facts: FileFacts | None) -> set[tuple[str, str, str, bool, str]]:
    if facts is None:
        return set()
    return {(d.name, d.kind, d.qualname, d.parent >= 0, d.owner) for d in facts.defs}


def _read_all(
    root: Path, jobs: list[SourceFile], known: dict[str, FileState], workers: int,
    progress: Progress | None,
) -> Iterator[ReadResult]:
    args = [(str(root), f, known[f.path].hash if f.path in known else None) for f in jobs]
    total = len(args)
    if workers <= 1 or total < POOL_THRESHOLD:
        for i, a in enumerate(args, 1):
            yield read_and_extract(a)
            if progress and (i % 64 == 0 or i == total):
                progress("parse", i, total)
        return
    ctx = multiprocessing.get_context("fork")
    chunk = max(4, min(64, total // (workers * 8) or 1))
    with ctx.Pool(workers) as pool:
        for i, result in enumerate(pool.imap_unordered(read_and_extract, args, chunk), 1):
            yield result
            if progress and (i % 64 == 0 or i == total):
                progress("parse", i, total)


def node_rows(
    file_id: int, facts: FileFacts, fi: FileIndex, prefix: str, joiner: str, sep: str
) -> list[tuple]:
    family = BY_NAME[facts.language].family
    language = facts.language
    path = facts.path
    rows: list[tuple] = [(
        file_node_id(path), NodeKind.FILE.value, path.rsplit("/", 1)[-1], path, file_id, None,
        None, 1, max(facts.lines, 1), 0, None, language, family, "", "", 1, "",
    )]
    ids = fi.ids
    for i, d in enumerate(facts.defs):
        qualified = d.qualname if sep == "." else d.qualname.replace(".", sep)
        rows.append((
            ids[i], d.kind, d.name, f"{prefix}{joiner}{qualified}" if prefix else qualified,
            file_id, i, ids[d.parent] if d.parent >= 0 else None, d.start_line, d.end_line,
            d.start_byte, d.end_byte, language, family, d.signature, d.doc,
            None if d.exported is None else int(d.exported), d.owner,
        ))
    return rows


def update_index(
    root: Path,
    store: SQLiteStore,
    *,
    jobs: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: Progress | None = None,
) -> UpdateReport:
    report = UpdateReport()
    t0 = time.perf_counter()
    root = root.resolve()
    found = discover(root, max_bytes)
    report.skipped.update(found.skipped)
    report.files = len(found.files)
    known = store.file_states()
    layout = build_layout(root, [f.path for f in found.files], found.config_paths)
    fingerprint = layout.fingerprint()
    report.full_resolve = store.get_meta("layout") != fingerprint
    report.timings["discover"] = time.perf_counter() - t0

    current = {f.path for f in found.files}
    removed = [p for p in known if p not in current]
    to_read = [
        f for f in found.files
        if f.path not in known
        or known[f.path].size != f.size
        or known[f.path].mtime_ns != f.mtime_ns
    ]
    workers = jobs if jobs is not None else (os.cpu_count() or 1)

    t1 = time.perf_counter()
    fresh: dict[str, FileFacts] = {}
    invalidate: set[str] = set()
    cold = not known  # an empty index: bulk-load without secondary indexes, nothing to clear
    with store.transaction(), store.bulk_load(enabled=cold):
        file_ids = {p: s.id for p, s in known.items()}
        # Deleted files take their nodes, edges and module keys with them.
        for path in removed:
            state = known[path]
            old = store.load_facts(path) if state.status == "ok" else None
            invalidate |= _keys_for(path, old, None, store, state.id)
            store.delete_file(state.id)
            file_ids.pop(path, None)
        report.removed = len(removed)

        for result in _read_all(root, to_read, known, workers, progress):
            report.read += 1
            state = known.get(result.path)
            if result.status == "unchanged":
                store.touch_file(state.id, result.size, result.mtime_ns)
                continue
            if result.status in ("binary", "unreadable", "error"):
                report.skipped[result.status] += 1
                if result.status == "error":
                    report.errors.append(f"{result.path}: {result.message}")
                if state is not None and state.status == "ok":
                    old = store.load_facts(result.path)
                    invalidate |= _keys_for(result.path, old, None, store, state.id)
                    store.clear_file_graph(state.id)
                    store.replace_nodes(state.id, [])
                    store.replace_modules(state.id, [])
                store.upsert_file(result.path, result.language, result.size, result.mtime_ns,
                                  result.hash, 0, result.status, result.message, "", None)
                continue
            if result.message:
                report.warnings.append(f"{result.path}: {result.message}")
            facts = result.facts
            assert facts is not None
            report.changed += 1
            if state is None or state.status != "ok":
                report.added += 1
                invalidate |= _keys_for(result.path, None, facts, store, None, layout)
            elif state.iface != result.iface:
                old = store.load_facts(result.path)
                invalidate |= _keys_for(result.path, old, facts, store, state.id, layout)
            file_id = store.upsert_file(
                result.path, result.language, result.size, result.mtime_ns, result.hash,
                facts.lines, "ok", result.message, result.iface, facts,
            )
            file_ids[result.path] = file_id
            fresh[result.path] = facts
            rules = BY_NAME[facts.language].plugin.RULES
            fi = FileIndex(facts, BY_NAME[facts.language].family, rules)
            keys = rules.module_keys(facts.path, facts, layout)
            family = BY_NAME[facts.language].family
            store.replace_modules(file_id, [(family, k) for k in keys])
            prefix = rules.qualified_prefix(facts.path, keys)
            store.replace_nodes(file_id, node_rows(file_id, facts, fi, prefix, rules.module_joiner,
                                                   rules.separator))
        report.timings["parse"] = time.perf_counter() - t1

        t2 = time.perf_counter()
        ok_paths = {p for p, s in store.file_states().items() if s.status == "ok"}
        if report.full_resolve:
            affected = ok_paths
        else:
            affected = set(fresh) | (store.dependents(invalidate) & ok_paths)
        workspace = StoreWorkspace(store, layout, fresh)
        ordered = sorted(affected)
        if len(ordered) > PRELOAD_THRESHOLD:
            workspace.preload(load_all_facts=True)
        ids = store.file_ids()
        for i, res in enumerate(_resolve_all(workspace, ordered, workers), 1):
            file_id = ids[res.path]
            if not cold:
                store.clear_file_graph(file_id)
            store.insert_resolution(file_id, res.edges, res.unresolved, res.keys, res.externals)
            if progress and (i % 256 == 0 or i == len(ordered)):
                progress("resolve", i, len(ordered))
        report.resolved = len(affected)
        report.timings["resolve"] = time.perf_counter() - t2

        t3 = time.perf_counter()
        _rebuild_module_layer(store)
        store.set_meta("layout", fingerprint)
        report.timings["modules"] = time.perf_counter() - t3
    report.lines = sum(f.lines for f in fresh.values())
    report.timings["total"] = time.perf_counter() - t0
    return report


_FORKED_WORKSPACE: StoreWorkspace | None = None


def _resolve_chunk(paths: list[str]) -> list[FileResolution]:
    assert _FORKED_WORKSPACE is not None
    resolver = Resolver(_FORKED_WORKSPACE)
    return [resolver.resolve_file(p) for p in paths]


def _resolve_all(
    workspace: StoreWorkspace, paths: list[str], workers: int
) -> Iterator[FileResolution]:
    """Resolve files, in forked workers when there are many: they inherit the preloaded
    workspace (every fact is in memory, so no child touches the database)."""
    global _FORKED_WORKSPACE
    if workers <= 1 or len(paths) <= PRELOAD_THRESHOLD:
        resolver = Resolver(workspace)
        for path in paths:
            yield resolver.resolve_file(path)
        return
    chunks = [paths[i::workers * 4] for i in range(workers * 4)]
    _FORKED_WORKSPACE = workspace
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            for batch in pool.imap_unordered(_resolve_chunk, chunks):
                yield from batch
    finally:
        _FORKED_WORKSPACE = None


def _keys_for(
    path: str, old: FileFacts | None, new: FileFacts | None, store: SQLiteStore,
    file_id: int | None, layout: Any = None,
) -> set[str]:
    """Lookup keys whose answers change when ``path`` goes from ``old`` to ``new`` facts."""
    keys = {"file:" + path}
    changed = _definition_names(old) ^ _definition_names(new)
    keys.update("name:" + name for name, *_ in changed)
    keys.update("owner:" + owner for *_, owner in changed if owner)
    if file_id is not None:
        keys.update(f"mod:{family}:{key}" for family, key in store.module_keys_of(file_id))
    if new is not None and layout is not None:
        spec = BY_NAME[new.language]
        keys.update(f"mod:{spec.family}:{k}"
                    for k in spec.plugin.RULES.module_keys(path, new, layout))
    return keys


def _rebuild_module_layer(store: SQLiteStore) -> None:
    modules: dict[tuple[str, str], str] = {}
    contains: list[tuple[int, int]] = []
    for path, language, family, key in store.primary_modules():
        mid = module_node_id(family, key)
        modules.setdefault((family, key), language)
        contains.append((mid, file_node_id(path)))
    rows = [
        (module_node_id(family, key), NodeKind.MODULE.value, key.rsplit(_sep(family), 1)[-1],
         key, None, None, None, None, None, None, None, language, family, "", "", 1, "")
        for (family, key), language in modules.items()
    ]
    store.rebuild_module_layer(rows, contains)


def _sep(family: str) -> str:
    return "::" if family == "rust" else ("/" if family in ("go", "js") else ".")

