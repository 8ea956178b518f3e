"""What the work tree changed since a commit, and what those changes may break.

The definitions whose lines differ between ``base`` (a commit) and the indexed files on disk,
each as modified, added or removed, and, through the graph, everything that reaches them
(callers, users, subclasses, importers: :func:`~knoxidx.graph.traverse.walk` from all of
them at once), with the tests among it. The repository is untrusted: git only lists the
commit's tree and reads its blobs (:mod:`knoxidx.history.worktree`); the diff against the
files is made here, so no clean filter or external diff runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knoxidx.core.errors import BadInputError, HistoryUnavailableError
from knoxidx.core.files import FileTooLargeError, confined, read_regular
from knoxidx.core.paging import DEFAULT_LIMIT, FILES_SHOWN, WALK_CAP, Page
from knoxidx.graph import traverse
from knoxidx.history.gitlog import GitUnavailableError, repository_top, run_git
from knoxidx.history.ranges import Hunk
from knoxidx.history.refresh import path_prefix
from knoxidx.history.worktree import blob_bytes, blob_id, committed_blobs, uncommitted_hunks

if TYPE_CHECKING:
    from knoxidx.core.facts import Definition
    from knoxidx.graph.protocol import IndexedGraph as Index

# A revision as a user writes one (HEAD~2, main, v1.2, a hash, @{u}): never an option.
_REVISION = re.compile(r"[^\s\x00-\x1f\x7f-][^\s\x00-\x1f\x7f]{0,199}")
MAX_FILE_BYTES = 16 * 1024 * 1024  # a file grown past this since indexing is left as stale
STILL_CALLED_SHOWN = 10  # unresolved calls listed per removed definition
TESTS_SHOWN = 100
CHANGED_SHOWN = 100  # changed (and removed) definitions listed; the totals count them all
_CHANGED_FIELDS = ("id", "kind", "name", "qualified_name", "path", "start_line", "end_line",
                   "signature")

Key = tuple[str, str]  # (kind, qualified name within the file's module)


@dataclass(slots=True)
class _Touched:
    """One changed definition while it is being classified."""

    key: Key
    added_lines: int = 0
    removed_lines: int = 0
    new: list[Definition] = field(default_factory=list)  # as indexed
    old: list[Definition] = field(default_factory=list)  # at the base


def changes(index: Index, base: str = "HEAD", depth: int = 3, *, limit: int = DEFAULT_LIMIT,
            offset: int = 0, kind: str | None = None, path: str | None = None) -> dict:
    """The definitions the work tree changed since ``base`` and a page of what they may
    break (``depth`` hops of callers, users, subclasses and importers, nearest first)."""
    page = Page(limit, offset, kind, path)
    if not 1 <= depth <= 10:
        raise BadInputError(f"depth must be from 1 to 10, not {depth}")
    root = index.root
    commit, prefix = _base_commit(root, base)
    blobs = committed_blobs(root, commit)
    store = index.store
    hashes = store.ok_file_hashes()
    files: list[dict] = []
    changed: list[dict] = []
    removed: list[dict] = []
    stale: list[str] = []
    from knoxidx.parse.reader import file_hash

    for rel in sorted(hashes):
        try:
            current = _read(root, rel)
        except OSError:
            current = None
        if current is None or file_hash(current) != hashes[rel]:
            stale.append(rel)
            if current is None:
                continue
        blob = blobs.get(prefix + rel)
        if blob == blob_id(current):
            continue
        before = blob_bytes(root, blob) if blob is not None else b""
        facts = store.load_facts(rel)
        if facts is None:
            continue
        hunks = uncommitted_hunks(before, current)
        old_defs = _definitions(rel, before, facts.language) if blob is not None else ()
        touched = _classify(facts.defs, old_defs, hunks)
        files.append({"path": rel, "status": "modified" if blob is not None else "added",
                      "lines_added": sum(h[3] - h[2] for h in hunks),
                      "lines_removed": sum(h[1] - h[0] for h in hunks)})
        nodes = _nodes_of(index, rel)
        for t in touched:
            if t.new:
                change = "modified" if t.old or _key_in(t.key, old_defs) else "added"
                for d in t.new:
                    node = nodes.get((d.kind, d.start_line, d.end_line))
                    if node is not None:
                        changed.append({**_fields(node), "change": change, "lines_added": t.added_lines,
                                        "lines_removed": t.removed_lines})
            elif _key_in(t.key, facts.defs):  # only its old lines changed: the same definition
                for d in facts.defs:
                    node = nodes.get((d.kind, d.start_line, d.end_line))
                    if (d.kind, d.qualname) == t.key and node is not None:
                        changed.append({**_fields(node), "change": "modified", "lines_added": 0,
                                        "lines_removed": t.removed_lines})
            else:
                prefix_of_file = _module_prefix(nodes, facts.defs)
                removed.extend(_removed(index, rel, d, t.removed_lines, prefix_of_file)
                               for d in t.old)
    removed.extend(_deleted_files(index, root, prefix, blobs, hashes, files))
    files.sort(key=lambda f: f["path"])
    changed = sorted(_unique(changed), key=lambda c: (c["path"], c["start_line"]))
    removed.sort(key=lambda r: (r["path"], r["start_line"]))
    everything = traverse.walk(index.q, [c["id"] for c in changed], "in", traverse.IMPACT_TYPES,
                               depth, limit=WALK_CAP, starts_listed=False)
    from knoxidx.retrieval.priors import in_test_module, is_test_path

    tests = _unique([h for h in everything
                     if h["path"] and (is_test_path(h["path"])
                                       or in_test_module(h["qualified_name"]))])
    impacted_files = sorted({h["path"] for h in everything if h["path"]})
    selected = page.select(everything)
    hits, info = page.cut(selected, exact=len(everything) < WALK_CAP)
    return {
        "base": {"revision": base, "commit": commit},
        "files": files[:FILES_SHOWN],
        "files_total": len(files),
        "changed": changed[:CHANGED_SHOWN],
        "changed_total": len(changed),
        "removed": removed[:CHANGED_SHOWN],
        "removed_total": len(removed),
        "impacted": hits,
        **info,
        "files_impacted": impacted_files[:FILES_SHOWN],
        "file_count": len(impacted_files),
        "tests": [_brief(t) for t in tests[:TESTS_SHOWN]],
        "test_count": len(tests),
        "test_files": sorted({t["path"] for t in tests}),
        "stale": stale,
    }


def _base_commit(root: Path, base: str) -> tuple[str, str]:
    """``base``'s commit hash and where the indexed directory lies in its repository."""
    if not _REVISION.fullmatch(base):
        raise BadInputError(f"not a revision: {base!r} (a commit, branch or tag, such as HEAD~1)")
    try:
        top = repository_top(root)
        commit = run_git(root, "rev-parse", "--verify", "--quiet", "--end-of-options",
                         base + "^{commit}").strip()
    except GitUnavailableError as exc:
        reason = str(exc)
        if "Needed a single revision" in reason or not reason or "`git rev-parse`" in reason:
            raise BadInputError(f"no commit {base!r} in the repository") from None
        raise HistoryUnavailableError(f"cannot compare with git: {reason}") from None
    return commit, path_prefix(root, top)


def _read(root: Path, rel: str) -> bytes | None:
    """The file's bytes; None for one grown past what is read here (left as stale). OSError
    for one that is no regular file inside the repository any more (a FIFO, a link out)."""
    try:
        return read_regular(confined(root, rel), MAX_FILE_BYTES)
    except FileTooLargeError:
        return None


def _definitions(path: str, source: bytes, language: str) -> tuple[Definition, ...]:
    """The definitions of a file's text, as an update extracts them."""
    from knoxidx.parse.extract import extract

    try:
        return extract(path, source, language).defs
    except Exception:  # text the grammar cannot take at all: its lines count, not its names
        return ()


def _owners(defs: Sequence[Definition], lines: int) -> list[int]:
    """For each 1-based line up to ``lines``, the index of the innermost definition holding
    it (-1: none); outer definitions are laid down first, inner ones over them."""
    owner = [-1] * (lines + 2)
    order = sorted(range(len(defs)), key=lambda i: defs[i].start_line - defs[i].end_line)
    for i in order:
        d = defs[i]
        for line in range(max(d.start_line, 1), min(d.end_line, lines) + 1):
            owner[line] = i
    return owner


def _classify(new_defs: Sequence[Definition], old_defs: Sequence[Definition],
              hunks: Sequence[Hunk]) -> list[_Touched]:
    """The innermost definitions each hunk's lines fall in, on either side, by key."""
    new_lines = max((h[3] for h in hunks), default=0)
    old_lines = max((h[1] for h in hunks), default=0)
    new_owner = _owners(new_defs, max(new_lines, *(d.end_line for d in new_defs), 0))
    old_owner = _owners(old_defs, max(old_lines, *(d.end_line for d in old_defs), 0))
    touched: dict[Key, _Touched] = {}

    def mark(lines: range, owner: list[int], defs: Sequence[Definition], new: bool) -> None:
        for line in lines:
            if line < len(owner) and owner[line] >= 0:
                d = defs[owner[line]]
                t = touched.setdefault((d.kind, d.qualname), _Touched((d.kind, d.qualname)))
                side = t.new if new else t.old
                if new:
                    t.added_lines += 1
                else:
                    t.removed_lines += 1
                if d not in side:
                    side.append(d)

    for i1, i2, j1, j2 in hunks:
        mark(range(j1 + 1, j2 + 1), new_owner, new_defs, True)
        mark(range(i1 + 1, i2 + 1), old_owner, old_defs, False)
    return sorted(touched.values(), key=lambda t: (t.key[1], t.key[0]))


def _key_in(key: Key, defs: Sequence[Definition]) -> bool:
    return any((d.kind, d.qualname) == key for d in defs)


def _nodes_of(index: Index, path: str) -> dict[tuple[str, int, int], dict]:
    """The file's definition nodes by (kind, first line, last line)."""
    from knoxidx.answers.questions import _public
    from knoxidx.history.tables import tables_of

    found: dict[tuple[str, int, int], dict] = {}

    tables = tables_of(index.store)
    if tables is None:
        return found
    ids = [row[0] for row in tables.definitions_in(path)]
    for node in index.q.nodes_by_id(ids).values():
        found.setdefault((node["kind"], node["start_line"], node["end_line"]), _public(node))
    return found


def _module_prefix(nodes: dict[tuple[str, int, int], dict],
                   defs: Sequence[Definition]) -> str:
    """What the file's node names put before a definition's name in its module (a package,
    a module path), read off one of them."""
    for d in defs:
        node = nodes.get((d.kind, d.start_line, d.end_line))
        if node is not None and node["qualified_name"].endswith(d.qualname):
            return node["qualified_name"][:len(node["qualified_name"]) - len(d.qualname)]
    return ""


def _removed(index: Index, path: str, d: Definition, lines: int, prefix: str = "") -> dict:
    """A definition the base had and the work tree has not, with the calls of its name that
    resolution now leaves unresolved (what its removal breaks; values passed are not kept)."""
    member = bool(d.owner) or "." in d.qualname
    total, sites = index.q.unresolved_calls([] if member else [d.name], [d.name] if member else [],
                                            STILL_CALLED_SHOWN)
    return {"kind": d.kind, "name": d.name, "qualified_name": prefix + d.qualname, "path": path,
            "start_line": d.start_line, "end_line": d.end_line, "change": "removed",
            "lines_removed": lines,
            "still_called": [{"path": s["path"], "line": s["line"], "called_as": s["called_as"]}
                             for s in sites],
            "still_called_total": total}


def _deleted_files(index: Index, root: Path, prefix: str, blobs: dict[str, str],
                   indexed: dict[str, str], files: list[dict]) -> list[dict]:
    """The definitions of source files the base has and the work tree no longer does."""
    from knoxidx.languages.registry import language_for_path

    out: list[dict] = []
    for git_path, blob in sorted(blobs.items()):
        if not git_path.startswith(prefix):
            continue
        rel = git_path[len(prefix):]
        spec = language_for_path(rel)
        if spec is None or rel in indexed or (root / rel).exists():
            continue  # not source, still indexed, or present and left out of the index
        source = blob_bytes(root, blob)
        defs = _definitions(rel, source, spec.name)
        files.append({"path": rel, "status": "deleted", "lines_added": 0,
                      "lines_removed": source.count(b"\n")})
        top = [d for d in defs if d.parent < 0]
        out.extend(_removed(index, rel, d, d.end_line - d.start_line + 1) for d in top)
    return out


def _unique(items: list[dict]) -> list[dict]:
    seen: set[int] = set()
    out = []
    for item in items:
        if item["id"] not in seen:
            seen.add(item["id"])
            out.append(item)
    return out


def _fields(node: dict[str, Any]) -> dict[str, Any]:
    return {k: node.get(k) for k in _CHANGED_FIELDS}


def _brief(hit: dict[str, Any]) -> dict[str, Any]:
    return {k: hit[k] for k in ("id", "kind", "qualified_name", "path", "start_line", "depth")
            if k in hit}
