"""Change requests mined from a repository's history: the question, the revision it is asked at,
and the definitions the change touched.

A task is a first-parent, non-merge commit that changes the bodies of 1-5 existing functions
in 1-4 existing non-test source files of the repository's language. The question is the
commit's subject and the first paragraph of its body with issue and pull-request numbers taken
out; it is asked at the commit's parent. Everything here is deterministic: the same history
gives the same tasks.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from knoxidx.languages.registry import language_for_path
from knoxidx.parse.extract import extract
from knoxidx.retrieval.priors import is_test_path

MIN_GOLD, MAX_GOLD = 1, 5
MIN_FILES, MAX_FILES = 1, 4
MIN_QUESTION_WORDS = 3
MAX_QUESTION_CHARS = 1500  # knoxidx's context refuses queries past 2,000 characters
FUNCTION_KIND = "Function"

# Chores by their subject: releases, typo and style fixes, docs, dependency and CI upkeep,
# reverts. Pure whitespace changes are caught by the diff itself (see _substantive).
_CHORE = re.compile(
    r"^(chore|docs?|style|ci|build|release|test|tests|deps)(\([^)]*\))?!?:"
    r"|^v?\d+\.\d+(\.\d+)?\b|^(merge|revert|docs?|comments?)\b"
    r"|\b(bump(ed|s)?|prepare\s+(for\s+)?(the\s+)?release|release\s+v?\d|version\s+v?\d)"
    r"|\b(changelog|changes\.rst|typos?|spelling|misspell\w*|reformat\w*|rustfmt|gofmt|"
    r"prettier|black|isort|flake8|eslint|clippy|lint(er|ing)?|pre-commit|docstrings?|javadoc|"
    r"documentation|readme|copyright|licen[cs]e|whitespace|dependabot|renovate)\b"
    r"|\b(update|fix|improve|add|clarify|correct|tweak)\w*\s+(the\s+|some\s+)?"
    r"(docs?|comments?)\b(?![.(])"
    r"|\b(update|upgrade)\s+(the\s+)?(\w+\s+)?(dependencies|deps|requirements)\b"
    r"|\b(re)?wrap\w*\b.*\b\d+\s+columns?\b",
    re.IGNORECASE,
)
_NOT_SOURCE_DIR = re.compile(r"(^|/)(docs|examples?|benches|benchmarks?|vendor)/")
_TRAILER = re.compile(r"^[A-Za-z][\w-]*: ")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")

# issue and pull-request references: "(#12)", "fixes #12", "org/repo#12", "GH-12"
_REF = r"(?:[\w.-]+/[\w.-]+)?(?:#|\bgh-)\d+\b"
_REF_VERB = r"(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?|refs?|see|for|in|re)"
_QUESTION_REFS = (
    re.compile(rf"\(\s*(?:{_REF_VERB}\s+)?{_REF}(?:\s*(?:,|and)\s*{_REF})*\s*\)", re.IGNORECASE),
    re.compile(rf"\b{_REF_VERB}:?\s+{_REF}(?:\s*(?:,|and)\s*{_REF})*", re.IGNORECASE),
    re.compile(_REF, re.IGNORECASE),
    re.compile(r"\[(skip ci|ci skip)\]", re.IGNORECASE),
)


@dataclass(frozen=True, slots=True)
class Definition:
    path: str
    name: str  # qualified within its file: "Context.invoke"
    start: int
    end: int

    @property
    def short_name(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    @property
    def lines(self) -> int:
        return self.end - self.start + 1


@dataclass(frozen=True, slots=True)
class Task:
    repo: str
    commit: str
    parent: str
    date: str  # committer date, ISO 8601
    subject: str
    question: str
    files: tuple[str, ...]  # the changed source files
    gold: tuple[Definition, ...]  # from the mined parent blobs; re-read from the index at run


# ---- git -----------------------------------------------------------------------------------


# No user or system config, no pager, no prompt: what git does here depends on the history only.
_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_PAGER": "cat",
            "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "PATH": "/usr/bin:/bin:/usr/local/bin"}


def git_bytes(repo: Path, *args: str) -> bytes:
    """``git -C repo args``; external diff and text-conversion drivers a repository's own
    config could name are never run (``--no-ext-diff`` / ``--no-textconv`` on diffs)."""
    return subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-C", str(repo), *args],
                          capture_output=True, check=True, env=_GIT_ENV).stdout


def git(repo: Path, *args: str) -> str:
    return git_bytes(repo, *args).decode("utf-8", "replace")


# ---- the question --------------------------------------------------------------------------


def clean_question(message: str) -> str:
    """Subject + first paragraph of the body, issue and PR numbers removed, on one line."""
    lines = message.strip().split("\n")
    subject = lines[0].strip()
    body = "\n".join(lines[1:]).strip()
    first = ""
    for paragraph in re.split(r"\n\s*\n", body):
        paragraph = paragraph.strip()
        rows = [r for r in paragraph.split("\n") if r.strip()]
        if rows and not all(_TRAILER.match(r.strip()) for r in rows):
            first = paragraph
            break
    text = f"{subject}\n{first}" if first else subject
    for pattern in _QUESTION_REFS:
        text = pattern.sub("", text)
    text = re.sub(r"\(\s*[,;]?\s*\)", "", text)
    text = re.sub(r"\s+", " ", text).strip(" ,;:-")
    return text[:MAX_QUESTION_CHARS].strip()


def is_chore(subject: str) -> bool:
    return bool(_CHORE.search(subject))


# ---- definitions and hunks -----------------------------------------------------------------


def functions_of(path: str, source: bytes) -> list[Definition]:
    """The function-like definitions knoxidx's extractor finds in a file."""
    spec = language_for_path(path)
    if spec is None:
        return []
    facts = extract(path, source, spec.name)
    return [Definition(path, d.qualname, d.start_line, d.end_line)
            for d in facts.defs if d.kind == FUNCTION_KIND]


@dataclass(frozen=True, slots=True)
class Hunk:
    first: int  # the old side's changed lines; a pure insertion after old line n is (n + 1, n)
    last: int
    added: str = ""  # the first line the hunk adds, if any


def parse_hunks(diff: str) -> list[Hunk]:
    """The hunks of a ``-U0`` diff."""
    hunks: list[Hunk] = []
    pending: tuple[int, int] | None = None
    for line in diff.split("\n"):
        match = _HUNK.match(line)
        if match:
            if pending:
                hunks.append(Hunk(*pending))
            start = int(match.group(1))
            count = int(match.group(2)) if match.group(2) is not None else 1
            pending = (start, start + count - 1) if count else (start + 1, start)
        elif pending and line.startswith("+") and not line.startswith("+++"):
            hunks.append(Hunk(*pending, added=line[1:]))
            pending = None
    if pending:
        hunks.append(Hunk(*pending))
    return hunks


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def touched_definitions(functions: list[Definition], hunks: list[Hunk],
                        old_lines: list[str]) -> list[Definition]:
    """The innermost functions whose lines the hunks change. An insertion counts for the
    function it lands inside, or for the one whose last line it follows when it is indented
    deeper than that function's first line (appended to a body without a closing brace)."""
    touched: dict[Definition, None] = {}
    for hunk in hunks:
        if hunk.first > hunk.last:  # inserted after old line `last`
            after = hunk.last
            inside = [f for f in functions if f.start <= after < f.end]
            appended = [f for f in functions if f.end == after and hunk.added.strip()
                        and 0 < f.start <= len(old_lines)
                        and _indent(hunk.added) > _indent(old_lines[f.start - 1])]
            if inside or appended:
                touched[min(inside + appended, key=lambda f: f.lines)] = None
            continue
        for line in range(hunk.first, hunk.last + 1):
            around = [f for f in functions if f.start <= line <= f.end]
            if around:
                touched[min(around, key=lambda f: f.lines)] = None
    return sorted(touched, key=lambda d: (d.path, d.start, d.name))


# ---- the repository's language and its commits ---------------------------------------------


def repo_family(repo: Path, rev: str) -> str:
    """The language family with the most non-test files at ``rev``."""
    counts: Counter[str] = Counter()
    for path in git(repo, "ls-tree", "-r", "--name-only", rev).split("\n"):
        spec = language_for_path(path)
        if spec is not None and not is_test_path(path):
            counts[spec.family] += 1
    if not counts:
        raise ValueError(f"{repo}: no source file of a language knoxidx reads at {rev}")
    return min(counts, key=lambda family: (-counts[family], family))


def is_source(path: str, family: str) -> bool:
    spec = language_for_path(path)
    return (spec is not None and spec.family == family and not is_test_path(path)
            and not _NOT_SOURCE_DIR.search(path))


@dataclass(frozen=True, slots=True)
class _Commit:
    sha: str
    parent: str
    date: str
    message: str
    changes: tuple[tuple[str, str], ...]  # (status, path)


def _first_parent_commits(repo: Path, head: str) -> list[_Commit]:
    out = git(repo, "log", "--first-parent", "--no-merges", "--no-renames", "--name-status",
              "-z", "--format=%x01%H %P%x02%cI%x02%B%x03", head)
    commits = []
    for record in out.split("\x01")[1:]:
        header, _, changes = record.partition("\x03")
        ids, date, message = header.split("\x02", 2)
        shas = ids.split()
        if len(shas) != 2:  # a root commit has no parent to ask at
            continue
        fields = [f for f in changes.strip("\x00\n").split("\x00") if f]
        pairs = tuple((fields[i].strip(), fields[i + 1]) for i in range(0, len(fields) - 1, 2))
        commits.append(_Commit(shas[0], shas[1], date, message, pairs))
    return commits


def task_for(repo: Path, name: str, commit: _Commit, family: str) -> Task | None:
    """The commit as a task, or None when it is not one (see the module's docstring)."""
    subject = commit.message.strip().split("\n")[0]
    if is_chore(subject):
        return None
    source = [(status, path) for status, path in commit.changes if is_source(path, family)]
    if not MIN_FILES <= len(source) <= MAX_FILES or any(s != "M" for s, _ in source):
        return None
    paths = [p for _, p in source]
    # whitespace or blank-line changes alone are formatting
    if not git(repo, "diff", "-w", "--ignore-blank-lines", "--no-color", "--no-ext-diff",
               "--no-textconv", commit.parent, commit.sha, "--", *paths).strip():
        return None
    gold: list[Definition] = []
    for path in paths:
        diff = git(repo, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-textconv",
                   commit.parent, commit.sha, "--", path)
        blob = git_bytes(repo, "show", f"{commit.parent}:{path}")
        old_lines = blob.decode("utf-8", "replace").split("\n")
        gold.extend(touched_definitions(functions_of(path, blob), parse_hunks(diff), old_lines))
        if len(gold) > MAX_GOLD:
            return None
    if len(gold) < MIN_GOLD:
        return None
    question = clean_question(commit.message)
    if len(question.split()) < MIN_QUESTION_WORDS:
        return None
    return Task(name, commit.sha, commit.parent, commit.date, subject, question, tuple(paths),
                tuple(gold))


def mine_tasks(repo: Path, name: str, head: str, count: int) -> tuple[list[Task], dict]:
    """``count`` tasks spread evenly by date over the eligible commits, oldest first, and how
    many commits each filter saw."""
    family = repo_family(repo, head)
    commits = sorted(_first_parent_commits(repo, head), key=lambda c: (c.date, c.sha))
    eligible = [t for c in commits if (t := task_for(repo, name, c, family)) is not None]
    picked = spread(eligible, count)
    return picked, {"family": family, "commits": len(commits), "eligible": len(eligible),
                    "picked": len(picked)}


def spread(tasks: list[Task], count: int) -> list[Task]:
    """``count`` tasks (all when there are fewer) spread evenly in time: for each of ``count``
    dates at even steps from the first task's to the last's, the nearest task not yet taken
    (the earlier one on a tie). ``tasks`` are in date order; so is the answer."""
    if len(tasks) <= count:
        return list(tasks)
    stamps = [datetime.fromisoformat(t.date).timestamp() for t in tasks]
    first, last = stamps[0], stamps[-1]
    taken: set[int] = set()
    for step in range(count):
        target = first + (last - first) * step / max(count - 1, 1)
        free = (i for i in range(len(tasks)) if i not in taken)
        taken.add(min(free, key=lambda i: (abs(stamps[i] - target), i)))
    return [tasks[i] for i in sorted(taken)]
