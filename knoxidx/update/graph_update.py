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
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knoxidx.core.facts import load_facts
from knoxidx.core.file_state import FileState
from knoxidx.core.heap import frozen_heap
from knoxidx.core.model import EdgeType, NodeKind, file_node_id, module_node_id
from knoxidx.graph.layout import Layout, build_layout
from knoxidx.graph.protocol import GraphStore
from knoxidx.graph.resolve import FileResolution, Resolver
from knoxidx.graph.workspace import NamedDefinitions, StoreWorkspace
from knoxidx.languages.registry import BY_NAME
from knoxidx.parse.discovery import DEFAULT_MAX_BYTES, Discovery, discover
from knoxidx.parse.engine import ENGINE_META_KEY, engine_fingerprint
from knoxidx.parse.parse_pool import Progress, read_all
from knoxidx.parse.reader import (
    DefinitionName,
    ReadResult,
    added_definitions,
    definition_names,
    named_definitions,
    node_rows,
)
from knoxidx.parse.walk_cache import WalkCache
from knoxidx.parse.worker_limits import may_fork
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
    report.timings["discover"] = time.perf_counter() - t0

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
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    cold = not known  # an empty index: bulk-load without secondary indexes, nothing to clear

    t1 = time.perf_counter()
    blobs: dict[str, bytes] = {}
    named_defs = NamedDefinitions()  # and its definitions by name, for the resolver's tables
    invalidate: set[str] = set()
    membership_changed = False  # a file joined or left a module: the module layer follows
    with lazy_collector(), store.transaction(), store.bulk_load(enabled=cold):
        for path in removed:  # deleted files take their nodes, edges and module keys along
            gone = known[path]
            invalidate |= _keys_for(path, _old_names(store, path, gone), frozenset(),
                                    store.module_keys_of(gone.id), ())
            store.delete_file(gone.id)
        report.removed = len(removed)
        report.removed_paths.extend(removed)

        chunker = None
        if chunk_budget is not None:  # (here: a graph-only update never loads the chunker)
            from knoxidx.update.chunk_refresh import chunk_source

            chunker = functools.partial(chunk_source, budget=chunk_budget)
        # a full resolve needs no invalidation keys, so no definition names
        for result in read_all(root, to_read, known, layout, workers, progress,
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
                membership_changed = True
                if not report.full_resolve:  # (a full resolve needs no invalidation keys)
                    invalidate |= _keys_for(result.path, frozenset(), result.names, (), modules)
            else:
                old_modules = store.module_keys_of(state.id)
                membership_changed = membership_changed or old_modules != modules
                if state.iface != result.iface and not report.full_resolve:
                    invalidate |= _interface_keys(store, result, old_modules, modules)
            file_id = store.upsert_file(
                result.path, result.language, result.size,
                recorded_mtime(result.mtime_ns, looked_ns), result.hash,
                result.lines, "ok", result.message, result.iface, result.blob,
            )
            assert result.blob is not None and result.rows is not None
            blobs[result.path] = result.blob
            if result.chunked is not None:
                report.chunked[result.path] = result.chunked
            store.replace_modules(file_id, modules, fresh=cold)
            if cold:
                suffix = (file_id,)
                store.insert_nodes([row + suffix for row in result.rows])
                named_defs.add(named_definitions(result.path, result.rows))
            else:
                store.replace_nodes(file_id, result.rows)
        if report.full_resolve and not stale_engine and not cold:
            # what a file's module names and qualified names are follows from the layout
            membership_changed |= _requalify(store, layout, set(blobs))
        report.timings["parse"] = time.perf_counter() - t1

        t2 = time.perf_counter()
        if session is not None:  # the rows this update wrote, read back
            session.refresh_files(store, [*removed, *(f.path for f in to_read)])
            ok_paths = set(session.ok_hashes(store))
            ids = session.file_ids(store)
        else:
            ok_paths = set(store.ok_file_hashes())
            ids = store.file_ids()
        if report.full_resolve:
            affected = ok_paths
        else:
            affected = set(blobs) | (store.dependents(invalidate) & ok_paths)
        workspace = StoreWorkspace(store, layout, blobs,
                                   session.facts_loader(store) if session is not None else None)
        ordered = sorted(affected)
        # A first build gathered every name as it wrote the rows: its tables answer what
        # would otherwise be one query per name and per module (java's sample: 5,000 queries)
        if cold or len(ordered) > PRELOAD_THRESHOLD:
            workspace.preload(load_all_facts=not ok_paths <= blobs.keys(),
                              named_defs=named_defs if cold else None)
        del named_defs
        # The module layer (module nodes, module -> file, DependsOn) follows module membership
        # and Imports edges only: rebuilding it costs more than a one-file update otherwise.
        module_layer_stale = (report.full_resolve or membership_changed
                              or bool(report.removed_paths))
        # a first build's Imports edges, for its module layer (see _first_module_layer)
        first_imports: list[tuple[int, int]] | None = [] if cold else None
        contains: list[tuple[int, int]] = []  # and its module -> file edges

        def first() -> None:
            """Once the resolver workers have started: a cold build's module nodes, then its
            nodes table indexed (nothing the workers consult is in it: the workspace has every
            name in memory); otherwise flush_nodes has nothing to do. Then the caller's
            work ``alongside_resolution``."""
            if cold:
                rows, made = _module_nodes(store)
                store.write_first_module_nodes(rows)
                contains.extend(made)
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
                if first_imports is not None:
                    first_imports.extend((e[0], e[1]) for e in res.edges if e[2] == IMPORTS)
                if res.error:
                    report.errors.append(f"{res.path}: resolution failed ({res.error})")
                if not cold:
                    if not module_layer_stale:
                        imports = {e[1] for e in res.edges if e[2] == IMPORTS}
                        module_layer_stale = imports != store.import_targets(file_id)
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
        report.timings["resolve"] = time.perf_counter() - t2

        t3 = time.perf_counter()
        if first_imports is not None:
            _first_module_layer(store, contains, first_imports)
        elif module_layer_stale:
            _rebuild_module_layer(store)
        store.set_meta("layout", fingerprint)
        store.set_meta(ENGINE_META_KEY, engine)
        store.set_meta("max_bytes", str(max_bytes))  # so `verify` rebuilds the same files
        store.set_meta(MINIFIED_META_KEY, minified_mode)  # (and for the next update)
        store.set_meta(WALK_SKIPPED_META_KEY, json.dumps(dict(found.skipped), sort_keys=True))
        report.timings["store"] = time.perf_counter() - t3
    report.timings["total"] = time.perf_counter() - t0
    return report


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
        invalidate |= _keys_for(result.path, _old_names(store, result.path, state), frozenset(),
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


def _requalify(store: GraphStore, layout: Layout, fresh: set[str]) -> bool:
    """The layout changed (a package gained or lost its ``__init__.py``, ``go.mod`` renamed the
    module): give every file not read this update the module keys and qualified names the new
    layout gives it, from its stored facts (nothing to parse). Without this, removing an
    ``__init__.py`` left ``pkg.m.f`` where a clean build says ``m.f``. True if any changed."""
    ids = store.file_ids()
    changed = False
    for path, blob in store.all_fact_blobs():
        if path in fresh:
            continue
        facts = load_facts(blob)
        spec = BY_NAME[facts.language]
        rules = spec.plugin.RULES
        keys = list(rules.module_keys(path, facts, layout))
        modules = [(spec.family, k) for k in keys]
        file_id = ids[path]
        if store.module_keys_of(file_id) == modules:
            continue
        changed = True
        store.replace_modules(file_id, modules)
        store.replace_nodes(file_id, node_rows(facts, rules.qualified_prefix(path, keys),
                                               rules.module_joiner, rules.separator))
    return changed


def _interface_keys(
    store: GraphStore, result: ReadResult, old_modules: list[tuple[str, str]],
    modules: list[tuple[str, str]],
) -> set[str]:
    """Lookup keys to invalidate when an indexed file's interface changed: when it only gained
    definitions, the gained names (the files that looked them up and missed); else everything
    other files could have consulted in it."""
    old = store.load_facts(result.path)
    if old is not None and old_modules == modules and result.blob is not None:
        added = added_definitions(old, load_facts(result.blob))
        if added is not None:
            keys = {"name:" + d.name for d in added}
            keys.update("owner:" + d.owner for d in added if d.owner)
            return keys
    return _keys_for(result.path, definition_names(old), result.names, old_modules, modules)


def _old_names(store: GraphStore, path: str, state: FileState) -> frozenset[DefinitionName]:
    return definition_names(store.load_facts(path)) if state.status == "ok" else frozenset()


def _keys_for(
    path: str,
    old_names: frozenset[DefinitionName],
    new_names: frozenset[DefinitionName],
    old_modules: Iterable[tuple[str, str]],
    new_modules: Iterable[tuple[str, str]],
) -> set[str]:
    """Lookup keys whose answers change when ``path`` changes its interface."""
    keys = {"file:" + path}
    changed = old_names ^ new_names
    keys.update("name:" + name for name, *_ in changed)
    keys.update("owner:" + owner for *_, owner in changed if owner)
    keys.update(f"mod:{family}:{key}" for family, key in (*old_modules, *new_modules))
    return keys


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


def _module_nodes(store: GraphStore) -> tuple[list[tuple], list[tuple[int, int]]]:
    """The module layer's nodes (one per module/package key) and its Contains module -> file
    edges, from module membership."""
    modules: dict[tuple[str, str], str] = {}
    contains: list[tuple[int, int]] = []
    for path, language, family, key in store.primary_modules():
        modules.setdefault((family, key), language)
        contains.append((module_node_id(family, key), file_node_id(path)))
    rows = [
        (module_node_id(family, key), NodeKind.MODULE.value, _module_name(family, key), key,
         None, None, None, None, None, None, language, family, "", "", 1, "", 0, None, None, None,
         None, None, None, None)
        for (family, key), language in modules.items()
    ]
    return rows, contains


def _rebuild_module_layer(store: GraphStore) -> None:
    """The module layer anew: its nodes, Contains module -> file, and DependsOn (the store's
    SQL aggregates it from the Imports edges)."""
    store.rebuild_module_layer(*_module_nodes(store))


def _first_module_layer(store: GraphStore, contains: list[tuple[int, int]],
                        first_imports: list[tuple[int, int]]) -> None:
    """The rest of a first build's module layer, its module nodes written (see
    ``write_first_module_nodes``): Contains, and DependsOn aggregated here from every Imports
    edge (source, target) rather than by the store."""
    # DependsOn: the module of an importing file -> the module of the file it imports (or
    # the external module itself), never to itself
    modules_of: dict[int, list[int]] = defaultdict(list)
    for module, file in contains:
        modules_of[file].append(module)
    depends: set[tuple[int, int]] = set()
    for source, target in first_imports:
        for from_module in modules_of.get(source, ()):
            for to_module in modules_of.get(target) or (target,):
                if to_module != from_module:
                    depends.add((from_module, to_module))
    store.write_first_module_layer(contains, sorted(depends),
                                   {target for _, target in first_imports})


def _module_name(family: str, key: str) -> str:
    for sep in ("::", "/", "."):
        if sep in key:
            return key.rsplit(sep, 1)[-1]
    return key
