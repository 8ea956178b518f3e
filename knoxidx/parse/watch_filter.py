"""Which paths of a repository matter to the index: the watcher's event filter, its cached
discovery, and the confinement check of code readers.

It answers with discovery's own rules (``knoxidx.parse.discovery``): the always-skipped
directories, build output beside a manifest, virtualenvs, ``.gitignore`` / ``.knoxidxignore``
at every level with negations, symlinks out of the root. Verdicts on directories are cached,
so an event costs a few dictionary lookups; :meth:`RepoPathFilter.reset` drops the cache when
an ignore file, a manifest or a virtualenv marker changes.
"""

from __future__ import annotations

import os
import stat
import threading
from collections import Counter
from collections.abc import Container
from pathlib import Path

from knoxidx.core.config import CONFIG_FILES
from knoxidx.core.files import is_private
from knoxidx.graph.layout import CONFIG_NAMES
from knoxidx.languages.registry import language_for_path
from knoxidx.parse.discovery import (
    ALWAYS_SKIP_DIRS,
    BUILD_DIRS,
    DEFAULT_MAX_BYTES,
    MANIFESTS,
    Discovery,
    SourceFile,
    discover,
    inside,
    undecodable,
)
from knoxidx.parse.ignore_rules import IGNORE_NAMES, Specs, is_ignored, load_ignore_files

# Files whose change can change what discovery finds, or how imports resolve; the
# repository's settings too (``[index] minified`` decides which files are read).
_RULE_FILES = IGNORE_NAMES | MANIFESTS | {"pyvenv.cfg"}
TRIGGER_NAMES = _RULE_FILES | CONFIG_NAMES | frozenset(CONFIG_FILES)


class RepoPathFilter:
    """Thread-safe; paths are repo-relative with ``/`` separators ("" is the root)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.path.realpath(os.fspath(root))
        self._lock = threading.Lock()
        self._dir_skipped: dict[str, bool] = {}
        self._specs: dict[str, Specs] = {}

    # ---- paths -------------------------------------------------------------------------

    def relative(self, path: str | bytes) -> str | None:
        """``path`` (absolute) relative to the root, or None when it is not under it or its
        name is not valid UTF-8 (discovery skips it: in a batch, it made the watcher's log
        line fail, and the batch with it, again and again)."""
        text = os.fsdecode(path)
        if text == self.root:
            return ""
        prefix = self.root + os.sep
        if not text.startswith(prefix):
            return None
        rel = text[len(prefix):]
        if undecodable(rel):
            return None
        return rel.replace(os.sep, "/")

    def reset(self) -> None:
        with self._lock:
            self._dir_skipped.clear()
            self._specs.clear()

    # ---- verdicts ----------------------------------------------------------------------

    def dir_skipped(self, rel_dir: str) -> bool:
        """Whether discovery skips this directory (and so everything under it)."""
        if not rel_dir:
            return False
        with self._lock:
            return self._dir_skipped_locked(rel_dir)

    def gone_dir_skipped(self, rel_dir: str) -> bool:
        """Whether discovery skipped this directory, now deleted or moved away: by its name and
        its ancestors only, since whatever sits at the path now (a link out of the root, a
        new virtualenv) is not what was there."""
        parent, _, name = rel_dir.rpartition("/")
        with self._lock:
            return ((bool(parent) and self._dir_skipped_locked(parent))
                    or self._skipped_by_name(parent, rel_dir, name))

    def file_ignored(self, rel: str) -> bool:
        """Whether discovery would never look at this file: it lies in a skipped directory or
        an ignore file matches it."""
        parent, _, _ = rel.rpartition("/")
        with self._lock:
            if parent and self._dir_skipped_locked(parent):
                return True
            specs = self._specs_locked(parent)
            return bool(specs) and is_ignored(specs, rel, False)

    def wants_file(self, rel: str) -> bool:
        """Whether a change to this file can change the index: an indexable source file, or a
        file that changes discovery or resolution (ignore files, manifests, go.mod,
        tsconfig.json...)."""
        name = rel.rpartition("/")[2]
        if name in TRIGGER_NAMES:
            parent = rel.rpartition("/")[0]
            return not (parent and self.dir_skipped(parent))
        if language_for_path(name) is None:
            return False
        return not self.file_ignored(rel)

    def changes_rules(self, rel: str) -> bool:
        """Whether this file changes which paths are skipped (the cache must be dropped)."""
        return rel.rpartition("/")[2] in _RULE_FILES

    def private(self, rel: str) -> bool:
        """Version-control and index internals, never shown to a client."""
        return is_private(rel.split("/"))

    # ---- internals (hold the lock) ------------------------------------------------------

    def _dir_skipped_locked(self, rel_dir: str) -> bool:
        cached = self._dir_skipped.get(rel_dir)
        if cached is not None:
            return cached
        # Ancestors first, in a loop: a path may nest deeper than Python's recursion limit.
        chain = _uncached_chain(rel_dir, self._dir_skipped)
        top_parent = chain[-1].rpartition("/")[0]
        skipped = bool(top_parent) and self._dir_skipped[top_parent]
        for directory in reversed(chain):
            parent, _, name = directory.rpartition("/")
            skipped = (
                skipped
                or self._skipped_by_name(parent, directory, name)
                or os.path.exists(os.path.join(self.root, directory, "pyvenv.cfg"))
                or self._links_outside(directory)
            )
            self._dir_skipped[directory] = skipped
        return skipped

    def _skipped_by_name(self, parent: str, rel_dir: str, name: str) -> bool:
        return (name in ALWAYS_SKIP_DIRS
                or (name in BUILD_DIRS and self._has_manifest(parent))
                or self._ignored_dir(parent, rel_dir))

    def _ignored_dir(self, parent: str, rel_dir: str) -> bool:
        specs = self._specs_locked(parent)
        return bool(specs) and is_ignored(specs, rel_dir, True)

    def _has_manifest(self, rel_dir: str) -> bool:
        if not rel_dir:
            return True  # discovery treats the root as a project
        base = os.path.join(self.root, rel_dir)
        return any(os.path.exists(os.path.join(base, m)) for m in MANIFESTS)

    def _links_outside(self, rel_dir: str) -> bool:
        full = os.path.join(self.root, rel_dir)
        if not os.path.islink(full):
            return False
        real = os.path.realpath(full)
        return not (real == self.root or real.startswith(self.root + os.sep))

    def _specs_locked(self, rel_dir: str) -> Specs:
        """The ignore specs in force for the entries of ``rel_dir``: its ancestors' and its
        own, as discovery accumulates them walking down."""
        cached = self._specs.get(rel_dir)
        if cached is not None:
            return cached
        chain = _uncached_chain(rel_dir, self._specs)
        if "" not in self._specs:
            chain.append("")  # the root's own specs are not cached yet either
        specs: Specs = []
        for current in reversed(chain):  # ancestors first, in a loop (see _dir_skipped_locked)
            if current:
                inherited = self._specs[current.rpartition("/")[0]]
                prefix = current + "/"
            else:
                inherited, prefix = [], ""
            directory = os.path.join(self.root, current) if current else self.root
            present = {n for n in IGNORE_NAMES if os.path.isfile(os.path.join(directory, n))}
            specs = (inherited + load_ignore_files(directory, present, prefix) if present
                     else inherited)
            self._specs[current] = specs
        return specs


class DiscoveryCache:
    """The last full discovery of the tree, patched path by path from file events, so that a
    batch of edits does not walk the whole repository again. Anything structural (a directory
    event, an ignore file, a manifest, a layout config) calls for :meth:`full`."""

    def __init__(self, path_filter: RepoPathFilter, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.filt = path_filter
        self.max_bytes = max_bytes
        self._files: dict[str, SourceFile] | None = None
        self._last: Discovery | None = None

    def full(self) -> Discovery:
        found = discover(Path(self.filt.root), self.max_bytes)
        self._last = found
        self._files = {f.path: f for f in found.files}
        return found

    def patched(self, paths: list[str]) -> Discovery | None:
        """The last discovery with ``paths`` (files) looked at again; None when that cannot
        be trusted (no discovery yet, or a path that changes the rules)."""
        if self._files is None or self._last is None:
            return None
        for rel in paths:
            if rel.rpartition("/")[2] in TRIGGER_NAMES:
                return None
            full = os.path.join(self.filt.root, rel)
            if os.path.islink(full) and inside(self.filt.root, full):
                return None  # a link inside is an alias or not by what the whole walk reaches
            source = self._source_file(rel)
            if source is None:
                self._files.pop(rel, None)
            else:
                self._files[rel] = source
        last = self._last
        return Discovery(files=sorted(self._files.values(), key=lambda f: f.path),
                         config_paths=list(last.config_paths), skipped=Counter(last.skipped),
                         skipped_paths=dict(last.skipped_paths))

    def _source_file(self, rel: str) -> SourceFile | None:
        """What discovery's walk would record for this file, or None (as ``_Walker._entry``:
        a known language, not ignored, a regular file, inside the root, not too large)."""
        spec = language_for_path(rel.rpartition("/")[2])
        if spec is None or undecodable(rel) or self.filt.file_ignored(rel):
            return None
        full = os.path.join(self.filt.root, rel)
        try:
            st = os.stat(full)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or st.st_size > self.max_bytes:
            return None
        if os.path.islink(full):
            return None  # one out of the root (one inside made ``patched`` walk the tree)
        return SourceFile(rel, st.st_size, st.st_mtime_ns, spec.name)


def _uncached_chain(rel_dir: str, cache: Container[str]) -> list[str]:
    """``rel_dir`` and its ancestors up to (not including) the nearest cached one or the root,
    deepest first."""
    chain = []
    current = rel_dir
    while current and current not in cache:
        chain.append(current)
        current = current.rpartition("/")[0]
    return chain
