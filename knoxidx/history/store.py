"""The history's SQLite tables, in the index database beside the graph (names start with
``history_``). They are created on the first history read and carry their own version, so an
index made before them gains them on its next ``knoxidx index`` without a rebuild, and a
newer layout is re-read from git rather than migrated.

- ``history_commit``: HEAD's first-parent commits, ``seq`` 0 the oldest.
- ``history_change``: each commit's changed source files (``path`` in that commit, ``old_path``
  in its parent, NULL for a new file) and the diff's hunks, packed (see :func:`pack_hunks`).
  Only files of a language knoxidx reads are kept (definitions live nowhere else: documents,
  lock files and data would double the size), and no deleted file: nothing at HEAD descends
  from it.
- ``history_meta``: the layout version, the last commit read, whether the clone is shallow.
"""

from __future__ import annotations

import re
import sqlite3
from array import array
from collections.abc import Iterable, Sequence
from typing import Protocol

from knoxidx.history.gitlog import CommitRecord, FileChange
from knoxidx.history.ranges import Hunk
from knoxidx.languages.registry import language_for_path

HISTORY_VERSION = 1
_NO_SEQ = 2**63 - 1  # above every commit's seq: "before" none
# a definition as HistoryRows.definitions_in gives it: id, kind, qualified name, first and
# last line, cyclomatic complexity and lines of code (None but for a function)
Definition = tuple[int, str, str, int, int, int | None, int | None]
TABLES = ("history_commit", "history_change", "history_meta")
SCHEMA = """
CREATE TABLE IF NOT EXISTS history_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS history_commit(
  seq INTEGER PRIMARY KEY, hash TEXT NOT NULL, time INTEGER NOT NULL, author TEXT NOT NULL,
  email TEXT NOT NULL, subject TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS history_change(
  seq INTEGER NOT NULL, path TEXT NOT NULL, old_path TEXT, hunks BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS history_change_path ON history_change(path, seq);
CREATE INDEX IF NOT EXISTS history_change_seq ON history_change(seq);
"""


class HistoryRows(Protocol):
    """What the history's answers and its refresh ask of the tables, in either store."""

    def exists(self) -> bool: ...
    def ensure(self) -> str | None: ...
    def drop(self) -> None: ...
    def clear(self) -> None: ...
    def get(self, key: str) -> str | None: ...
    def set(self, key: str, value: str) -> None: ...
    def next_seq(self) -> int: ...
    def append(self, commits: Iterable[CommitRecord], first_seq: int) -> int: ...
    def changes_of(self, path: str, before: int | None,
                   since: int = 0) -> list[tuple[int, str | None, bytes]]: ...
    def commits(self, seqs: Iterable[int]) -> dict[int, dict]: ...
    def commits_named(self, hashes: Sequence[str], numbers: Sequence[int]) -> list[int]: ...
    def subjects_since(self, seq: int) -> list[tuple[int, str]]: ...
    def paths_of_commit(self, seq: int) -> list[str]: ...
    def newest_time(self) -> int: ...
    def first_seq_since(self, time: int) -> int: ...
    def paths_changed_since(self, seq: int) -> list[tuple[str, int]]: ...
    def changes_since(self, seq: int) -> list[tuple[int, str]]: ...
    def counts(self) -> tuple[int, int]: ...
    def definitions_in(self, path: str) -> list[Definition]: ...
    def file_lines(self, path: str) -> int | None: ...
    def dump(self) -> tuple[list[tuple], list[tuple]]: ...


def keeps_change(change: FileChange) -> bool:
    """Whether a file's change is kept: a file of a language knoxidx reads, now or before."""
    return bool(language_for_path(change.path)
                or (change.old_path and language_for_path(change.old_path)))


def names_number(subject: str, number: int) -> bool:
    """Whether a commit subject holds ``#number`` as a whole number (not ``#1234`` for 123)."""
    return re.search(rf"#{number}(?!\d)", subject) is not None


def pack_hunks(hunks: Sequence[Hunk]) -> bytes:
    return array("i", [n for hunk in hunks for n in hunk]).tobytes()


def unpack_numbers(blob: bytes) -> array[int]:
    """The hunks of :func:`pack_hunks` flat, four numbers each."""
    numbers = array("i")
    numbers.frombytes(blob)
    return numbers


class HistoryTables:
    """Reads and writes of the history tables on one connection (inside the caller's
    transaction)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def exists(self) -> bool:
        return self.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table'"
                                 " AND name='history_meta'").fetchone() is not None

    def version(self) -> int | None:
        if not self.exists():
            return None
        row = self.conn.execute("SELECT value FROM history_meta WHERE key='version'").fetchone()
        return int(row[0]) if row else None

    def ensure(self) -> str | None:
        """Create the tables; a layout of another version is dropped first (it is re-read
        from git). Returns why it was dropped, if it was."""
        found = self.version()
        reason = None
        if found is not None and found != HISTORY_VERSION:
            reason = (f"history layout {found} is not this knoxidx's ({HISTORY_VERSION}): "
                      "reading the history again")
            self.drop()
        for statement in SCHEMA.split(";"):
            if statement.strip():
                self.conn.execute(statement)
        self.set("version", str(HISTORY_VERSION))
        return reason

    def drop(self) -> None:
        for table in TABLES:
            self.conn.execute(f"DROP TABLE IF EXISTS {table}")

    def clear(self) -> None:
        for table in TABLES:
            if table != "history_meta":
                self.conn.execute(f"DELETE FROM {table}")
        self.conn.execute("DELETE FROM history_meta WHERE key != 'version'")

    def get(self, key: str) -> str | None:
        if not self.exists():
            return None
        row = self.conn.execute("SELECT value FROM history_meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO history_meta VALUES (?, ?)", (key, value))

    def next_seq(self) -> int:
        row = self.conn.execute("SELECT max(seq) FROM history_commit").fetchone()
        return 0 if row[0] is None else row[0] + 1

    def append(self, commits: Iterable[CommitRecord], first_seq: int) -> int:
        """Write ``commits`` (oldest first) from ``first_seq``; the number written."""
        seq = first_seq
        for commit in commits:
            self.conn.execute("INSERT INTO history_commit VALUES (?, ?, ?, ?, ?, ?)",
                              (seq, commit.hash, commit.time, commit.author, commit.email,
                               commit.subject))
            self.conn.executemany(
                "INSERT INTO history_change VALUES (?, ?, ?, ?)",
                [(seq, c.path, c.old_path, pack_hunks(c.hunks)) for c in commit.changes
                 if keeps_change(c)])
            seq += 1
        return seq - first_seq

    def changes_of(self, path: str, before: int | None,
                   since: int = 0) -> list[tuple[int, str | None, bytes]]:
        """``path``'s changes from commit ``since`` on and before commit ``before`` (all
        without it), newest first (a trace of recent commits reads no older hunks)."""
        sql = ("SELECT seq, old_path, hunks FROM history_change WHERE path=? AND seq>=? AND seq<?"
               " ORDER BY seq DESC")
        return self.conn.execute(sql, (path, since, _NO_SEQ if before is None else before)
                                 ).fetchall()

    def commits(self, seqs: Iterable[int]) -> dict[int, dict]:
        wanted = sorted(set(seqs))
        found: dict[int, dict] = {}
        for i in range(0, len(wanted), 500):
            part = wanted[i:i + 500]
            rows = self.conn.execute(
                "SELECT seq, hash, time, author, email, subject FROM history_commit"
                f" WHERE seq IN ({','.join('?' * len(part))})", part)
            for seq, hash_, time, author, email, subject in rows:
                found[seq] = {"commit": hash_, "time": time, "author": author, "email": email,
                              "subject": subject}
        return found

    def commits_named(self, hashes: Sequence[str], numbers: Sequence[int]) -> list[int]:
        """The ``seq`` of each commit whose id starts with one of ``hashes`` or whose subject
        holds ``#N`` for one of ``numbers``, oldest first."""
        found: set[int] = set()
        for prefix in hashes:
            found.update(seq for seq, in self.conn.execute(
                "SELECT seq FROM history_commit WHERE substr(hash, 1, ?) = ?",
                (len(prefix), prefix)))
        for number in numbers:
            found.update(seq for seq, subject in self.conn.execute(
                "SELECT seq, subject FROM history_commit WHERE instr(subject, ?) > 0",
                (f"#{number}",)) if names_number(subject, number))
        return sorted(found)

    def subjects_since(self, seq: int) -> list[tuple[int, str]]:
        """Each commit's subject from ``seq`` on, in order."""
        return self.conn.execute("SELECT seq, subject FROM history_commit WHERE seq >= ?"
                                 " ORDER BY seq", (seq,)).fetchall()

    def paths_of_commit(self, seq: int) -> list[str]:
        return [path for path, in self.conn.execute(
            "SELECT path FROM history_change WHERE seq = ? ORDER BY path", (seq,))]

    def newest_time(self) -> int:
        row = self.conn.execute("SELECT max(time) FROM history_commit").fetchone()
        return row[0] or 0

    def first_seq_since(self, time: int) -> int:
        """The oldest commit made at or after ``time`` (the count of commits if none)."""
        row = self.conn.execute("SELECT min(seq) FROM history_commit WHERE time >= ?",
                                (time,)).fetchone()
        return self.next_seq() if row[0] is None else row[0]

    def paths_changed_since(self, seq: int) -> list[tuple[str, int]]:
        """Paths changed from commit ``seq`` on, with how many commits changed each."""
        return self.conn.execute(
            "SELECT path, count(DISTINCT seq) FROM history_change WHERE seq >= ? GROUP BY path",
            (seq,)).fetchall()

    def changes_since(self, seq: int) -> list[tuple[int, str]]:
        """Each commit from ``seq`` on with each path it changed, in order."""
        return self.conn.execute(
            "SELECT seq, path FROM history_change WHERE seq >= ? ORDER BY seq, path",
            (seq,)).fetchall()

    def dump(self) -> tuple[list[tuple], list[tuple]]:
        """Every commit and change row, in order: what ``knoxidx verify`` compares."""
        return (self.conn.execute("SELECT * FROM history_commit ORDER BY seq").fetchall(),
                self.conn.execute("SELECT * FROM history_change ORDER BY seq, path, old_path"
                                  ).fetchall())

    def counts(self) -> tuple[int, int]:
        commits = self.conn.execute("SELECT count(*) FROM history_commit").fetchone()[0]
        changes = self.conn.execute("SELECT count(*) FROM history_change").fetchone()[0]
        return commits, changes

    def definitions_in(self, path: str) -> list[Definition]:
        """The graph's definitions in the file at graph path ``path``: id, kind, qualified
        name, first and last line, and a function's cyclomatic complexity and lines of code
        (None for other kinds)."""
        return self.conn.execute(
            "SELECT n.id, n.kind, n.qualified_name, n.start_line, n.end_line, n.cyclomatic,"
            " n.loc FROM nodes n"
            " JOIN files f ON f.id = n.file_id WHERE f.path = ? AND n.kind NOT IN"
            " ('File', 'Module') AND n.start_line IS NOT NULL", (path,)).fetchall()

    def file_lines(self, path: str) -> int | None:
        row = self.conn.execute("SELECT lines FROM files WHERE path=? AND status='ok'",
                                (path,)).fetchone()
        return row[0] if row else None
