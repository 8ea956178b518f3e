"""Reading a repository's first-parent history with the ``git`` binary, safely.

The repository is untrusted: its ``.git/config`` may name programs (an external diff, a
textconv filter, an fsmonitor, a pager, a signature checker). Only commands that compare
commits run here (never one that reads the working tree, where clean filters run), with
every such setting overridden on the command line, the system and user configuration off,
no pager, no prompts and no optional locks, so nothing is written to ``.git``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from knoxidx.core.errors import KnoxidxError
from knoxidx.history.ranges import Hunk

# A file larger than this is diffed as binary by git itself (core.bigFileThreshold), so a
# commit of a huge generated file costs no patch text; the graph skips such files anyway.
MAX_DIFF_BYTES = 1024 * 1024

_SAFE_CONFIG = (
    "core.pager=cat", "core.fsmonitor=false", "core.hooksPath=/dev/null", "diff.external=",
    "diff.noprefix=false", "diff.mnemonicPrefix=false", "diff.relative=false",
    "diff.algorithm=myers", "diff.indentHeuristic=false", "diff.renames=true",
    "log.showSignature=false", "log.showRoot=true", "core.quotePath=true",
    f"core.bigFileThreshold={MAX_DIFF_BYTES}", "color.ui=false",
)
# No indent heuristic: `git log -L` places its hunks without it, and its answer is the oracle.
# Each commit's header line in the log: a record separator (no patch line starts with one).
_HEADER = "\x1e"
_FORMAT = "%x1e%H%x1f%P%x1f%at%x1f%an%x1f%ae%x1f%s"


class GitUnavailableError(KnoxidxError):
    """No history to read: not a git repository, no commits, or no usable ``git``."""


@dataclass(slots=True)
class FileChange:
    """One file's change in one commit: ``old_path`` None for a new file."""

    path: str
    old_path: str | None
    hunks: list[Hunk] = field(default_factory=list)


@dataclass(slots=True)
class CommitRecord:
    hash: str
    parent: str | None
    time: int
    author: str
    email: str
    subject: str
    changes: list[FileChange] = field(default_factory=list)


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0",
               GIT_PAGER="cat", PAGER="cat", GIT_OPTIONAL_LOCKS="0", GIT_NO_REPLACE_OBJECTS="1",
               GIT_ATTR_NOSYSTEM="1", LC_ALL="C")
    return env


def git_command(root: Path, *args: str) -> list[str]:
    config = [part for setting in _SAFE_CONFIG for part in ("-c", setting)]
    return ["git", "--no-pager", "-C", str(root), *config, *args]


def run_git(root: Path, *args: str) -> str:
    """A short git command's output; :class:`GitUnavailableError` with git's own reason."""
    try:
        done = subprocess.run(git_command(root, *args), env=git_env(), capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=120)
    except FileNotFoundError:
        raise GitUnavailableError("no `git` program on PATH") from None
    except subprocess.TimeoutExpired:
        raise GitUnavailableError(f"`git {args[0]}` did not answer in 120 s") from None
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        last = reason[-1].removeprefix("fatal: ") if reason else f"`git {args[0]}` failed"
        raise GitUnavailableError(last)
    return done.stdout.decode("utf-8", "surrogateescape")


def head_commit(root: Path) -> str:
    """HEAD's commit hash; :class:`GitUnavailableError` outside a work tree or before a commit."""
    inside = run_git(root, "rev-parse", "--is-inside-work-tree").strip()
    if inside != "true":
        raise GitUnavailableError("not inside a git work tree")
    try:
        return run_git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip()
    except GitUnavailableError:
        pass
    # an unborn HEAD beside other refs: a clone of a bundle or mirror whose HEAD names a
    # branch it does not carry
    other = run_git(root, "for-each-ref", "--count=1", "--format=%(refname:short)").strip()
    if other:
        raise GitUnavailableError(f"HEAD is on a branch with no commits, though the repository "
                                  f"has others ({other}): check one out") from None
    raise GitUnavailableError("the repository has no commits yet") from None


def repository_top(root: Path) -> Path:
    return Path(run_git(root, "rev-parse", "--show-toplevel").strip())


def is_shallow(root: Path) -> bool:
    return run_git(root, "rev-parse", "--is-shallow-repository").strip() == "true"


def first_parent_hashes(root: Path, since: str | None, head: str) -> list[str]:
    """Commits of HEAD's first-parent chain after ``since`` (all without it), oldest first."""
    span = f"{since}..{head}" if since else head
    return run_git(root, "rev-list", "--first-parent", "--reverse", span).split()


def read_commits(root: Path, since: str | None,
                 head: str) -> Generator[CommitRecord, None, None]:
    """The first-parent commits after ``since`` up to ``head``, oldest first, each with its
    diff against its first parent (the empty tree for the first), renames followed."""
    span = f"{since}..{head}" if since else head
    args = ["log", "--first-parent", "--diff-merges=first-parent", "--reverse", "--root", "-M",
            "-p", "-U0", "--no-indent-heuristic", "--no-color", "--no-ext-diff", "--no-textconv",
            "--no-show-signature",
            "--src-prefix=a/", "--dst-prefix=b/", "--no-mailmap", f"--format={_FORMAT}", span,
            "--"]
    try:
        process = subprocess.Popen(git_command(root, *args), env=git_env(),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise GitUnavailableError("no `git` program on PATH") from None
    assert process.stdout is not None and process.stderr is not None
    finished = False
    try:
        yield from _parse_log(process.stdout)
        finished = True
    finally:
        if not finished:  # closed early, or failed: git's output is not wanted any more
            process.kill()
        process.stdout.close()
        errors = process.stderr.read().decode("utf-8", "replace").strip()
        process.stderr.close()
        if process.wait() != 0 and finished:
            last = errors.splitlines()[-1] if errors else "`git log` failed"
            raise GitUnavailableError(last.removeprefix("fatal: "))


def _parse_log(stream: object) -> Iterator[CommitRecord]:
    commit: CommitRecord | None = None
    change: FileChange | None = None
    rename_from: str | None = None
    new_file = False
    for raw in stream:  # type: ignore[attr-defined]
        line = raw.decode("utf-8", "surrogateescape").rstrip("\n")
        if line.startswith(_HEADER):
            if commit is not None:
                yield commit
            parts = line[1:].split("\x1f")
            parents = parts[1].split()
            commit = CommitRecord(parts[0], parents[0] if parents else None, int(parts[2] or 0),
                                  parts[3], parts[4], parts[5] if len(parts) > 5 else "")
            change = None
        elif commit is None:
            continue
        elif line.startswith("@@ ") and change is not None:
            change.hunks.append(_hunk(line))
        elif line.startswith("diff --git "):
            change, rename_from, new_file = None, None, False
        elif line.startswith("new file mode"):
            new_file = True
        elif line.startswith("rename from "):
            rename_from = unquote(line[len("rename from "):])
        elif line.startswith("rename to "):
            change = FileChange(unquote(line[len("rename to "):]), rename_from)
            commit.changes.append(change)
        elif line.startswith("+++ "):
            # git ends a name holding a space with a tab (one ending in a tab is quoted)
            target = line[4:].removesuffix("\t")
            if target == "/dev/null":  # a deleted file: nothing at HEAD descends from it
                change = None
            elif change is None or change.path != unquote(target)[2:]:
                path = unquote(target)[2:]
                change = FileChange(path, None if new_file else path)
                commit.changes.append(change)
    if commit is not None:
        yield commit


def _hunk(line: str) -> Hunk:
    """``@@ -a,b +c,d @@`` in 0-based, end-excluded numbering (a side with 0 lines names the
    line before it)."""
    old, new = line.split(" ")[1:3]
    old_start, old_count = _side(old[1:])
    new_start, new_count = _side(new[1:])
    old_from = old_start - 1 if old_count else old_start
    new_from = new_start - 1 if new_count else new_start
    return (old_from, old_from + old_count, new_from, new_from + new_count)


def _side(text: str) -> tuple[int, int]:
    start, _, count = text.partition(",")
    return int(start), int(count) if count else 1


_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote(text: str) -> str:
    """A path as git writes it: C-quoted (octal bytes, backslash escapes) when it holds
    unusual characters, else as is."""
    if not (len(text) >= 2 and text[0] == '"' and text[-1] == '"'):
        return text
    body, out, i = text[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567" and i + 3 < len(body) + 1:
                out.append(int(body[i + 1:i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(_ESCAPES.get(nxt, ord(nxt)))
            i += 2
            continue
        out.extend(ch.encode("utf-8", "surrogateescape"))
        i += 1
    return out.decode("utf-8", "surrogateescape")
