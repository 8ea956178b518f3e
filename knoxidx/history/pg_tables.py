"""The history's tables in the PostgreSQL store (``knoxidx.history_*``, made by the store's
migration 7), with the reads and writes of :class:`~knoxidx.history.store.HistoryTables`,
each scoped to one repository."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from knoxidx.history.gitlog import CommitRecord
from knoxidx.history.store import (
    HISTORY_VERSION,
    Definition,
    keeps_change,
    names_number,
    pack_hunks,
)


class PgHistoryTables:
    """Repository ``repo``'s history on a psycopg connection (inside the caller's
    transaction)."""

    def __init__(self, conn: Any, repo: str) -> None:
        self.conn = conn
        self.repo = repo

    def exists(self) -> bool:
        return True  # (the store's schema has the tables)

    def ensure(self) -> str | None:
        self.set("version", str(HISTORY_VERSION))
        return None

    def drop(self) -> None:
        self.clear()
        self.conn.execute("DELETE FROM knoxidx.history_meta WHERE repo = %s", (self.repo,))

    def clear(self) -> None:
        for table in ("history_commit", "history_change"):
            self.conn.execute(f"DELETE FROM knoxidx.{table} WHERE repo = %s", (self.repo,))
        self.conn.execute("DELETE FROM knoxidx.history_meta WHERE repo = %s AND key != 'version'",
                          (self.repo,))

    def get(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM knoxidx.history_meta WHERE repo = %s AND"
                                " key = %s", (self.repo, key)).fetchone()
        return row[0] if row else None

    def set(self, key: str, value: str) -> None:
        self.conn.execute("INSERT INTO knoxidx.history_meta VALUES (%s, %s, %s) ON CONFLICT"
                          " (repo, key) DO UPDATE SET value = excluded.value",
                          (self.repo, key, value))

    def next_seq(self) -> int:
        row = self.conn.execute("SELECT max(seq) FROM knoxidx.history_commit WHERE repo = %s",
                                (self.repo,)).fetchone()
        return 0 if row[0] is None else row[0] + 1

    def append(self, commits: Iterable[CommitRecord], first_seq: int) -> int:
        seq = first_seq
        with self.conn.cursor() as cursor:
            for commit in commits:
                cursor.execute("INSERT INTO knoxidx.history_commit VALUES"
                               " (%s, %s, %s, %s, %s, %s, %s)",
                               (self.repo, seq, commit.hash, commit.time, commit.author,
                                commit.email, commit.subject))
                rows = [(self.repo, seq, c.path, c.old_path, pack_hunks(c.hunks))
                        for c in commit.changes if keeps_change(c)]
                if rows:
                    cursor.executemany("INSERT INTO knoxidx.history_change VALUES"
                                       " (%s, %s, %s, %s, %s)", rows)
                seq += 1
        return seq - first_seq

    def changes_of(self, path: str, before: int | None,
                   since: int = 0) -> list[tuple[int, str | None, bytes]]:
        rows = self.conn.execute(
            "SELECT seq, old_path, hunks FROM knoxidx.history_change WHERE repo = %s AND"
            " path = %s AND seq >= %s AND seq < %s ORDER BY seq DESC",
            (self.repo, path, since, 2**31 - 1 if before is None else before)).fetchall()
        return [(seq, old_path, bytes(hunks)) for seq, old_path, hunks in rows]

    def commits(self, seqs: Iterable[int]) -> dict[int, dict]:
        rows = self.conn.execute(
            "SELECT seq, hash, time, author, email, subject FROM knoxidx.history_commit"
            " WHERE repo = %s AND seq = ANY(%s)", (self.repo, sorted(set(seqs)))).fetchall()
        return {seq: {"commit": hash_, "time": time, "author": author, "email": email,
                      "subject": subject} for seq, hash_, time, author, email, subject in rows}

    def commits_named(self, hashes: Sequence[str], numbers: Sequence[int]) -> list[int]:
        found: set[int] = set()
        for prefix in hashes:
            found.update(seq for seq, in self.conn.execute(
                "SELECT seq FROM knoxidx.history_commit WHERE repo = %s AND"
                " starts_with(hash, %s)", (self.repo, prefix)).fetchall())
        for number in numbers:
            found.update(seq for seq, subject in self.conn.execute(
                "SELECT seq, subject FROM knoxidx.history_commit WHERE repo = %s AND"
                " strpos(subject, %s) > 0", (self.repo, f"#{number}")).fetchall()
                if names_number(subject, number))
        return sorted(found)

    def subjects_since(self, seq: int) -> list[tuple[int, str]]:
        return [(n, subject) for n, subject in self.conn.execute(
            "SELECT seq, subject FROM knoxidx.history_commit WHERE repo = %s AND seq >= %s"
            " ORDER BY seq", (self.repo, seq)).fetchall()]

    def paths_of_commit(self, seq: int) -> list[str]:
        return [path for path, in self.conn.execute(
            "SELECT path FROM knoxidx.history_change WHERE repo = %s AND seq = %s ORDER BY"
            " path COLLATE \"C\"", (self.repo, seq)).fetchall()]

    def newest_time(self) -> int:
        row = self.conn.execute("SELECT max(time) FROM knoxidx.history_commit WHERE repo = %s",
                                (self.repo,)).fetchone()
        return row[0] or 0

    def first_seq_since(self, time: int) -> int:
        row = self.conn.execute("SELECT min(seq) FROM knoxidx.history_commit WHERE repo = %s"
                                " AND time >= %s", (self.repo, time)).fetchone()
        return self.next_seq() if row[0] is None else row[0]

    def paths_changed_since(self, seq: int) -> list[tuple[str, int]]:
        return self.conn.execute(
            "SELECT path, count(DISTINCT seq) FROM knoxidx.history_change WHERE repo = %s AND"
            " seq >= %s GROUP BY path", (self.repo, seq)).fetchall()

    def changes_since(self, seq: int) -> list[tuple[int, str]]:
        return self.conn.execute(
            "SELECT seq, path FROM knoxidx.history_change WHERE repo = %s AND seq >= %s"
            " ORDER BY seq, path", (self.repo, seq)).fetchall()

    def dump(self) -> tuple[list[tuple], list[tuple]]:
        """Every commit and change row, in order, as SQLite's tables hold them."""
        commits = self.conn.execute(
            "SELECT seq, hash, time, author, email, subject FROM knoxidx.history_commit"
            " WHERE repo = %s ORDER BY seq", (self.repo,)).fetchall()
        changes = self.conn.execute(
            "SELECT seq, path, old_path, hunks FROM knoxidx.history_change WHERE repo = %s"
            " ORDER BY seq, path COLLATE \"C\", old_path COLLATE \"C\"",
            (self.repo,)).fetchall()
        return ([tuple(r) for r in commits],
                [(seq, path, old, bytes(hunks)) for seq, path, old, hunks in changes])

    def counts(self) -> tuple[int, int]:
        commits = self.conn.execute("SELECT count(*) FROM knoxidx.history_commit WHERE"
                                    " repo = %s", (self.repo,)).fetchone()[0]
        changes = self.conn.execute("SELECT count(*) FROM knoxidx.history_change WHERE"
                                    " repo = %s", (self.repo,)).fetchone()[0]
        return commits, changes

    def definitions_in(self, path: str) -> list[Definition]:
        return self.conn.execute(
            "SELECT n.id, n.kind, n.qualified_name, n.start_line, n.end_line, n.cyclomatic,"
            " n.loc FROM knoxidx.nodes n"
            " JOIN knoxidx.files f ON f.id = n.file_id WHERE f.repo = %s AND n.repo = %s AND"
            " f.path = %s AND n.kind NOT IN ('File', 'Module') AND n.start_line IS NOT NULL",
            (self.repo, self.repo, path)).fetchall()

    def file_lines(self, path: str) -> int | None:
        row = self.conn.execute("SELECT lines FROM knoxidx.files WHERE repo = %s AND path = %s"
                                " AND status = 'ok'", (self.repo, path)).fetchone()
        return row[0] if row else None
