"""The :class:`~knoxidx.graph.lookups.Workspace` over a store, with per-update caches.

Resolution runs inside the update's transaction, after the changed files' nodes and module
keys are written, so what the store answers is already the new state.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import Any

from knoxidx.core.facts import FileFacts, load_interface
from knoxidx.graph.protocol import GraphStore


class StoreWorkspace:
    def __init__(self, store: GraphStore, layout: Any, blobs: dict[str, bytes],
                 load: Callable[[str], FileFacts | None] | None = None) -> None:
        """``blobs``: serialised facts of the files this update wrote, loaded on use.
        ``load``: how other files' facts are read (default ``store.load_facts``; a writer's
        session passes one with a cache)."""
        self.store = store
        self._load = load or store.load_facts
        self.layout = layout
        self._blobs = dict(blobs)
        self._modules: dict[tuple[str, str], tuple[str, ...]] = {}
        self._named: dict[tuple[str, str], list[tuple]] | None = None
        self._owned: dict[tuple[str, str], list[tuple]] | None = None
        self._named_cache: dict[tuple[str, str], list[tuple]] = {}
        self._owned_cache: dict[tuple[str, str], list[tuple]] = {}
        self._preloaded_modules = False

    def preload(self, load_all_facts: bool = False,
                named_defs: NamedDefinitions | None = None) -> None:
        """Load every index at once: far cheaper than one query per name on a full build.
        With ``load_all_facts`` every file's facts are read too, so the workspace never needs
        the database again (it can be used from forked workers). ``named_defs``: what
        ``store.all_named_defs()`` would answer, gathered by the caller as it wrote the rows
        (a cold build made every row)."""
        if load_all_facts:
            for path, blob in self.store.all_fact_blobs():
                self._blobs.setdefault(path, blob)
        modules: dict[tuple[str, str], list[str]] = defaultdict(list)
        for family, key, path in self.store.all_modules():
            modules[(family, key)].append(path)
        self._modules = {k: tuple(sorted(v)) for k, v in modules.items()}
        self._preloaded_modules = True
        if named_defs is None:
            named_defs = NamedDefinitions()
            named_defs.add(self.store.all_named_defs())
        self._named, self._owned = named_defs.tables()

    def interface(self, path: str
                  ) -> tuple[FileFacts, bytes | None, tuple[int, ...] | None] | None:
        """Loaded on each call: the resolver keeps what it uses (a bounded cache). A file this
        update wrote comes as its interface, with its definitions' node ids; another as its
        whole facts, the way ``load`` (which may cache them) reads them."""
        blob = self._blobs.get(path)
        if blob is not None:
            return load_interface(blob)
        facts = self._load(path)
        return (facts, None, None) if facts is not None else None

    def module_paths(self, family: str, key: str) -> tuple[str, ...]:
        k = (family, key)
        hit = self._modules.get(k)
        if hit is None:
            hit = () if self._preloaded_modules else self.store.module_paths(family, key)
            self._modules[k] = hit
        return hit

    def defs_named(self, family: str, name: str) -> list[tuple]:
        k = (family, name)
        if self._named is not None:
            return self._named.get(k, [])
        hit = self._named_cache.get(k)
        if hit is None:
            hit = self._named_cache[k] = self.store.defs_named(family, name)
        return hit

    def methods_of(self, family: str, owner: str) -> list[tuple]:
        k = (family, owner)
        if self._owned is not None:
            return self._owned.get(k, [])
        hit = self._owned_cache.get(k)
        if hit is None:
            hit = self._owned_cache[k] = self.store.methods_of(family, owner)
        return hit


_PATH_AND_INDEX = itemgetter(0, 1)


class NamedDefinitions:
    """Definitions by (family, name) and by (family, owner), as :meth:`StoreWorkspace.preload`
    keeps them, gathered from ``(family, name, owner, path, def_index, kind, member)`` tuples
    (``store.all_named_defs``, ``reader.named_definitions``) one file at a time, in any order
    of files. A cold build adds each file's as its rows are written, while the parse workers
    run, rather than all of them at the hand-over to resolution, on one core."""

    def __init__(self) -> None:
        self.named: dict[tuple[str, str], list[tuple[str, int, str, bool]]] = defaultdict(list)
        self.owned: dict[tuple[str, str], list[tuple[str, int, str]]] = defaultdict(list)

    def add(self, defs: Iterable[tuple[str, str, str, str, int, str, int]]) -> None:
        """One file's definitions in index order (or many files' in path order)."""
        named, owned = self.named, self.owned
        for family, name, owner, path, index, kind, member in defs:
            named[(family, name)].append((path, index, kind, bool(member)))
            if owner:
                owned[(family, owner)].append((path, index, name))

    def tables(self) -> tuple[dict[tuple[str, str], list[tuple]],
                              dict[tuple[str, str], list[tuple]]]:
        """The two tables, each list in (path, index) order: the order the store answers in,
        whatever order the files were added in."""
        for table in (self.named, self.owned):
            for entries in table.values():
                if len(entries) > 1:
                    entries.sort(key=_PATH_AND_INDEX)
        return self.named, self.owned
