"""The reads name resolution makes, each recorded as a lookup key.

Every fact the resolver consults (a file's facts, a module's files, the definitions of a name,
the methods declared for an owner) goes through :class:`Lookups`, which adds the read's key to
``keys``: an incremental update re-resolves exactly the files whose keys a change touched. On
these reads rest the resolver's memo (an answer kept with the keys it consulted, replayed on
every hit) and its cycle guards. What names resolve to are symbols (:mod:`knoxidx.core.symbols`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from knoxidx.core.facts import FileFacts
from knoxidx.core.heap import settle
from knoxidx.core.symbols import Symbol
from knoxidx.languages.registry import BY_NAME, family_plugin
from knoxidx.parse.file_index import FUNCTION, FileIndex

# Files whose index a resolver keeps (see index()). Each resolving process (the parent and a
# child) holds this many; at 1,500 the whole benchmark corpus peaked at 527-631 MB summed over
# the build's processes, at 600 at 397-409 MB (300: 397), with resolution no slower (one
# process, min of 3: 9.00 s at 1,500, 8.49 s at 600) and the same graph.
INDEX_CACHE_FILES = 600


class Workspace(Protocol):
    """The facts resolution may read. Implementations record nothing; the resolver does."""

    layout: Any

    def interface(self, path: str
                  ) -> tuple[FileFacts, bytes | None, tuple[int, ...] | None] | None:
        """A file's facts, whose ``refs`` may hold only its base-class references, and then
        all of them still marshalled (``facts.load_references``), and its definitions' node
        ids when known (``facts.load_interface``); None: no facts."""
    def module_paths(self, family: str, key: str) -> tuple[str, ...]: ...
    def defs_named(self, family: str, name: str) -> list[tuple[str, int, str, bool]]: ...
    def methods_of(self, family: str, owner: str) -> list[tuple[str, int, str]]: ...


def family_of_language(language: str) -> str:
    return BY_NAME[language].family


class Lookups:
    """A resolver's reads of a :class:`Workspace`, each recorded in ``keys`` (see the module
    docstring), with the memo and the cycle guards built on them."""

    def __init__(self, workspace: Workspace) -> None:
        self.ws = workspace
        self.layout = workspace.layout
        self._indexes: dict[str, FileIndex | None] = {}
        self.keys: set[str] = set()
        self._active: set[tuple] = set()
        # memo key -> [answer, the lookup keys computing it consulted, the key set those were
        # last replayed into]: a second hit while resolving the same file (or computing the
        # same answer) adds nothing
        self._memo: dict[tuple, list[Any]] = {}
        self._file_keys: dict[str, str] = {}  # path -> "file:" + path, made once
        self._name_keys: dict[str, str] = {}  # name -> "name:" + name, made once
        # (family, module key) -> its "mod:" lookup key and the workspace's paths for it
        self._modules: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {}

    def forget(self) -> None:
        """Drop every answer kept about files (the index cache is being trimmed: answers
        about the dropped files would keep them alive)."""
        self._memo.clear()

    def memo(self, key: tuple, compute: Any, *args: Any) -> Any:
        """``compute(*args)`` once per key for the life of this resolver (one update: the
        facts do not change). The lookup keys ``compute`` consulted are replayed on every hit,
        so a cached answer records the same dependencies as a fresh one. (The hot callers pass
        a bound method and its arguments, not a lambda: most calls are hits, and a closure
        made for each of them would never be called.)"""
        hit = self._memo.get(key)
        if hit is not None:
            keys = self.keys
            if hit[2] is not keys:
                keys |= hit[1]
                hit[2] = keys
            return hit[0]
        outer, self.keys = self.keys, set()
        try:
            value = compute(*args)
        finally:
            consulted = self.keys
            outer |= consulted  # in place: a file's key set grows with every lookup it makes
            self.keys = outer
        if not self._active:  # answers computed inside a cycle guard may be partial
            # (the set itself, not a frozen copy: nothing adds to it once it is not ``keys``)
            self._memo[key] = [value, consulted, outer]
        return value

    @contextmanager
    def entering(self, key: tuple) -> Iterator[bool]:
        """Guards mutually recursive lookups (re-export cycles, ``a`` imports from ``b`` imports
        from ``a``): yields False when ``key`` is already being resolved further up."""
        if key in self._active:
            yield False
            return
        self._active.add(key)
        try:
            yield True
        finally:
            self._active.discard(key)

    def module_member(self, module: Symbol, name: str, depth: int,
                      compute: Callable[[], list[Symbol]]) -> list[Symbol]:
        """A family's ``module_member``: ``compute()`` under the cycle guard of (module,
        name), [] when that is being answered further up (re-exports that go round). Asked
        outside every guard, the answer is kept for the resolver's life (see :meth:`memo`):
        many files import the same names from the same modules. Inside one it is computed
        afresh, since the guard's cut can make it differ."""
        guard = ("member", module, name)
        if self._active:
            with self.entering(guard) as fresh:
                return compute() if fresh else []

        def entered() -> list[Symbol]:
            with self.entering(guard):
                return compute()

        return self.memo(("module-member", module, name, depth), entered)

    def _file_key(self, path: str) -> str:
        key = self._file_keys.get(path)
        if key is None:
            key = self._file_keys[path] = "file:" + path
        return key

    def index(self, path: str) -> FileIndex | None:
        fi = self._indexes.get(path)
        if fi is not None:  # the common case: its key made once, with the index
            self.keys.add(fi.file_key)
            return fi
        self.keys.add(self._file_key(path))
        if path in self._indexes:
            return None
        loaded = self.ws.interface(path)
        fi = None
        if loaded is not None:
            facts, refs, ids = loaded
            family = family_of_language(facts.language)
            fi = FileIndex(facts, family, family_plugin(family).RULES, refs, ids)
        if len(self._indexes) >= INDEX_CACHE_FILES:
            # Bounded memory on huge repos: forget the oldest half (paths are resolved in
            # order, so what a package's files share is still warm).
            for old in list(self._indexes)[: INDEX_CACHE_FILES // 2]:
                del self._indexes[old]
            self.forget()
        self._indexes[path] = fi
        settle()  # the new index lives as long as the resolver, and holds no cycle
        return fi

    def defining(self, path: str) -> FileIndex:
        """The index of a file a definition symbol points into: it has one, since the symbol
        was made from it."""
        fi = self.index(path)
        if fi is None:
            raise LookupError(f"no facts for {path}, which a definition symbol names")
        return fi

    def module_paths(self, family: str, key: str) -> tuple[str, ...]:
        known = self._modules.get((family, key))
        if known is None:  # asked again and again (a package per file, a type per import)
            known = self._modules[(family, key)] = (f"mod:{family}:{key}",
                                                    self.ws.module_paths(family, key))
        self.keys.add(known[0])
        return known[1]

    def defs_named(self, family: str, name: str) -> list[tuple[str, int, str, bool]]:
        self.keys.add(self._name_key(name))
        return self.ws.defs_named(family, name)

    def _name_key(self, name: str) -> str:
        key = self._name_keys.get(name)
        if key is None:
            key = self._name_keys[name] = "name:" + name
        return key

    def methods_of(self, family: str, owner: str) -> list[tuple[str, int, str]]:
        self.keys.add("owner:" + owner)
        return self.ws.methods_of(family, owner)

    def child(self, fi: FileIndex, scope: int, name: str) -> list[int] | None:
        """``fi``'s definitions named ``name`` directly in ``scope`` (-1: the top level); a
        miss is recorded (see :meth:`missed`)."""
        hit = fi.children.get((scope, name))
        if not hit:
            self.missed(fi, scope, name)
        return hit

    def module_names(self, family: str, key: str) -> dict[str, list[tuple[str, int]]]:
        """The top-level definitions of every file of a module, by name: name -> [(path,
        index of its last definition there)] in path order. One table per module for the life
        of the resolver, where scanning the files cost one lookup per file per name (a Go
        package's scope spans every file of its directory). It depends on each of those files,
        and its users record the ``name:`` keys a scan would have recorded."""
        def build() -> dict[str, list[tuple[str, int]]]:
            table: dict[str, list[tuple[str, int]]] = defaultdict(list)
            for path in self.module_paths(family, key):
                fi = self.index(path)
                if fi is None:
                    continue
                for (scope, name), indexes in fi.children.items():
                    if scope == -1:
                        table[name].append((path, indexes[-1]))
            return dict(table)

        return self.memo(("module-names", family, key), build)

    def missed_name(self, name: str) -> None:
        """Record a top-level lookup of ``name`` that some file did not answer."""
        self.keys.add(self._name_key(name))

    def missed(self, fi: FileIndex, scope: int, name: str) -> None:
        """Record that ``name`` was looked up in ``scope`` of ``fi`` and is not defined there.
        A file whose interface only gains definitions invalidates just the ``name:`` keys of
        what it gained, so every lookup that a new definition could answer must be on record.
        Function bodies are exempt: no other file looks names up inside them."""
        if scope < 0 or fi.facts.defs[scope].kind != FUNCTION:
            key = self._name_keys.get(name)  # _name_key's hit, inlined: called as often
            self.keys.add(key if key is not None else self._name_key(name))

    def definition(self, symbol: Symbol) -> Any:
        fi = self._indexes.get(symbol[1])
        if fi is None:
            fi = self.index(symbol[1])
            return fi.facts.defs[symbol[2]] if fi is not None else None
        self.keys.add(fi.file_key)  # index()'s fast path, inlined: called as often
        return fi.facts.defs[symbol[2]]
