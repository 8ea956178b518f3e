"""The walk cache: a walk that reuses the directory listings of the last one finds exactly what a
fresh walk finds, whatever happened to the tree in between."""

from __future__ import annotations

import os
import random
import shutil
import time
from pathlib import Path

import pytest

from knoxidx.index import Index
from knoxidx.parse import walk_cache
from knoxidx.parse.discovery import Discovery, discover
from knoxidx.parse.walk_cache import WalkCache

DAY_NS = 86_400 * 10**9


def _age(root: Path, step: int, since_ns: int) -> None:
    """Make what an operation touched look long settled: every directory modified since
    ``since_ns`` gets an old mtime of its own (what a walk an hour later would see); the others
    keep theirs. Without this, every directory the test touches is racy and never cached."""
    old = time.time_ns() - DAY_NS + step * 10**9
    for folder, dirs, _files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".knoxidx"]
        if os.stat(folder).st_mtime_ns >= since_ns:
            os.utime(folder, ns=(old, old))


def _seen(found: Discovery) -> tuple:
    return (
        [(f.path, f.size, f.mtime_ns, f.language) for f in found.files],
        found.config_paths, dict(found.skipped), found.skipped_paths,
    )


def _operation(root: Path, rng: random.Random, i: int) -> None:
    dirs = [root, *(p for p in root.rglob("*") if p.is_dir())]
    files = [p for p in root.rglob("*") if p.is_file() and p.name not in (".gitignore",)]
    folder = rng.choice(dirs)
    op = rng.choice(["add", "add", "add_dir", "delete", "rename", "edit", "grow",
                     "ignore", "unignore", "manifest", "rmdir", "config"])
    if op == "add":
        (folder / f"f{i}{rng.choice(['.py', '.ts', '.go', '.txt', '.gen.py'])}").write_text(
            "x = 1\n")
    elif op == "add_dir":
        sub = folder / rng.choice([f"d{i}", "build", "node_modules", "gen"])
        sub.mkdir(exist_ok=True)
        (sub / f"g{i}.rs").write_text("fn g() {}\n")
    elif op == "delete" and files:
        rng.choice(files).unlink()
    elif op == "rename" and files:
        src = rng.choice(files)
        src.rename(src.with_name(f"r{i}{rng.choice(['.py', '.java', '.md'])}"))
    elif op == "edit" and files:
        rng.choice(files).write_text("y = 2\n" * rng.randint(1, 5))  # in place: no dir change
    elif op == "grow" and files:
        rng.choice(files).write_bytes(b"z = 3\n" * 40)  # over the walk's size limit below
    elif op == "ignore":
        # Edited in place when it exists: the directory's mtime does not move, the rules do.
        (folder / ".gitignore").write_text(rng.choice(["*.gen.py\n", "gen/\n", "*.ts\n",
                                                       "d*/\n", "!f1.py\n*.py\n"]))
    elif op == "unignore":
        for ignore in root.rglob(".gitignore"):
            ignore.write_text("")
    elif op == "manifest":
        (folder / "package.json").write_text("{}\n")  # its build/ becomes build output
    elif op == "rmdir" and folder != root:
        shutil.rmtree(folder)
    elif op == "config":
        (folder / "tsconfig.json").write_text("{}\n")


def test_a_cached_walk_finds_what_a_fresh_walk_finds(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "a.py").write_text("x = 1\n")
    (root / "src" / "b.ts").write_text("export const b = 1;\n")
    (root / "lib").mkdir()
    (root / "lib" / "c.go").write_text("package lib\n")
    cache_file = tmp_path / "walk.cache"
    rng = random.Random(5)
    reused = 0
    since = 0
    for i in range(120):
        _age(root, i, since)
        since = time.time_ns()
        cache = WalkCache.load(cache_file, "k")
        assert _seen(discover(root, 100, cache)) == _seen(discover(root, 100)), f"step {i}"
        reused += cache.reused
        _operation(root, rng, i)
    assert reused > 200  # the cache was used, not just written


def test_a_recently_modified_directory_is_not_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # "recent" is an hour here: a test descheduled for RACY_NS between its write and the walk
    # found the new directory settled, and recorded
    racy_ns = 3600 * 10**9
    monkeypatch.setattr(walk_cache, "RACY_NS", racy_ns)
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "a.py").write_text("x = 1\n")
    old = time.time_ns() - DAY_NS
    os.utime(tmp_path, ns=(old, old))
    cache = WalkCache(None, "k")
    found = discover(tmp_path, cache=cache)
    assert [f.path for f in found.files] == ["new/a.py"]
    assert set(cache.new) == {""}  # "new/" was modified within RACY_NS of the walk
    assert time.time_ns() - (tmp_path / "new").stat().st_mtime_ns < racy_ns


def test_a_directory_holding_a_symlink_is_listed_every_time(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.py").write_text("x = 1\n")
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "to_real").symlink_to(tmp_path / "real")
    _age(tmp_path, 0, 0)
    cache = WalkCache(None, "k")
    discover(tmp_path, cache=cache)
    assert set(cache.new) == {"", "real/"}  # not links/: where a link leads may change


def test_a_broken_or_foreign_cache_file_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    _age(tmp_path, 0, 0)
    cache_file = tmp_path / "walk.cache"
    discover(tmp_path, cache=WalkCache.load(cache_file, "k"))
    assert WalkCache.load(cache_file, "k").old  # written and read back
    assert not WalkCache.load(cache_file, "another knoxidx").old
    cache_file.write_bytes(cache_file.read_bytes()[:-7])  # a torn write
    assert not WalkCache.load(cache_file, "k").old
    cache_file.write_bytes(b"\x00garbage")
    assert not WalkCache.load(cache_file, "k").old
    assert [f.path for f in discover(tmp_path, cache=WalkCache.load(cache_file, "k")).files] == [
        "a.py"]


def test_index_updates_keep_the_walk_cache_beside_the_index(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("def f():\n    return 1\n")
    _age(tmp_path, 0, 0)
    with Index.open(tmp_path, create=True) as idx:
        idx.update(retrieval=False)
    cache_file = tmp_path / ".knoxidx" / "walk.cache"
    assert cache_file.exists()
    (tmp_path / "pkg" / "b.py").write_text("from pkg.a import f\n\ndef g():\n    return f()\n")
    with Index.open(tmp_path) as idx:  # pkg/ moved: listed again, b.py found
        idx.update(retrieval=False)
        assert [c["path"] for c in idx.callers("f")["callers"]] == ["pkg/b.py"]
