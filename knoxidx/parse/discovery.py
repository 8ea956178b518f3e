"""Which files to index: a walk of the repository honouring .gitignore and .knoxidxignore.

Never follows a symlink out of the root, detects symlink loops, and skips (with a counted
reason) what cannot or should not be read. Reading and the binary check happen later, in the
pipeline, so a file is opened at most once.
"""

from __future__ import annotations

import errno
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG

from knoxidx.graph.layout import CONFIG_NAMES
from knoxidx.languages.registry import MANIFESTS, language_for_path
from knoxidx.parse.ignore_rules import (
    IGNORE_FILES,
    Specs,
    is_ignored,
    load_ignore_files,
    rules_key,
)
from knoxidx.parse.walk_cache import Listing, WalkCache

ALWAYS_SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".knoxidx", "node_modules", "__pycache__", ".venv", "venv",
    ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", ".next", ".nuxt",
    ".gradle", ".idea", ".vscode", "bower_components", ".cache",
})
# Build output: skipped where a project keeps it (beside its manifest: the languages'
# MANIFESTS), not everywhere, since a real package may be named `build` (Go's go/build).
BUILD_DIRS = frozenset({"build", "dist", "target", "out", "__pypackages__"})
DEFAULT_MAX_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # repo-relative, posix separators
    size: int
    mtime_ns: int
    language: str


@dataclass(slots=True)
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    config_paths: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    skipped_paths: dict[str, str] = field(default_factory=dict)  # path -> reason (capped)

    def skip(self, path: str, reason: str) -> None:
        self.skipped[reason] += 1
        if len(self.skipped_paths) < 1000:
            self.skipped_paths[path] = reason


def discover(root: Path, max_bytes: int = DEFAULT_MAX_BYTES,
             cache: WalkCache | None = None) -> Discovery:
    """``cache``: the directory listings of the last walk (``knoxidx.parse.walk_cache``),
    reused where a directory has not changed and saved again at the end."""
    root = root.resolve()
    result = Discovery()
    walker = _Walker(str(root), result, max_bytes, cache)
    walker.walk(str(root), "", [])
    result.files.sort(key=lambda f: f.path)
    result.config_paths.sort()
    if cache is not None:
        cache.save()
    return result


class _Walker:
    """Plain ``os.scandir`` on strings: a walk of a large tree costs milliseconds, and it runs
    on every update."""

    def __init__(self, root: str, result: Discovery, max_bytes: int,
                 cache: WalkCache | None = None) -> None:
        self.root = root
        self.result = result
        self.max_bytes = max_bytes
        self.visited: set[tuple[int, int]] = set()
        self.device = os.stat(root).st_dev
        self.cache = cache
        self.start_ns = time.time_ns()
        # Symlinks inside the root, followed once the real tree is walked: (link path, rel,
        # specs, the link's directory) for directories, (rel, language, target stat) for files.
        self.linked_dirs: list[tuple[str, str, Specs, str]] = []
        self.linked_files: list[tuple[str, str, os.stat_result]] = []
        self.file_ids: set[tuple[int, int]] = set()  # (device, inode) of every file taken

    def walk(self, directory: str, prefix: str, specs: Specs,
             inode: int | None = None) -> None:
        """Depth first, with a stack rather than recursion: a tree may nest deeper than
        Python's recursion limit. Symlinks inside the root are followed last, so that what
        one leads to is indexed once, at its own path, whatever the names sort like: a link
        to a directory or file the walk reached anyway is an alias (``symlink_alias``: it
        made every definition there a second, same-named one), and one to an ancestor a loop
        (``symlink_loop``); a link into what the walk skips is followed."""
        self.pending: list[tuple[str, str, list, int | None]] = [(directory, prefix, specs, inode)]
        while self.pending or self.linked_dirs:
            while self.pending:
                self._walk_one(*self.pending.pop())
            linked, self.linked_dirs = self.linked_dirs, []
            for path, rel, link_specs, parent in reversed(linked):
                self._follow_dir(path, rel, link_specs, parent)
        for rel, language, st in self.linked_files:  # each a regular file (see _walk_one)
            if (st.st_dev, st.st_ino) in self.file_ids:
                self.result.skip(rel, "symlink_alias")
            elif st.st_size > self.max_bytes:
                self.result.skip(rel, "too_large")
            else:
                self.file_ids.add((st.st_dev, st.st_ino))
                self.result.files.append(SourceFile(rel, st.st_size, st.st_mtime_ns, language))

    def _follow_dir(self, path: str, rel: str, specs: Specs, parent: str) -> None:
        try:
            st = os.stat(path)
            target = os.path.realpath(path)
        except (OSError, ValueError):
            self.result.skip(rel, "symlink_loop")
            return
        if (st.st_dev, st.st_ino) in self.visited:
            real_parent = os.path.realpath(parent)
            loop = real_parent == target or real_parent.startswith(target + os.sep)
            self.result.skip(rel, "symlink_loop" if loop else "symlink_alias")
            return
        self.pending.append((path, rel + "/", specs, None))

    def _walk_one(self, directory: str, prefix: str,
                  specs: Specs, inode: int | None) -> None:
        """``inode``: the directory's inode as its parent's scandir reported it (free); None
        for the root and for a symlink's target, which need a stat to know where they lead.
        With a cache every directory is stat'ed: its mtime says whether the listing holds."""
        result = self.result
        cache = self.cache
        try:
            dir_st = None
            if inode is None or cache is not None:
                dir_st = os.stat(directory)
                identity = (dir_st.st_dev, dir_st.st_ino)
            else:
                identity = (self.device, inode)
            if identity in self.visited:
                result.skip(prefix or ".", "symlink_loop")
                return
            self.visited.add(identity)
            if cache is not None and dir_st is not None:
                listing = cache.lookup(prefix, dir_st, self.start_ns)
                if listing is not None and self._replay(listing, directory, prefix, specs):
                    return
            with os.scandir(directory) as it:
                entries = list(it)  # the file list is sorted once, at the end
        except OSError:
            result.skip(prefix or ".", "unreadable")
            return
        names = {e.name for e in entries}
        ignore_files = tuple(n for n in IGNORE_FILES if n in names)
        if ignore_files:
            specs = specs + load_ignore_files(directory, names, prefix, result.skip)
        has_manifest = not prefix or bool(names & MANIFESTS)
        # What the cache will record (names only: sizes and mtimes are stat'ed every walk);
        # a directory with a symlink or an entry that failed is not recorded.
        subdirs: list[str] = []
        sources: list[tuple[str, str]] = []
        configs: list[str] = []
        cacheable = cache is not None  # and so dir_st was taken, before the listing
        if "pyvenv.cfg" in names and prefix:
            entries = []  # a virtualenv under any name
        first = len(self.pending)
        # One loop with everything it needs in locals: it runs for every entry of the tree on
        # every update (8,500 files and 3,300 directories on the whole corpus), and a call
        # per entry was a third of the walk's Python time.
        pending = self.pending
        files = result.files
        skip = result.skip
        root = self.root
        max_bytes = self.max_bytes
        file_ids = self.file_ids
        for entry in entries:
            name = entry.name
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir()  # follows a symlink
            except OSError as exc:  # ELOOP: links that lead to each other, never to a file
                skip(prefix + name, "symlink_loop" if exc.errno == errno.ELOOP else "unreadable")
                cacheable = False
                continue
            if is_link:
                cacheable = False
            if is_dir:
                if name in ALWAYS_SKIP_DIRS or (has_manifest and name in BUILD_DIRS):
                    continue
                rel = prefix + name
                if specs and is_ignored(specs, rel, True):
                    continue
                if undecodable(name):
                    skip(shown(rel), "undecodable_name")
                    cacheable = False
                    continue
                if is_link:
                    if inside(root, entry.path):
                        self.linked_dirs.append((entry.path, rel, specs, directory))
                    else:
                        skip(rel, "symlink_outside_root")
                    continue
                subdirs.append(name)
                pending.append((entry.path, rel + "/", specs, entry.inode()))
                continue
            if name in CONFIG_NAMES:
                try:
                    regular = entry.is_file()  # follows a symlink
                except OSError:
                    regular = False
                if not regular:  # a FIFO named go.mod would block the layout's read
                    skip(prefix + name, "not_a_file")
                    cacheable = False
                    continue
                configs.append(name)
                result.config_paths.append(prefix + name)
            spec = language_for_path(name)
            if spec is None:
                continue
            rel = prefix + name
            if specs and is_ignored(specs, rel, False):
                continue
            if undecodable(name):
                skip(shown(rel), "undecodable_name")
                cacheable = False
                continue
            sources.append((name, spec.name))
            try:
                st = entry.stat()  # follows a symlink
            except OSError:
                skip(rel, "symlink_loop" if is_link else "unreadable")
                cacheable = False
                continue
            if not S_ISREG(st.st_mode):  # a FIFO, socket or device: never opened
                skip(rel, "not_a_file")
                continue
            if is_link:
                if inside(root, entry.path):
                    self.linked_files.append((rel, spec.name, st))
                else:
                    skip(rel, "symlink_outside_root")
                continue
            file_ids.add((st.st_dev, st.st_ino))
            if st.st_size > max_bytes:
                skip(rel, "too_large")
                continue
            files.append(SourceFile(rel, st.st_size, st.st_mtime_ns, spec.name))
        pending[first:] = reversed(pending[first:])  # the recursive walk's order
        if cacheable and cache is not None and dir_st is not None:
            cache.record(prefix, Listing(
                identity[0], identity[1], dir_st.st_mtime_ns, rules_key(specs),
                ignore_files, tuple(subdirs), tuple(sources), tuple(configs)), self.start_ns)

    def _replay(self, listing: Listing, directory: str, prefix: str, specs: Specs) -> bool:
        """Answer a directory from its cached listing; False (nothing added to the result)
        when the listing no longer holds and the directory must be listed again."""
        cache = self.cache
        assert cache is not None  # a listing comes from it
        if listing.ignore_files:
            specs = specs + load_ignore_files(directory, set(listing.ignore_files), prefix,
                                         self.result.skip)
        if rules_key(specs) != listing.rules:
            return False
        stats = []
        base = directory + os.sep
        for name, _language in listing.files:
            try:
                stats.append(os.stat(base + name))
            except OSError:
                return False  # gone without its directory moving: list it again
        result = self.result
        for name in listing.configs:
            result.config_paths.append(prefix + name)
        files = result.files
        max_bytes = self.max_bytes
        file_ids = self.file_ids
        for (name, language), st in zip(listing.files, stats, strict=True):
            if not S_ISREG(st.st_mode):
                result.skip(prefix + name, "not_a_file")
                continue
            file_ids.add((st.st_dev, st.st_ino))
            if st.st_size > max_bytes:
                result.skip(prefix + name, "too_large")
                continue
            files.append(SourceFile(prefix + name, st.st_size, st.st_mtime_ns, language))
        pending = self.pending
        for name in reversed(listing.subdirs):
            pending.append((base + name, prefix + name + "/", specs, None))
        cache.keep(prefix, listing)
        return True


def undecodable(name: str) -> bool:
    """Whether a file or directory name is not valid UTF-8 (Python decodes its bytes with
    surrogate escapes): the index could neither store it as text nor show it, and indexing a
    repository holding one stopped with a traceback. Such a file is skipped, counted."""
    if name.isascii():
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def shown(path: str) -> str:
    """``path`` as a user can read it: a byte that is not UTF-8 as ``\\xff``."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def inside(root: str, path: str) -> bool:
    """Whether ``path``, symlinks resolved, is ``root`` or lies under it."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    return real == root or real.startswith(root + os.sep)
