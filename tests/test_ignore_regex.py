"""Ignore patterns from a cloned repository (its .gitignore, its never-send list) cannot make
a walk backtrack for ever, and match exactly what pathspec's translation matches."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pathspec

from knoxidx.parse.ignore_regex import bounded, ignore_spec

# each of these took minutes or more against the path beside it (pathspec issue #131 and
# its in-segment twin); git answers at once
HOSTILE = [
    ("*" * 50 + "Z", "a" * 200 + ".py"),
    ("*a*a*a*a*a*a*a*a*b", "a" * 200 + ".py"),
    ("a/" + "**/b/" * 8 + "**/c", "a/" + "b/" * 300 + "x.py"),
]


def test_a_hostile_gitignore_does_not_stall_the_walk(tmp_path: Path) -> None:
    """In a process of its own, so that the old behaviour fails the test (the walk would
    not end) instead of hanging the run."""
    root = tmp_path / "repo"
    deep = root.joinpath(*["b"] * 60)
    deep.mkdir(parents=True)
    (deep / ("a" * 200 + ".py")).write_text("x = 1\n")
    (root / "kept.py").write_text("x = 1\n")
    (root / "dropped.py").write_text("x = 1\n")
    (root / ".gitignore").write_text("\n".join([p for p, _ in HOSTILE] + ["dropped.py"]) + "\n")
    script = ("import sys; from pathlib import Path; from knoxidx.parse.discovery import discover; "
              "print(sorted(f.path for f in discover(Path(sys.argv[1])).files))")
    done = subprocess.run([sys.executable, "-c", script, str(root)], capture_output=True,
                          text=True, timeout=90, check=True)
    found = eval(done.stdout)  # a list of str printed by the child
    assert "kept.py" in found and "dropped.py" not in found and len(found) == 2


def test_the_rewritten_regexes_answer_as_pathspecs() -> None:
    rng = random.Random(7)
    atoms = ["a", "b", "*", "?", "[ab]", "[!a]", "[a-c]", "**", "ab", "."]

    def pattern() -> str:
        segments = ["".join(rng.choice(atoms) for _ in range(rng.randint(1, 4)))
                    for _ in range(rng.randint(1, 5))]
        return rng.choice(["", "/", "!"]) + "/".join(segments) + rng.choice(["", "/"])

    checked = 0
    for _ in range(400):
        lines = [pattern() for _ in range(rng.randint(1, 3))]
        try:
            theirs = pathspec.GitIgnoreSpec.from_lines(lines)
        except ValueError:
            continue
        ours = ignore_spec(lines)
        for _ in range(20):
            path = "/".join("".join(rng.choice("ab.c") for _ in range(rng.randint(1, 5)))
                            for _ in range(rng.randint(1, 7))) + rng.choice(["", "/"])
            assert ours.check_file(path).include == theirs.check_file(path).include, (lines, path)
            checked += 1
    assert checked > 5000


def test_hostile_patterns_answer_at_once_and_as_pathspec_would_on_short_paths() -> None:
    for pattern, _ in HOSTILE:
        ours, theirs = ignore_spec([pattern]), pathspec.GitIgnoreSpec.from_lines([pattern])
        for path in ("Z", "aaZ", "ab", "aaaab", "a/b/c", "a/b/b/c", "a/x/b/y/c"):
            assert ours.check_file(path).include == theirs.check_file(path).include
    assert bounded("^(?:.+/)?[^/]*\\.py(?:(?P<ps_d>/)|$)") == \
        "^(?:.+/)?[^/]*\\.py(?:(?P<ps_d>/)|$)"  # one wildcard: left as it is


def test_a_hostile_never_send_pattern_does_not_stall_a_check() -> None:
    script = ("from knoxidx.retrieval.egress import EgressPolicy; "
              f"p = EgressPolicy(never_send=({HOSTILE[1][0]!r},)); "
              f"print(p.allows({HOSTILE[1][1]!r}), p.allows('src/aaaaaaaab'))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=90, check=True)
    assert done.stdout.split() == ["True", "False"]
