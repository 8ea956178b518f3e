"""An index update: discover -> read and extract (worker processes) -> store -> resolve.

Only files whose size/mtime changed are read, and only those whose content hash changed are
extracted. Resolution re-runs for the changed files plus the files whose last resolution
consulted something the change touched (see ``knoxidx.graph.resolve``). The whole update is one
transaction: a reader sees the old graph or the new one, and a killed indexer loses nothing.
"""

from __future__ import annotations

import functools
import gc
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knoxidx.core.file_state import FileState
from knoxidx.core.heap import frozen_heap
from knoxidx.core.model import EdgeType
from knoxidx.graph.layout import Layout, build_layout
from knoxidx.graph.protocol import GraphStore
from knoxidx.graph.resolve import FileResolution, Resolver
from knoxidx.graph.workspace import NamedDefinitions, StoreWorkspace
from knoxidx.languages.registry import BY_NAME
from knoxidx.parse.discovery import DEFAULT_MAX_BYTES, Discovery, SourceFile, discover
from knoxidx.parse.engine import ENGINE_META_KEY, engine_fingerprint
from knoxidx.parse.parse_pool import Progress, read_all
from knoxidx.parse.reader import (
    ReadResult,
    named_definitions,
)
from knoxidx.parse.walk_cache import WalkCache
from knoxidx.parse.worker_limits import may_fork
from knoxidx.update.invalidation import interface_keys, keys_for, old_names, requalify
from knoxidx.update.module_layer import first_module_layer, module_nodes, rebuild_module_layer
from knoxidx.update.resolve_workers import resolve_in_parallel
from knoxidx.update.session import WriterSession

if TYPE_CHECKING:
    from knoxidx.graph.spool import ResolutionSpool

# Resolving more files than this loads every index at once and forks resolver workers.
PRELOAD_THRESHOLD = 200
IMPORTS = EdgeType.IMPORTS.value
# Why an update reads every file of an index again: its facts are another knoxidx's
EXTRACTION_CHANGED = "knoxidx's extraction changed since this index was built"
# The collector's thresholds during an update (CPython's default: 700, 10, 10).
GC_THRESHOLDS = (50_000, 50, 100)
# The meta key recording whether minified files were indexed ("indexed") or skipped
# ("skipped"): when the setting changes, the files of languages that are minified are re-read.
MINIFIED_META_KEY = "minified"
# A file written this soon before an update looked at it may be written again within the same
# timestamp tick, the same size: its change would leave size and mtime as recorded (git's
# "racy clean" entries). Its row keeps RACY_MTIME instead, so the next update reads it again
# and compares content. Whole-second mtimes come from file systems that keep seconds (FAT, two).
# (The walk cache's directories have their own, wider window: ``walk_cache.RACY_NS``.)
RACY_FILE_NS = 50_000_000
RACY_COARSE_NS = 2_000_000_000
RACY_MTIME = -1
# The meta key holding the last walk's skipped files by reason (too_large, symlink_loop...):
# they have no row in the files table, yet `stats` and `status` list them as the update did.
WALK_SKIPPED_META_KEY = "walk_skipped"


def skipped_files(store: GraphStore, files_by_status: dict[str, int]) -> dict[str, int]:
    """The files an index leaves out, by reason, as an update's summary counts them: those
    the last walk passed over and those read but not indexed (binary, minified, error...)."""
    skipped = Counter({status: n for status, n in files_by_status.items() if status != "ok"})
    recorded = store.get_meta(WALK_SKIPPED_META_KEY)
    if recorded:
        skipped.update(json.loads(recorded))
    return dict(sorted(skipped.items(), key=lambda kv: str(kv[0])))


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
    # every indexed file re-read: its facts were extracted by another knoxidx (or a grammar)
    extraction_changed: bool = False
    changed_paths: list[str] = field(default_factory=list)  # files re-extracted this update
    removed_paths: list[str] = field(default_factory=list)  # files gone or no longer indexable
    retrieval: dict[str, Any] = field(default_factory=dict)  # what the retrieval phase did
    history: dict[str, Any] = field(default_factory=dict)  # what reading git's history did
    # the files the parse workers chunked (``chunk_budget``), by path, for the retrieval phase
    chunked: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": self.files, "read": self.read, "changed": self.changed,
            "added": self.added, "removed": self.removed, "resolved": self.resolved,
            "lines": self.lines, "skipped": dict(self.skipped), "warnings": self.warnings,
            "errors": self.errors, "full_resolve": self.full_resolve,
            "extraction_changed": self.extraction_changed,
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
            "retrieval": self.retrieval, "history": self.history,
        }


def update_index(
    root: Path,
    store: GraphStore,
    *,
    jobs: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: Progress | None = None,
    discovered: Discovery | None = None,
    session: WriterSession | None = None,
    walk_cache: Path | None = None,
    chunk_budget: Any = None,
    alongside_resolution: Callable[[UpdateReport], None] | None = None,
    keep_minified: bool = False,
) -> UpdateReport:
    """``discovered``: the tree as a caller already knows it (the watcher tracks it from file
    events), saving the walk. ``walk_cache``: where the walk keeps its directory listings
    between updates (``knoxidx.parse.walk_cache``); None walks everything. ``session``:
    what this writer remembers of the tables from its previous updates
    (``knoxidx.update.session``), saving their reads; the caller clears it when the update
    fails. ``chunk_budget``: the parse workers chunk what they extract with this
    ``ChunkBudget`` (``UpdateReport.chunked``), so the retrieval phase only writes.
    ``alongside_resolution``: the caller's work in this transaction that needs the files
    written but not their edges (the retrieval phase's writes), given the report: run by this
    process while the resolver children resolve, so that it claims fewer files instead of
    working alone after them (on 2 cores, ~0.3 s of django's writes in parallel).
    ``keep_minified``: index minified files (``reader.looks_minified``) rather than skip
    them."""
    report = UpdateReport()
    t0 = time.perf_counter()
    # before the walk's stat of a file; after a watcher's (a wider window: more files re-read)
    looked_ns = time.time_ns()
    root = root.resolve()
    engine = engine_fingerprint()
    plan = _plan(root, store, engine, max_bytes, discovered, session, walk_cache,
                 keep_minified, report)
    report.timings["discover"] = time.perf_counter() - t0
    workers = jobs if jobs is not None else (os.cpu_count() or 1)

    with lazy_collector(), store.transaction(), store.bulk_load(enabled=plan.cold):
        t1 = time.perf_counter()
        written = _write_reads(root, store, plan, report, workers, progress, chunk_budget,
                               keep_minified, looked_ns)
        report.timings["parse"] = time.perf_counter() - t1

        t2 = time.perf_counter()
        layer = _resolve(store, plan, written, report, workers, progress, session,
                         alongside_resolution)
        report.timings["resolve"] = time.perf_counter() - t2

        t3 = time.perf_counter()
        if layer.first_imports is not None:
            first_module_layer(store, layer.contains, layer.first_imports)
        elif layer.stale:
            rebuild_module_layer(store)
        store.set_meta("layout", plan.fingerprint)
        store.set_meta(ENGINE_META_KEY, engine)
        store.set_meta("max_bytes", str(max_bytes))  # so `verify` rebuilds the same files
        store.set_meta(MINIFIED_META_KEY, plan.minified_mode)  # (and for the next update)
        store.set_meta(WALK_SKIPPED_META_KEY, json.dumps(dict(plan.found.skipped),
                                                         sort_keys=True))
        report.timings["store"] = time.perf_counter() - t3
    report.timings["total"] = time.perf_counter() - t0
    return report


@dataclass(slots=True)
class _Plan:
    """What an update found on disk and in the index, and so what it reads."""

    found: Discovery
    known: dict[str, FileState]  # the index's files (hashes blanked when the engine changed)
    layout: Layout
    fingerprint: str  # the layout's
    stale_engine: bool  # the index's facts are another knoxidx's: every file is read again
    removed: list[str]  # indexed files no longer found
    to_read: list[SourceFile]  # found files whose size or mtime changed (or never indexed)
    minified_mode: str  # "indexed" or "skipped" (MINIFIED_META_KEY)
    cold: bool  # an empty index: bulk-load without secondary indexes, nothing to clear


def _plan(root: Path, store: GraphStore, engine: str, max_bytes: int,
          discovered: Discovery | None, session: WriterSession | None,
          walk_cache: Path | None, keep_minified: bool, report: UpdateReport) -> _Plan:
    """The walk (or the caller's ``discovered`` tree) against the index: what to read and
    remove, and whether every file resolves again (``report.full_resolve``)."""
    if discovered is not None:
        found = discovered
    else:
        cache = WalkCache.load(walk_cache, engine) if walk_cache is not None else None
        found = discover(root, max_bytes, cache)
    report.skipped.update(found.skipped)
    report.files = len(found.files)
    if session is not None:
        session.begin(store)
        known = session.file_states(store)
        layout = session.layout(root, [f.path for f in found.files], found.config_paths)
    else:
        known = store.file_states()
        layout = build_layout(root, [f.path for f in found.files], found.config_paths)
    fingerprint = layout.fingerprint()
    # A new knoxidx (queries, extraction or resolution changed) re-reads every file once.
    stale_engine = store.get_meta(ENGINE_META_KEY) != engine
    if stale_engine:
        known = {p: s._replace(hash="", size=-1) for p, s in known.items()}
        report.extraction_changed = bool(known)
    report.full_resolve = stale_engine or store.get_meta("layout") != fingerprint

    current = {f.path for f in found.files}
    removed = [p for p in known if p not in current]
    minified_mode = "indexed" if keep_minified else "skipped"
    # (an index without the key was built before minified files were told apart)
    minified_changed = bool(known) and store.get_meta(MINIFIED_META_KEY) != minified_mode
    to_read = [
        f for f in found.files
        if f.path not in known
        or known[f.path].size != f.size
        or known[f.path].mtime_ns != f.mtime_ns
        or (minified_changed and BY_NAME[f.language].minified_line_chars)
    ]
    return _Plan(found, known, layout, fingerprint, stale_engine, removed, to_read,
                 minified_mode, cold=not known)


@dataclass(slots=True)
class _Written:
    """What writing the files read left for resolution."""

    blobs: dict[str, bytes] = field(default_factory=dict)  # the new facts, by path
    # and their definitions by name, for the resolver's tables (a first build)
    named_defs: NamedDefinitions = field(default_factory=NamedDefinitions)
    invalidate: set[str] = field(default_factory=set)  # lookup keys the changes touched
    membership_changed: bool = False  # a file joined or left a module: the module layer follows


def _write_reads(root: Path, store: GraphStore, plan: _Plan, report: UpdateReport,
                 workers: int, progress: Progress | None, chunk_budget: Any,
                 keep_minified: bool, looked_ns: int) -> _Written:
    """The removed files deleted, then each file read (in the parse workers) written: its row,
    module keys and nodes, and the lookup keys its change invalidates."""
    known, cold = plan.known, plan.cold
    written = _Written()
    invalidate = written.invalidate
    for path in plan.removed:  # deleted files take their nodes, edges and module keys along
        gone = known[path]
        invalidate |= keys_for(path, old_names(store, path, gone), frozenset(),
                               store.module_keys_of(gone.id), ())
        store.delete_file(gone.id)
    report.removed = len(plan.removed)
    report.removed_paths.extend(plan.removed)

    chunker = None
    if chunk_budget is not None:  # (here: a graph-only update never loads the chunker)
        from knoxidx.update.chunk_refresh import chunk_source

        chunker = functools.partial(chunk_source, budget=chunk_budget)
    # a full resolve needs no invalidation keys, so no definition names
    for result in read_all(root, plan.to_read, known, plan.layout, workers, progress,
                           names=not report.full_resolve, chunker=chunker,
                           keep_minified=keep_minified):
        report.read += 1
        state = known.get(result.path)
        if result.status == "unchanged":  # its hash was known: so was its row
            assert state is not None
            store.touch_file(state.id, result.size, recorded_mtime(result.mtime_ns,
                                                                   looked_ns))
            continue
        if result.status != "ok":
            _record_unindexable(store, result, state, report, invalidate, looked_ns)
            continue
        if result.message:
            report.warnings.append(f"{result.path}: {result.message}")
        report.changed += 1
        report.changed_paths.append(result.path)
        report.lines += result.lines
        family = BY_NAME[result.language].family
        modules = [(family, k) for k in result.module_keys]
        if state is None or state.status != "ok":
            report.added += 1
            written.membership_changed = True
            if not report.full_resolve:  # (a full resolve needs no invalidation keys)
                invalidate |= keys_for(result.path, frozenset(), result.names, (), modules)
        else:
            old_modules = store.module_keys_of(state.id)
            written.membership_changed = written.membership_changed or old_modules != modules
            if state.iface != result.iface and not report.full_resolve:
                invalidate |= interface_keys(store, result, old_modules, modules)
        file_id = store.upsert_file(
            result.path, result.language, result.size,
            recorded_mtime(result.mtime_ns, looked_ns), result.hash,
            result.lines, "ok", result.message, result.iface, result.blob,
        )
        assert result.blob is not None and result.rows is not None
        written.blobs[result.path] = result.blob
        if result.chunked is not None:
            report.chunked[result.path] = result.chunked
        store.replace_modules(file_id, modules, fresh=cold)
        if cold:
            suffix = (file_id,)
            store.insert_nodes([row + suffix for row in result.rows])
            written.named_defs.add(named_definitions(result.path, result.rows))
        else:
            store.replace_nodes(file_id, result.rows)
    if report.full_resolve and not plan.stale_engine and not cold:
        # what a file's module names and qualified names are follows from the layout
        written.membership_changed |= requalify(store, plan.layout, set(written.blobs))
    return written


@dataclass(slots=True)
class _ModuleLayer:
    """What resolution leaves for the module layer."""

    stale: bool  # to be rebuilt (an update's)
    # a first build's Imports edges and module -> file edges, for its module layer, written
    # as it resolves (see first_module_layer); None otherwise
    first_imports: list[tuple[int, int]] | None
    contains: list[tuple[int, int]]


def _resolve(store: GraphStore, plan: _Plan, written: _Written, report: UpdateReport,
             workers: int, progress: Progress | None, session: WriterSession | None,
             alongside_resolution: Callable[[UpdateReport], None] | None) -> _ModuleLayer:
    """The changed files resolved again, with those whose last resolution consulted a key
    their change invalidated (every file on a full resolve), their edges written."""
    cold = plan.cold
    if session is not None:  # the rows this update wrote, read back
        session.refresh_files(store, [*plan.removed, *(f.path for f in plan.to_read)])
        ok_paths = set(session.ok_hashes(store))
        ids = session.file_ids(store)
    else:
        ok_paths = set(store.ok_file_hashes())
        ids = store.file_ids()
    blobs = written.blobs
    if report.full_resolve:
        affected = ok_paths
    else:
        affected = set(blobs) | (store.dependents(written.invalidate) & ok_paths)
    workspace = StoreWorkspace(store, plan.layout, blobs,
                               session.facts_loader(store) if session is not None else None)
    ordered = sorted(affected)
    # A first build gathered every name as it wrote the rows: its tables answer what
    # would otherwise be one query per name and per module (java's sample: 5,000 queries)
    if cold or len(ordered) > PRELOAD_THRESHOLD:
        workspace.preload(load_all_facts=not ok_paths <= blobs.keys(),
                          named_defs=written.named_defs if cold else None)
    written.named_defs = NamedDefinitions()  # (its memory, before the resolvers fork)
    # The module layer (module nodes, module -> file, DependsOn) follows module membership
    # and Imports edges only: rebuilding it costs more than a one-file update otherwise.
    layer = _ModuleLayer(
        stale=report.full_resolve or written.membership_changed or bool(report.removed_paths),
        first_imports=[] if cold else None, contains=[])

    def first() -> None:
        """Once the resolver workers have started: a cold build's module nodes, then its
        nodes table indexed (nothing the workers consult is in it: the workspace has every
        name in memory); otherwise flush_nodes has nothing to do. Then the caller's
        work ``alongside_resolution``."""
        if cold:
            rows, made = module_nodes(store)
            store.write_first_module_nodes(rows)
            layer.contains.extend(made)
        store.flush_nodes()
        if alongside_resolution is not None:
            alongside_resolution(report)

    # forked resolvers write their rows into a spool, copied in once they are done; a
    # process with threads (a server, a watcher) resolves alone (see may_fork)
    parallel = workers > 1 and len(ordered) > PRELOAD_THRESHOLD and may_fork()
    spool = store.resolution_spool() if parallel else None
    try:
        for i, res in enumerate(_resolve_all(workspace, ordered, workers if parallel else 1,
                                             first, spool, ids), 1):
            file_id = ids[res.path]
            if layer.first_imports is not None:
                layer.first_imports.extend((e[0], e[1]) for e in res.edges if e[2] == IMPORTS)
            if res.error:
                report.errors.append(f"{res.path}: resolution failed ({res.error})")
            if not cold:
                if not layer.stale:
                    imports = {e[1] for e in res.edges if e[2] == IMPORTS}
                    layer.stale = imports != store.import_targets(file_id)
                store.clear_file_graph(file_id)
            if not res.spooled:
                store.insert_resolution(file_id, res.edges, res.unresolved, res.keys,
                                        res.externals)
            if progress and (i % 256 == 0 or i == len(ordered)):
                progress("resolve", i, len(ordered))
        if spool is not None:
            spool.copy_in()
    finally:
        if spool is not None:
            spool.remove()
    report.resolved = len(affected)
    return layer


@contextmanager
def lazy_collector() -> Iterator[None]:
    """Collect cyclic garbage rarely while an update runs (and in the workers it forks).

    An update allocates millions of small tuples and almost never a cycle; with the default
    thresholds the collector re-traverses the growing heap (facts, lookup tables, rows) over
    and over, a quarter of resolution's time on the benchmark corpus. (``bench.work`` runs
    its loops under it too, as the update's processes do.)
    """
    threshold = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        with frozen_heap():  # what exists before the update is not ours to re-check
            yield
    finally:
        gc.set_threshold(*threshold)


def _record_unindexable(
    store: GraphStore, result: ReadResult, state: FileState | None, report: UpdateReport,
    invalidate: set[str], looked_ns: int,
) -> None:
    """A file that is binary, minified, unreadable or failed to extract: remembered (so an
    unchanged one is not re-read), counted, and whatever it defined before is removed."""
    report.skipped[result.status] += 1
    if result.status == "error":
        report.errors.append(f"{result.path}: {result.message}")
    elif result.status == "timeout":
        report.warnings.append(f"{result.path}: {result.message}")
    if state is not None and state.status == "ok":
        report.removed_paths.append(result.path)
        invalidate |= keys_for(result.path, old_names(store, result.path, state), frozenset(),
                                store.module_keys_of(state.id), ())
        store.clear_file_graph(state.id)
        store.replace_nodes(state.id, [])
        store.replace_modules(state.id, [])
    store.upsert_file(result.path, result.language, result.size,
                      recorded_mtime(result.mtime_ns, looked_ns), result.hash,
                      0, result.status, result.message, "", None)


def recorded_mtime(mtime_ns: int, looked_ns: int) -> int:
    """The mtime a file's row keeps: its own, or RACY_MTIME while a change within the same
    timestamp tick could still follow the read (see RACY_FILE_NS)."""
    window = RACY_COARSE_NS if mtime_ns % 1_000_000_000 == 0 else RACY_FILE_NS
    return RACY_MTIME if mtime_ns > looked_ns - window else mtime_ns


def _resolve_all(
    workspace: StoreWorkspace, paths: list[str], workers: int, first: Callable[[], None],
    spool: ResolutionSpool | None, ids: dict[str, int],
) -> Iterator[FileResolution]:
    """Resolve files, on ``workers`` cores (see :mod:`resolve_workers`); the parent runs
    ``first`` before it resolves anything itself."""
    if workers <= 1:
        first()
        resolver = Resolver(workspace)
        for path in paths:
            yield resolver.resolve_file(path)
        return
    yield from resolve_in_parallel(workspace, paths, workers, first, spool, ids)
