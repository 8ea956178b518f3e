"""Which files to index: a walk of the repository honouring .gitignore and .knoxidxignore.

Never follows a symlink out of the root, detects symlink loops, and skips (with a counted
reason) what cannot or should not be read. Reading and the binary check happen later, in the
pipeline, so a file is opened at most once.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from knoxidx.graph.layout import CONFIG_NAMES
from knoxidx.indexer.languages import language_for_path

ALWAYS_SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".knoxidx", "node_modules", "__pycache__", ".venv", "venv",
    ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", ".next", ".nuxt",
    ".gradle", ".idea", ".vscode", "bower_components", ".cache",
})
# Build output: skipped where a project keeps it (beside its manifest), not everywhere, since a
# real package may be named `build` (Go's go/build).
BUILD_DIRS = frozenset({"build", "dist", "target", "out", "__pypackages__"})
MANIFESTS = frozenset({
    "pyproject.toml", "setup.py", "setup.cfg", "package.json", "Cargo.toml", "pom.xml",
    "build.gradle", "build.gradle.kts", "go.mod",
})
IGNORE_FILES = (".gitignore", ".knoxidxignore")
IGNORE_NAMES = frozenset(IGNORE_FILES)
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


def discover(root: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Discovery:
    root = root.resolve()
    result = Discovery()
    walker = _Walker(str(root), result, max_bytes)
    walker.walk(str(root), "", [])
    result.files.sort(key=lambda f: f.path)
    result.config_paths.sort()
    return result


def _load_ignore(directory: str, names: set[str], prefix: str) -> list[tuple[str, pathspec.PathSpec]]:
    specs = []
    for name in IGNORE_FILES:
        if name not in names:
            continue
        try:
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError:
            continue
        specs.append((prefix, pathspec.GitIgnoreSpec.from_lines(lines)))
    return specs


def _ignored(specs: list[tuple[str, pathspec.PathSpec]], rel: str, is_dir: bool) -> bool:
    ignored = False
    for prefix, spec in specs:
        local = rel[len(prefix):] if prefix else rel
        if is_dir:
            local += "/"
        # Later (deeper) files override earlier ones, as in git; negations included.
        result = spec.check_file(local)
        if result.include is not None:
            ignored = result.include
    return ignored


class _Walker:
    """Plain ``os.scandir`` on strings: a walk of a large tree costs milliseconds, and it runs
    on every update."""

    def __init__(self, root: str, result: Discovery, max_bytes: int) -> None:
        self.root = root
        self.result = result
        self.max_bytes = max_bytes
        self.visited: set[tuple[int, int]] = set()
        self.device = os.stat(root).st_dev

    def walk(self, directory: str, prefix: str, specs: list[tuple[str, pathspec.PathSpec]],
             inode: int | None = None) -> None:
        """Depth first, with a stack rather than recursion: a tree may nest deeper than
        Python's recursion limit."""
        self.pending: list[tuple[str, str, list, int | None]] = [(directory, prefix, specs, inode)]
        while self.pending:
            self._walk_one(*self.pending.pop())

    def _walk_one(self, directory: str, prefix: str,
                  specs: list[tuple[str, pathspec.PathSpec]], inode: int | None) -> None:
        """``inode``: the directory's inode as its parent's scandir reported it (free); None
        for the root and for a symlink's target, which need a stat to know where they lead."""
        result = self.result
        try:
            if inode is None:
                st = os.stat(directory)
                identity = (st.st_dev, st.st_ino)
            else:
                identity = (self.device, inode)
            if identity in self.visited:
                result.skip(prefix or ".", "symlink_loop")
                return
            self.visited.add(identity)
            with os.scandir(directory) as it:
                entries = list(it)  # the file list is sorted once, at the end
        except OSError:
            result.skip(prefix or ".", "unreadable")
            return
        names = {e.name for e in entries}
        if names & IGNORE_NAMES:
            specs = specs + _load_ignore(directory, names, prefix)
        has_manifest = not prefix or bool(names & MANIFESTS)
        if "pyvenv.cfg" in names and prefix:
            return  # a virtualenv under any name
        first = len(self.pending)
        for entry in entries:
            self._entry(entry, prefix, specs, has_manifest)
        self.pending[first:] = reversed(self.pending[first:])  # the recursive walk's order

    def _entry(self, entry: os.DirEntry, prefix: str, specs: list, has_manifest: bool) -> None:
        result = self.result
        name = entry.name
        rel = prefix + name
        try:
            is_link = entry.is_symlink()
            is_dir = entry.is_dir(follow_symlinks=True)
        except OSError:
            result.skip(rel, "unreadable")
            return
        if is_dir:
            if name in ALWAYS_SKIP_DIRS or (has_manifest and name in BUILD_DIRS):
                return
            if specs and _ignored(specs, rel, True):
                return
            if is_link and not _inside(self.root, entry.path):
                result.skip(rel, "symlink_outside_root")
                return
            self.pending.append((entry.path, rel + "/", specs,
                                 None if is_link else entry.inode()))
            return
        if name in CONFIG_NAMES:
            result.config_paths.append(rel)
        spec = language_for_path(name)
        if spec is None or (specs and _ignored(specs, rel, False)):
            return
        try:
            st = entry.stat(follow_symlinks=True)
        except OSError:
            result.skip(rel, "symlink_loop" if is_link else "unreadable")
            return
        if not stat.S_ISREG(st.st_mode):
            return
        if is_link and not _inside(self.root, entry.path):
            result.skip(rel, "symlink_outside_root")
            return
        if st.st_size > self.max_bytes:
            result.skip(rel, "too_large")
            return
        result.files.append(SourceFile(rel, st.st_size, st.st_mtime_ns, spec.name))


def _inside(root: str, path: str) -> bool:
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    return real == root or real.startswith(root + os.sep)
