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
    visited: set[tuple[int, int]] = set()
    _walk(root, root, "", [], result, visited, max_bytes)
    result.files.sort(key=lambda f: f.path)
    result.config_paths.sort()
    return result


def _load_ignore(directory: Path, prefix: str) -> list[tuple[str, pathspec.PathSpec]]:
    specs = []
    for name in IGNORE_FILES:
        try:
            lines = (directory / name).read_text(encoding="utf-8", errors="replace").splitlines()
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


def _walk(
    root: Path,
    directory: Path,
    prefix: str,
    specs: list[tuple[str, pathspec.PathSpec]],
    result: Discovery,
    visited: set[tuple[int, int]],
    max_bytes: int,
) -> None:
    try:
        st = directory.stat()
    except OSError:
        result.skip(prefix or ".", "unreadable")
        return
    identity = (st.st_dev, st.st_ino)
    if identity in visited:
        result.skip(prefix or ".", "symlink_loop")
        return
    visited.add(identity)
    specs = specs + _load_ignore(directory, prefix)
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        result.skip(prefix or ".", "unreadable")
        return
    has_manifest = not prefix or any(e.name in MANIFESTS for e in entries)
    for entry in entries:
        name = entry.name
        rel = prefix + name
        try:
            is_link = entry.is_symlink()
            is_dir = entry.is_dir(follow_symlinks=True)
        except OSError:
            result.skip(rel, "unreadable")
            continue
        if is_dir:
            if name in ALWAYS_SKIP_DIRS or (has_manifest and name in BUILD_DIRS):
                continue
            if _ignored(specs, rel, True):
                continue
            target = Path(entry.path)
            if is_link and not _inside(root, target):
                result.skip(rel, "symlink_outside_root")
                continue
            if (target / "pyvenv.cfg").exists():
                continue  # a virtualenv under any name
            _walk(root, target, rel + "/", specs, result, visited, max_bytes)
            continue
        if name in CONFIG_NAMES:
            result.config_paths.append(rel)
        spec = language_for_path(name)
        if spec is None or _ignored(specs, rel, False):
            continue
        try:
            st = entry.stat(follow_symlinks=True)
        except OSError:
            result.skip(rel, "symlink_loop" if is_link else "unreadable")
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        if is_link and not _inside(root, Path(entry.path)):
            result.skip(rel, "symlink_outside_root")
            continue
        if st.st_size > max_bytes:
            result.skip(rel, "too_large")
            continue
        result.files.append(SourceFile(rel, st.st_size, st.st_mtime_ns, spec.name))


def _inside(root: Path, path: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):
        return False
