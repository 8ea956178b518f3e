"""Which files get indexed, and what is skipped with a counted reason."""

from __future__ import annotations

import os
from pathlib import Path

from knoxidx.parse.discovery import discover


def paths(root: Path) -> set[str]:
    return {f.path for f in discover(root).files}


def test_gitignore_at_every_level_and_knoxidxignore(repo) -> None:
    root = repo({
        ".gitignore": "*.gen.py\n/build_out/\n",
        "a.py": "x = 1\n",
        "b.gen.py": "x = 1\n",
        "build_out/c.py": "x = 1\n",
        "sub/.gitignore": "local.py\n!keep.gen.py\n",
        "sub/local.py": "x = 1\n",
        "sub/keep.gen.py": "x = 1\n",
        "sub/d.ts": "export const d = 1;\n",
        ".knoxidxignore": "vendor/\n",
        "vendor/v.go": "package v\n",
    })
    assert paths(root) == {"a.py", "sub/d.ts", "sub/keep.gen.py"}


def test_always_skipped_directories(repo) -> None:
    root = repo({
        "node_modules/x/index.js": "module.exports = 1;\n",
        ".git/hooks/a.py": "x = 1\n",
        "venv2/pyvenv.cfg": "home = /usr\n",
        "venv2/lib/site.py": "x = 1\n",
        "pyproject.toml": "[project]\nname='x'\n",
        "build/gen.py": "x = 1\n",
        "go/build/build.go": "package build\n",
        "src/main.rs": "fn main() {}\n",
    })
    assert paths(root) == {"go/build/build.go", "src/main.rs"}


def test_languages_by_extension(repo) -> None:
    files = {f"f{ext}": "" for ext in (
        ".py", ".pyi", ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".rs",
        ".go", ".java", ".txt", ".md", ".c")}
    root = repo(files)
    langs = {f.path: f.language for f in discover(root).files}
    assert langs == {
        "f.py": "python", "f.pyi": "python", "f.ts": "typescript", "f.mts": "typescript",
        "f.cts": "typescript", "f.tsx": "tsx", "f.js": "javascript", "f.jsx": "javascript",
        "f.mjs": "javascript", "f.cjs": "javascript", "f.rs": "rust", "f.go": "go",
        "f.java": "java",
    }


def test_too_large_is_skipped_with_reason(repo) -> None:
    root = repo({"big.py": "x = 1\n" * 1000, "small.py": "x = 1\n"})
    found = discover(root, max_bytes=1000)
    assert [f.path for f in found.files] == ["small.py"]
    assert found.skipped["too_large"] == 1


def test_symlink_loop_and_outside_root(repo, tmp_path: Path) -> None:
    root = repo({"a/x.py": "x = 1\n"})
    os.symlink("..", root / "a" / "loop")  # a/loop -> root: a cycle
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("x = 1\n")
    os.symlink(outside, root / "elsewhere")
    os.symlink(outside / "secret.py", root / "secret_link.py")
    os.symlink(root / "missing.py", root / "dangling.py")
    found = discover(root)
    assert {f.path for f in found.files} == {"a/x.py"}
    assert found.skipped["symlink_outside_root"] == 2
    assert found.skipped["symlink_loop"] >= 1


def test_a_source_name_that_is_not_a_regular_file_is_skipped_counted(repo) -> None:
    """A FIFO or a socket named like a source file (a dev server's `app.sock.js`, a named pipe
    `gen.py`) was left out without a word: every other file left out is counted by reason.
    Now it is `not_a_file`, listed and from the walk cache alike, and nothing opens it (opening
    a FIFO for reading blocks until a writer comes)."""
    import socket

    from knoxidx.parse.walk_cache import WalkCache

    root = repo({"ok.py": "x = 1\n", "pkg/fine.py": "y = 2\n"})
    os.mkfifo(root / "gen.py")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(root / "pkg" / "app.sock.js"))
        cache = WalkCache(root / "walk.cache", "engine")
        for _ in range(2):  # listed, then from the walk cache
            found = discover(root, cache=cache)
            assert {f.path for f in found.files} == {"ok.py", "pkg/fine.py"}
            assert found.skipped["not_a_file"] == 2
            assert {p: r for p, r in found.skipped_paths.items()} == {
                "gen.py": "not_a_file", "pkg/app.sock.js": "not_a_file"}
    finally:
        server.close()


def test_odd_file_names(repo) -> None:
    root = repo({"with space.py": "x = 1\n", "ünïcode.py": "y = 2\n", "new\nline.py": "z = 3\n"})
    assert paths(root) == {"with space.py", "ünïcode.py", "new\nline.py"}


def test_names_that_are_not_utf8_are_skipped_counted_and_the_rest_indexed(repo) -> None:
    """A file (or directory) name that is not valid UTF-8 stopped the whole index with a
    traceback (the path could not be stored as text). Now each is skipped with a counted
    reason, shown with its bad bytes escaped, on every walk (the walk cache does not hide it),
    and the watcher's per-file path agrees."""
    from knoxidx.index import Index
    from knoxidx.parse.walk_cache import WalkCache
    from knoxidx.parse.watch_filter import DiscoveryCache, RepoPathFilter

    root = repo({"ok.py": "def ok():\n    return bad()\n", "pkg/fine.py": "x = 1\n"})
    base = os.fsencode(root)
    with open(os.path.join(base, b"bad\xff.py"), "wb") as fh:
        fh.write(b"def bad():\n    return 1\n")
    os.mkdir(os.path.join(base, b"dir\xfe"))
    with open(os.path.join(base, b"dir\xfe", b"inner.py"), "wb") as fh:
        fh.write(b"y = 2\n")
    cache = WalkCache(root / "walk.cache", "engine")
    for _ in range(2):  # listed, then from the walk cache
        found = discover(root, cache=cache)
        assert {f.path for f in found.files} == {"ok.py", "pkg/fine.py"}
        assert found.skipped["undecodable_name"] == 2
        assert set(found.skipped_paths) == {"bad\\xff.py", "dir\\xfe"}
    with Index.open(root, create=True) as idx:
        report = idx.update(jobs=1, retrieval=False)
        assert report.errors == [] and report.skipped["undecodable_name"] == 2
        assert [s["path"] for s in idx.symbols("ok", kind="Function")] == ["ok.py"]
    watched = DiscoveryCache(RepoPathFilter(root))
    watched.full()
    patched = watched.patched([os.fsdecode(b"bad\xff.py"), "ok.py"])
    assert patched is not None and {f.path for f in patched.files} == {"ok.py", "pkg/fine.py"}


def test_a_symlink_inside_the_root_is_indexed_once_at_its_real_path(repo) -> None:
    """A symlink inside the root to a file or directory the walk reaches anyway made a second
    copy of every definition there (so every name in it was ambiguous), and a directory link
    that sorted first took the real directory's place, which was then called a loop. Now
    links are followed after the real tree: such a link is an alias, skipped and counted; a
    link into what the walk skips (an ignored directory) is still followed."""
    from knoxidx.index import Index
    from knoxidx.parse.watch_filter import DiscoveryCache, RepoPathFilter

    root = repo({
        "real/lib.py": "def helper():\n    return 1\n",
        "app.py": "from real.lib import helper\n\ndef main():\n    return helper()\n",
        ".gitignore": "vendor/\n",
        "vendor/v.py": "def vendored():\n    return 2\n",
    })
    os.symlink("real", root / "alias")  # sorts before its target
    os.symlink("real/lib.py", root / "lib.py")
    os.symlink("vendor/v.py", root / "v.py")  # into an ignored directory: followed
    found = discover(root)
    assert {f.path for f in found.files} == {"app.py", "real/lib.py", "v.py"}
    assert found.skipped["symlink_alias"] == 2 and not found.skipped["symlink_loop"]
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
        callers = idx.callers("helper")  # one definition, not two
        assert callers["symbol"]["path"] == "real/lib.py"
        assert [c["qualified_name"] for c in callers["callers"]] == ["app.main"]
    # the watcher's per-file path cannot tell an alias alone: a link's event walks the tree
    watched = DiscoveryCache(RepoPathFilter(root))
    watched.full()
    assert watched.patched(["lib.py"]) is None
    assert watched.patched(["app.py"]) is not None


def test_symlink_to_a_non_root_ancestor_is_walked_once(repo) -> None:
    root = repo({"a/b/x.py": "x = 1\n", "a/y.py": "y = 1\n"})
    os.symlink("..", root / "a" / "b" / "up")  # a/b/up -> a
    found = discover(root)
    assert {f.path for f in found.files} == {"a/b/x.py", "a/y.py"}
    assert found.skipped["symlink_loop"] == 1


def test_links_that_lead_to_each_other_are_a_symlink_loop_not_unreadable(repo) -> None:
    """`a -> b -> a` never reaches a file (ELOOP): a loop, as the summary names it, not a
    file the user cannot read."""
    root = repo({"x.py": "x = 1\n"})
    os.symlink("loop2", root / "loop1")
    os.symlink("loop1", root / "loop2")
    os.symlink("self.py", root / "self.py")
    found = discover(root)
    assert [f.path for f in found.files] == ["x.py"]
    assert found.skipped_paths == {"loop1": "symlink_loop", "loop2": "symlink_loop",
                                   "self.py": "symlink_loop"}


# ---- the ignore-rule pre-filter and its cache ----------------------------------------------

IGNORE_FILES_SEEN = [
    ["*.gen.py", "/build_out/", "!keep.gen.py"],
    ["# a comment", "", "vendor/", "docs/**/*.py", "!docs/keep/**"],
    ["*", "!*/", "!*.py"],  # ignore everything but Python files
    ["a/b", "**/tmp", "x?.ts", "[abc].go", "\\!bang.py", "trailing\\ "],
    ["/", "**", "***/", "dir/"],
    [],
]
PATHS_SEEN = [
    "a.py", "b.gen.py", "keep.gen.py", "sub/keep.gen.py", "build_out/", "build_out/c.py",
    "sub/build_out/", "vendor/", "vendor/v.go", "src/vendor/x.go", "docs/a/b.py",
    "docs/keep/b.py", "docs/", "a/b", "a/b/", "a/b/c.rs", "x/tmp/", "tmp", "xy.ts", "xyz.ts",
    "a.go", "d.go", "!bang.py", "trailing ", "dir/", "dir", "q/dir/", "main.rs", "pkg/",
]


def test_ignore_prefilter_agrees_with_pathspec_everywhere() -> None:
    """The pre-filter only skips pathspec when no pattern can match: every verdict, negations
    and directory-only patterns included, is pathspec's own."""
    import pathspec

    from knoxidx.parse.ignore_rules import IgnoreRules

    for lines in IGNORE_FILES_SEEN:
        rules = IgnoreRules(lines)
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        for path in PATHS_SEEN:
            assert rules.verdict(path) == spec.check_file(path).include, (lines, path)


def test_an_edited_ignore_file_is_honoured_by_the_next_walk(repo) -> None:
    """Compiled rules are cached by the ignore file's content: a walk right after an edit (even
    one that keeps the file's size and mtime) sees the new rules."""
    root = repo({".gitignore": "a.py\n", "a.py": "x = 1\n", "b.py": "x = 1\n"})
    assert paths(root) == {"b.py"}
    ignore = root / ".gitignore"
    stat = ignore.stat()
    ignore.write_text("b.py\n")
    os.utime(ignore, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert paths(root) == {"a.py"}
    ignore.write_text("")
    assert paths(root) == {"a.py", "b.py"}


def test_a_line_pathspec_cannot_compile_is_skipped_like_git_does(repo) -> None:
    """A lone "!" in a .gitignore was a traceback; git ignores the line, and so do we."""
    root = repo({".gitignore": "!\nb.py\n", "a.py": "x = 1\n", "b.py": "x = 1\n"})
    assert paths(root) == {"a.py"}
