"""What an agent asks of the history: a definition's evolution (:func:`definition_history`),
the places that change most (:func:`hotspots`), and the short ``evolution`` object a node's
JSON carries (:func:`evolutions`).

Hotspot score: ``changes x log2(1 + weight)``: how many commits in the window changed the
definition (or file), weighted by how much there is to get wrong in it at HEAD. A function's
weight is ``cyclomatic x loc`` (its decision paths times its lines of code without blanks and
comments), so a branchy function that keeps changing ranks above a straight one of the same
length that changed as often; a class, interface or type's (no complexity of its own) and a
file's is its lines. The logarithm keeps size from outweighing change: a function 100 times
larger counts ~3 times as much per change, not 100. The factors come with every answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from knoxidx.core.errors import BadInputError, HistoryUnavailableError
from knoxidx.core.paging import DEFAULT_LIMIT, Page
from knoxidx.core.path_glob import path_matcher
from knoxidx.history.gitlog import GitUnavailableError
from knoxidx.history.ranges import Range
from knoxidx.history.store import HistoryRows
from knoxidx.history.tables import tables_of
from knoxidx.history.trace import Touch, trace_file
from knoxidx.history.worktree import line_range, ranges_at_commit

SECONDS_PER_DAY = 86_400
_HASH = re.compile(r"(?<![\w/#.-])[0-9a-fA-F]{7,40}(?![\w/-])")
# a bare "#N" of one digit is as often a rank ("the #1 cause") as a pull request
_NUMBER = re.compile(r"(?:(?<![\w&])#(?=\d\d)|\bGH-|\bPR\s*#?|\bpull request\s*#?)(\d{1,7})\b",
                     re.IGNORECASE)
MAX_SINCE_DAYS = 100_000  # ~270 years: any real history; more would fall before year 1
# the definition kinds hotspots rank by default: those whose body is code that changes
HOTSPOT_KINDS = ("Function", "Class", "Interface", "Type")
HOTSPOT_FORMULA = ("score = changes x log2(1 + weight); weight = cyclomatic x loc for a "
                   "function, lines otherwise")


def hotspot_weight(lines: int, cyclomatic: int | None, loc: int | None) -> int:
    """What a change risks in a definition (see the module's note): ``cyclomatic x loc`` for
    a function whose complexity is known, else its ``lines``."""
    if cyclomatic is not None and loc is not None:
        return cyclomatic * max(loc, 1)
    return lines


def hotspot_score(changes: int, weight: int) -> float:
    return round(changes * math.log2(1 + weight), 2)


def history_tables(store: Any) -> HistoryRows:
    """The history of an index's store, or :class:`HistoryUnavailableError` saying why not."""
    tables = tables_of(store)
    if tables is None:
        raise HistoryUnavailableError(
            "no history across every repository of a shared store: name one with --repo")
    if tables.get("head") is None:
        raise HistoryUnavailableError(
            "this index has no history: run `knoxidx index` in a git repository with at least "
            "one commit (and without --no-history)")
    return tables


def _committed_ranges(tables: HistoryRows, root: Path,
                      files: Mapping[str, Mapping[int, tuple[int, int]]],
                      ) -> dict[str, dict[int, list[Range]]]:
    """Each definition's lines (graph path -> id -> first, last line in the indexed file) in
    the last commit read, across uncommitted edits; as they are if git cannot be asked now."""
    on_disk = {path: {key: line_range(*span) for key, span in spans.items()}
               for path, spans in files.items()}
    try:
        head = tables.get("head")  # (set: history_tables refuses an index without one)
        assert head is not None
        return ranges_at_commit(root, head, tables.get("prefix") or "", on_disk)
    except GitUnavailableError:
        return on_disk


def _date(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")


def _commit_dict(commit: dict, touch: Touch | None = None) -> dict:
    out = {"commit": commit["commit"], "date": _date(commit["time"]),
           "author": commit["author"], "subject": commit["subject"]}
    if touch is not None:
        out.update(added=touch.added, removed=touch.removed, path=touch.path)
    return out


def _summary(touches: list[Touch], commits: dict[int, dict]) -> dict:
    """The totals of a definition's touches (newest first)."""
    if not touches:
        return {"changes": 0, "modifications": 0, "authors": 0, "churn": 0}
    authors = {commits[t.seq]["email"] or commits[t.seq]["author"] for t in touches}
    return {"changes": len(touches), "modifications": len(touches) - 1,
            "authors": len(authors), "first_change": _date(commits[touches[-1].seq]["time"]),
            "last_change": _date(commits[touches[0].seq]["time"]),
            "churn": sum(t.added + t.removed for t in touches)}


def definition_history(store: Any, root: Path, node: dict, *, limit: int = DEFAULT_LIMIT,
                       offset: int = 0) -> dict:
    """``node``'s evolution: the commit that created its lines, the commits that changed them
    (newest first, a page of them), totals, and the paths it had before a rename."""
    if not node.get("path") or node.get("start_line") is None:  # a package, an import target
        raise BadInputError(
            f"{node['qualified_name']} ({node['kind']}) has no lines of its own in one file to "
            "follow: ask for a file (path:1) or a definition")
    tables = history_tables(store)
    page = Page(limit, offset)
    prefix = tables.get("prefix") or ""
    ranges = _committed_ranges(tables, root, {node["path"]: {0: (node["start_line"],
                                                                  node["end_line"])}})
    traces = trace_file(tables, prefix + node["path"], ranges[node["path"]])
    touches = traces[0].touches if traces else []
    commits = tables.commits(t.seq for t in touches)
    changes = [_commit_dict(commits[t.seq], t) for t in touches]
    window, info = page.cut(changes)
    renamed = []
    for touch in reversed(touches):
        path = touch.path[len(prefix):] if touch.path.startswith(prefix) else touch.path
        if path != node["path"] and path not in renamed:
            renamed.append(path)
    public = {k: node[k] for k in ("id", "kind", "name", "qualified_name", "path",
                                   "start_line", "end_line") if k in node}
    return {"symbol": public,
            "created": _commit_dict(commits[touches[-1].seq]) if touches else None,
            "totals": _summary(touches, commits), "renamed_from": renamed,
            "shallow": tables.get("shallow") == "True", "changes": window, **info}


def _window_start(tables: HistoryRows, since_days: int | None) -> tuple[int, int | None]:
    """The first commit of the window (``since_days`` before the newest commit) and when it
    starts; the whole history without a window."""
    if since_days is None:
        return 0, None
    if not 0 <= since_days <= MAX_SINCE_DAYS:
        raise BadInputError(f"the window must be from 0 to {MAX_SINCE_DAYS} days (or the "
                            f"whole history), not {since_days}")
    start = tables.newest_time() - since_days * SECONDS_PER_DAY
    return tables.first_seq_since(start), start


def hotspots(store: Any, root: Path, *, path: str | None = None, since_days: int | None = 90,
             kind: str | None = None, limit: int = 20, offset: int = 0) -> dict:
    """Definitions and files ranked by hotspot score (see the module's note) over the commits
    of the last ``since_days`` days before the newest commit (all of them with None)."""
    tables = history_tables(store)
    page = Page(limit, offset, kind, path)
    prefix = tables.get("prefix") or ""
    first_seq, start = _window_start(tables, since_days)
    in_path = path_matcher(page.path_glob) if page.path_glob else None
    files: list[dict] = []
    definitions: list[dict] = []
    seqs: set[int] = set()
    traced: list[tuple[tuple, list[Touch]]] = []
    for git_path, commit_count in tables.paths_changed_since(first_seq):
        if not git_path.startswith(prefix):
            continue
        graph_path = git_path[len(prefix):]
        lines = tables.file_lines(graph_path)
        if lines is None or (in_path is not None and not in_path(graph_path)):
            continue
        files.append({"path": graph_path, "changes": commit_count, "lines": lines,
                      "weight": lines, "score": hotspot_score(commit_count, lines)})
        rows = [r for r in tables.definitions_in(graph_path)
                if (kind is None and r[1] in HOTSPOT_KINDS) or r[1] == kind]
        ranges = _committed_ranges(tables, root, {graph_path: {r[0]: (r[3], r[4])
                                                               for r in rows}})
        traces = trace_file(tables, git_path, ranges[graph_path], since_seq=first_seq)
        for row in rows:
            touches = traces[row[0]].touches if row[0] in traces else []
            if touches:
                traced.append(((*row, graph_path), touches))
                seqs.update(t.seq for t in touches)
    commits = tables.commits(seqs)
    for (node_id, node_kind, qualified, first, last, cyclomatic, loc, graph_path), touches \
            in traced:
        size = last - first + 1
        summary = _summary(touches, commits)
        weight = hotspot_weight(size, cyclomatic, loc)
        definitions.append({
            "id": node_id, "kind": node_kind, "qualified_name": qualified, "path": graph_path,
            "start_line": first, "end_line": last, "changes": summary["changes"],
            "lines": size, "cyclomatic": cyclomatic, "loc": loc, "weight": weight,
            "authors": summary["authors"], "churn": summary["churn"],
            "last_change": summary["last_change"],
            "score": hotspot_score(summary["changes"], weight)})
    definitions.sort(key=lambda d: (-d["score"], d["path"], d["start_line"]))
    files.sort(key=lambda f: (-f["score"], f["path"]))
    window, info = page.cut(definitions)
    return {"formula": HOTSPOT_FORMULA,
            "window": {"since_days": since_days,
                       "from": _date(start) if start is not None else None},
            "definitions": window, "files": files[:limit], "file_total": len(files), **info}


def evolutions(store: Any, root: Path, nodes: Iterable[dict]) -> dict[int, dict]:
    """The ``evolution`` object of each node (by id) with lines in a file: created,
    modifications, last_modified, authors, churn, and its hotspot score over 90 days. Empty
    when the index holds no history."""
    try:
        tables = history_tables(store)
    except HistoryUnavailableError:
        return {}
    prefix = tables.get("prefix") or ""
    by_path: dict[str, dict[int, tuple[int, int]]] = {}
    complexities: dict[int, dict] = {}
    for node in nodes:
        if node.get("path") and node.get("start_line") and node.get("end_line") and \
                node.get("kind") not in ("File", "Module"):
            by_path.setdefault(node["path"], {})[node["id"]] = (node["start_line"],
                                                                node["end_line"])
            if node.get("complexity"):
                complexities[node["id"]] = node["complexity"]
    recent_seq, _ = _window_start(tables, 90)
    found: dict[int, dict] = {}
    committed = _committed_ranges(tables, root, by_path)
    for path, spans in by_path.items():
        traces = trace_file(tables, prefix + path, committed[path])
        commits = tables.commits(t.seq for tr in traces.values() for t in tr.touches)
        for node_id, trace in traces.items():
            touches = trace.touches
            summary = _summary(touches, commits)
            recent = sum(1 for t in touches if t.seq >= recent_seq)
            first, last = spans[node_id]
            complexity = complexities.get(node_id) or {}
            weight = hotspot_weight(last - first + 1, complexity.get("cyclomatic"),
                                    complexity.get("loc"))
            found[node_id] = {
                "created": _commit_dict(commits[touches[-1].seq]) if touches else None,
                "modifications": summary["modifications"],
                "last_modified": summary.get("last_change"), "authors": summary["authors"],
                "churn": summary["churn"],
                "hotspot": hotspot_score(recent, weight)}
    return found



@dataclass(frozen=True, slots=True)
class RecentChange:
    """A function one of the last commits changed: where it is now, and the newest such
    commit (its ``seq``: higher is newer)."""

    seq: int
    node_id: int
    path: str
    start_line: int
    end_line: int


def recent_changes(store: Any, root: Path, commits: int,
                   max_files: int | None = None) -> list[RecentChange]:
    """The functions that the last ``commits`` commits of the history changed, newest first,
    leaving out a commit that changed more than ``max_files`` files (a sweeping rename or
    reformat says nothing about any one function); empty when the index holds no history.
    Each is traced back from its current lines, so one that later commits moved is still
    found at its place now."""
    tables = tables_of(store)
    if tables is None or commits < 1 or tables.get("head") is None:
        return []
    first_seq = max(0, tables.next_seq() - commits)
    paths_of: dict[int, list[str]] = {}
    for seq, git_path in tables.changes_since(first_seq):
        paths_of.setdefault(seq, []).append(git_path)
    kept = {seq for seq, paths in paths_of.items() if max_files is None or len(paths) <= max_files}
    return _changed_functions(tables, root, paths_of, kept, first_seq)


def referenced_changes(store: Any, root: Path, text: str,
                       max_commits: int = 3) -> tuple[list[RecentChange], dict[int, dict]]:
    """The functions changed by the commits ``text`` names (see :func:`commit_references`),
    at their lines now, newest commit first; and those commits by ``seq``. Empty without a
    stored history or a reference in it."""
    hashes, numbers = commit_references(text)  # (most questions name none: no query then)
    if not hashes and not numbers:
        return [], {}
    tables = tables_of(store)
    if tables is None or tables.get("head") is None:
        return [], {}
    return commit_changes(tables, root, tables.commits_named(hashes, numbers)[-max_commits:])


def commit_changes(tables: HistoryRows, root: Path, seqs: list[int],
                   best_first: bool = False) -> tuple[list[RecentChange], dict[int, dict]]:
    """The functions the commits ``seqs`` changed, at their lines now, newest commit first;
    and those commits by ``seq``. Each function's commit is the newest of ``seqs`` that
    changed it, or with ``best_first`` the first in the order of ``seqs``."""
    if not seqs:
        return [], {}
    paths_of = {seq: tables.paths_of_commit(seq) for seq in seqs}
    prefer = {seq: place for place, seq in enumerate(seqs)} if best_first else None
    return (_changed_functions(tables, root, paths_of, set(seqs), min(seqs), prefer),
            tables.commits(seqs))


def commit_references(text: str) -> tuple[list[str], list[int]]:
    """The commits a question names: hexadecimal words of 7 to 40 characters holding a digit
    (abbreviated commit ids), and pull request or issue numbers (``#123``, ``PR 123``, ``pull
    request 123``, ``GH-123``), which commit subjects carry (``Merge pull request #123``,
    ``Fix the parser (#123)``)."""
    hashes = [m.lower() for m in _HASH.findall(text) if any(c.isdigit() for c in m)]
    numbers = [int(m) for m in _NUMBER.findall(text)]
    return list(dict.fromkeys(hashes)), list(dict.fromkeys(numbers))


def _changed_functions(tables: HistoryRows, root: Path, paths_of: Mapping[int, list[str]],
                       kept: set[int], first_seq: int,
                       prefer: Mapping[int, int] | None = None) -> list[RecentChange]:
    """The functions at HEAD that one of the commits ``kept`` changed (``paths_of``: the paths
    each commit changed), traced back from their lines now to ``first_seq``, newest first;
    each with the newest such commit, or the one ``prefer`` places first."""
    prefix = tables.get("prefix") or ""
    by_path: dict[str, dict[int, tuple[int, int]]] = {}
    for git_path in sorted({p for seq in kept for p in paths_of[seq]}):
        if git_path.startswith(prefix):
            graph_path = git_path[len(prefix):]
            by_path[graph_path] = {row[0]: (row[3], row[4])
                                   for row in tables.definitions_in(graph_path)
                                   if row[1] == "Function"}
    committed = _committed_ranges(tables, root, by_path)
    found: list[RecentChange] = []
    for graph_path, spans in by_path.items():
        traces = trace_file(tables, prefix + graph_path, committed[graph_path],
                            since_seq=first_seq)
        for node_id, trace in traces.items():
            touched = [t.seq for t in trace.touches if t.seq in kept]  # newest first
            if touched:
                seq = min(touched, key=prefer.__getitem__) if prefer else touched[0]
                found.append(RecentChange(seq, node_id, graph_path, *spans[node_id]))
    found.sort(key=lambda c: (-c.seq, c.path, c.start_line))
    return found
