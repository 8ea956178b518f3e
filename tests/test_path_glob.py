"""The path filter's Python matcher: the answers of SQLite's GLOB, in time linear in the
path (an HTTP or MCP client's `path` must not hold a reader for minutes)."""

from __future__ import annotations

import random
import re
import sqlite3
import subprocess
import sys

from knoxidx.core.path_glob import glob_regex, path_matcher


def test_a_many_star_glob_against_a_long_path_answers_at_once() -> None:
    """In a process of its own: before, `*s*s*s*s*s*s*s*s*Z` took minutes against this path
    (a regex backtracking through every split), which would hang the run, not fail it."""
    script = ("from knoxidx.core.path_glob import path_matcher; "
              "m = path_matcher('*s*s*s*s*s*s*s*s*Z'); "
              "print(m('s' * 300 + '.py'), m('s' * 300 + 'Z'))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.split() == ["False", "True"]


def test_the_matcher_answers_as_sqlite_glob() -> None:
    rng = random.Random(11)
    atoms = ["*", "**", "?", "a", "b", "/", "[ab]", "[^a]", "s", ".", "*s*"]
    conn = sqlite3.connect(":memory:")
    for _ in range(600):
        glob = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 7)))
        if not any(ch in glob for ch in "*?["):
            continue  # no wildcard: a directory prefix, not a glob
        matches = path_matcher(glob)
        for _ in range(15):
            path = "".join(rng.choice("ab/s.") for _ in range(rng.randint(1, 12)))
            sqlite_says = conn.execute("SELECT ? GLOB ?", (path, glob)).fetchone()[0]
            assert matches(path) == bool(sqlite_says), (glob, path)
            # and the POSIX regex the PostgreSQL store sends is the same language
            assert bool(re.fullmatch(glob_regex(glob), path, re.DOTALL)) == bool(sqlite_says)


# classes as SQLite reads them: `]` first is a member, reversed ranges, a `[` never closed,
# and characters that are special to a regex but not to a glob
_CLASS_GLOBS = ["[^]a]*", "[]a]*", "*[z-a]", "[c-a]", "[]-a]", "[a-]", "src/[a", "*[^]",
                "[\\]*", "[a-c-e]", "[^-a]", "[.^]*", "[[]*", "[]]"]
_CLASS_PATHS = ["]", "a", "b", "c", "d", "e", "z", "-", "^", ".", "\\", "[", "src/[a",
                "src/a", "x]", "ab", "]]"]


def test_classes_answer_as_sqlite_glob_and_never_raise() -> None:
    conn = sqlite3.connect(":memory:")
    for glob in _CLASS_GLOBS:
        matches = path_matcher(glob)  # a hostile filter was a re.error traceback
        for path in _CLASS_PATHS:
            sqlite_says = conn.execute("SELECT ? GLOB ?", (path, glob)).fetchone()[0]
            assert matches(path) == bool(sqlite_says), (glob, path)


def test_classes_answer_as_sqlite_glob_on_postgresql(pg_url: str) -> None:
    import psycopg

    sqlite = sqlite3.connect(":memory:")
    with psycopg.connect(pg_url) as conn:
        for glob in _CLASS_GLOBS:
            for path in _CLASS_PATHS:
                pg_says = conn.execute("SELECT %s ~ %s", (path, glob_regex(glob))).fetchone()[0]
                sqlite_says = sqlite.execute("SELECT ? GLOB ?", (path, glob)).fetchone()[0]
                assert pg_says == bool(sqlite_says), (glob, path)
