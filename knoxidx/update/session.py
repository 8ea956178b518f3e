"""What a writer remembers between its own updates, so that a small update costs what it
changes rather than what the repository holds.

A watcher (or any long-lived :class:`knoxidx.Index` that updates more than once) keeps a
:class:`WriterSession`: a copy of the ``files`` table's states, the chunk sources, and the last
import-path layout with its warm memo. On the whole corpus (5,422 files) reading those again
cost ~35 ms of CPU per batch (file states, indexed hashes twice, file ids, chunk sources) and
rebuilding the layout ~5 ms more, against a few milliseconds for the one file a save changed.

A stale copy is the bug to fear, so the rules are strict:

- Everything is thrown away when SQLite's ``PRAGMA data_version`` moved since this session's
  last update: it moves whenever *another* connection commits (another process, a ``knoxidx
  index`` run between two ``Index.update`` calls, a second ``Index`` in this process), and never
  for this connection's own commits.
- This connection's own writes are mirrored where they happen: after an update writes files,
  their rows are read back (:meth:`refresh_files`); the chunk sources follow
  ``refresh_chunks`` write by write.
- Any failure inside an update, and any other write through the same connection (a rebuild,
  embedding), calls :meth:`clear` (``knoxidx.Index`` does), since a rolled-back transaction
  leaves the copy ahead of the tables.
- Only a SQLite store (which has ``data_version``) gets a session; anything else reads the
  tables each time, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from knoxidx.core.facts import FileFacts
from knoxidx.core.file_state import FileState
from knoxidx.graph.layout import Layout, layout_from, python_packages, read_configs

# Above this many files written in one update, reading the whole table again is as cheap as
# reading those rows back (and a big batch is rare).
REFRESH_MAX = 2000
# Other files' facts kept for resolution (the least recently used go first): re-resolving
# django's query.py loads ~30 neighbours, ~40% of its resolution time, batch after batch.
FACTS_CACHED = 512


class WriterSession:
    def __init__(self) -> None:
        self._version: int | None = None
        self._states: dict[str, FileState] | None = None
        self._chunk_sources: dict[str, str] | None = None
        self._layout: Layout | None = None
        self._layout_key: tuple | None = None
        self._facts: dict[tuple[str, str], FileFacts] = {}

    @staticmethod
    def supports(store: Any) -> bool:
        return hasattr(store, "data_version") and hasattr(store, "file_states_of")

    def clear(self) -> None:
        self._version = None
        self._states = None
        self._chunk_sources = None
        self._layout = None
        self._layout_key = None
        self._facts = {}

    def begin(self, store: Any) -> None:
        """At the start of an update, inside its transaction (so no other writer can commit
        until it ends): forget everything if another connection committed since the last."""
        version = store.data_version()
        if version != self._version:
            self.clear()
            self._version = version

    # ---- the files table -------------------------------------------------------------------

    def file_states(self, store: Any) -> dict[str, FileState]:
        """The files table's states (the caller must not modify the dict)."""
        if self._states is None:
            self._states = store.file_states()
        return self._states

    def refresh_files(self, store: Any, paths: list[str]) -> None:
        """Read back the rows of ``paths`` (written or deleted by this update)."""
        if self._states is None:
            return
        if len(paths) > REFRESH_MAX:
            self._states = None
            return
        fresh = store.file_states_of(paths)
        for path in paths:
            state = fresh.get(path)
            if state is None:
                self._states.pop(path, None)
            else:
                self._states[path] = state

    def ok_hashes(self, store: Any) -> dict[str, str]:
        """Path -> content hash of every file indexed with status ok."""
        return {p: s.hash for p, s in self.file_states(store).items() if s.status == "ok"}

    def file_ids(self, store: Any) -> dict[str, int]:
        return {p: s.id for p, s in self.file_states(store).items()}

    def facts_loader(self, store: Any) -> Callable[[str], FileFacts | None]:
        """``store.load_facts`` with a cache keyed by path and content hash (as the files
        table says after this update's writes): a file's facts follow from its content, and
        FileFacts are immutable tuples, so a changed file simply misses."""
        def load(path: str) -> FileFacts | None:
            state = self._states.get(path) if self._states is not None else None
            if state is None or state.status != "ok":
                return store.load_facts(path)
            key = (path, state.hash)
            facts = self._facts.pop(key, None)  # re-inserted below: the newest last
            if facts is None:
                facts = store.load_facts(path)
                if facts is None:
                    return None
                if len(self._facts) >= FACTS_CACHED:
                    for old in list(self._facts)[: FACTS_CACHED // 2]:
                        del self._facts[old]
            self._facts[key] = facts
            return facts

        return load

    # ---- the chunk sources (retrieval) -------------------------------------------------------

    def chunk_sources(self, chunk_store: Any) -> dict[str, str]:
        """Path -> the content hash each file's chunks were made from; the caller reports
        every change through :meth:`chunk_source_set` / :meth:`chunk_source_removed`."""
        if self._chunk_sources is None:
            self._chunk_sources = chunk_store.sources()
        return self._chunk_sources

    def chunk_source_set(self, path: str, content_hash: str) -> None:
        if self._chunk_sources is not None:
            self._chunk_sources[path] = content_hash

    def chunk_source_removed(self, path: str) -> None:
        if self._chunk_sources is not None:
            self._chunk_sources.pop(path, None)

    def chunk_sources_forgotten(self) -> None:
        self._chunk_sources = None

    # ---- the layout ------------------------------------------------------------------------

    def layout(self, root: Path, paths: list[str], config_paths: list[str]) -> Layout:
        """``build_layout``'s answer; the same object as last time when what it is made from
        (package directories, configuration files' content) did not change, so its memo of
        module names stays warm."""
        key = (root.name, python_packages(paths), read_configs(root, config_paths))
        if self._layout is None or key != self._layout_key:
            self._layout = layout_from(*key)
            self._layout_key = key
        return self._layout
