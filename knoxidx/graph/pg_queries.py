"""Read-side SQL over a :class:`~knoxidx.graph.pg_store.PgStore`: the methods of
:class:`~knoxidx.graph.store.GraphQueries`, in the same order with the same results.

A store opened for one repository answers for that repository. One opened for every
repository (``repo=None``) answers name lookups across all of them (each node then says its
``repo``); walks over edges need one repository, so :meth:`scoped` narrows to the repository
of the node a walk starts from. Node ids are unique within a repository only.

Ordering follows SQLite's: byte order for text (``COLLATE "C"``) and NULLs first.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from knoxidx.core.path_glob import WILDCARDS, glob_regex, path_prefix
from knoxidx.graph.queries import (
    EDGE_FIELDS,
    UNRESOLVED_FIELDS,
    node_dict,
    normalise_qualified,
    type_clauses,
)

_NODE_SELECT = (
    "SELECT n.id, n.kind, n.name, n.qualified_name, f.path, n.start_line, n.end_line,"
    " n.start_byte, n.end_byte, n.language, n.signature, n.doc, n.exported, n.cyclomatic,"
    " n.nesting, n.loc, n.signature_data, n.parent_id, n.file_id, n.repo"
    " FROM knoxidx.nodes n LEFT JOIN knoxidx.files f ON f.id = n.file_id"
)
_PATH = 'f.path COLLATE "C" NULLS FIRST'
_EDGE_ORDER = f" ORDER BY {_PATH}, 6 NULLS FIRST, 1, 2, 3"  # queries.EDGE_ORDER's, in byte order


class PgGraphQueries:
    def __init__(self, store: Any, repo: str | None = None) -> None:
        self.store = store
        self.conn = store.conn
        self.repo = repo if repo is not None else store.repo

    def scoped(self, repo: str) -> PgGraphQueries:
        return self if repo == self.repo else PgGraphQueries(self.store, repo)

    # ---- helpers -------------------------------------------------------------------------

    def _where(self, clause: str, params: list[Any], alias: str = "n") -> tuple[str, list[Any]]:
        if self.repo is None:
            return " WHERE " + clause, params
        return f" WHERE {alias}.repo = %s AND " + clause, [self.repo, *params]

    def _nodes(self, clause: str, params: list[Any], tail: str = "",
               tail_params: tuple = ()) -> list[dict]:
        where, args = self._where(clause, params)
        rows = self.conn.execute(_NODE_SELECT + where + tail, (*args, *tail_params))
        return [self._dict(r) for r in rows]

    def _dict(self, row: tuple) -> dict[str, Any]:
        out = node_dict(row[:-1])
        if self.repo is None:
            out["repo"] = row[-1]
        return out

    # ---- GraphQueries' methods -----------------------------------------------------------

    def nodes_named(self, name: str, kind: str | None = None, limit: int = 200) -> list[dict]:
        clause, params = "n.name = %s", [name]
        if kind:
            clause += " AND n.kind = %s"
            params.append(kind)
        return self._nodes(clause, params,
                           f" ORDER BY n.kind = 'Module', {_PATH}, n.start_line NULLS FIRST,"
                           " n.repo LIMIT %s", (limit,))

    def nodes_like(self, pattern: str, kind: str | None = None, limit: int = 200) -> list[dict]:
        # SQLite's LIKE is case-insensitive for ASCII: the same question on lowered names,
        # which the nodes_name_lower index answers by seeking to the prefix
        clause, params = "lower(n.name) LIKE lower(%s) ESCAPE '\\'", [pattern]
        if kind:
            clause += " AND n.kind = %s"
            params.append(kind)
        return self._nodes(clause, params,
                           f" ORDER BY length(n.name), {_PATH}, n.start_line NULLS FIRST,"
                           " n.repo LIMIT %s", (limit,))

    def nodes_page(self, by: str, value: str, kind: str | None, path_glob: str | None,
                   limit: int, offset: int,
                   min_complexity: int | None = None, returns: str | None = None,
                   param_type: str | None = None) -> tuple[list[dict], int]:
        if by == "name":
            clause, order = "n.name = %s", f"n.kind = 'Module', {_PATH}, n.start_line NULLS FIRST"
        else:
            clause = "lower(n.name) LIKE lower(%s) ESCAPE '\\'"
            order = f"length(n.name), {_PATH}, n.start_line NULLS FIRST"
        params: list[Any] = [value]
        if kind:
            clause += " AND n.kind = %s"
            params.append(kind)
        if path_glob and any(ch in path_glob for ch in WILDCARDS):
            clause += " AND f.path ~ %s"
            params.append(glob_regex(path_glob))
        elif path_glob:
            prefix = path_prefix(path_glob)
            clause += " AND (f.path = %s OR left(f.path, %s) = %s)"
            params.extend([prefix, len(prefix) + 1, prefix + "/"])
        if min_complexity is not None:
            clause += " AND n.cyclomatic >= %s"
            params.append(min_complexity)
            order = f"n.cyclomatic DESC, {order}"
        typed, typed_params = type_clauses(returns, param_type, "strpos({}, %s) > 0")
        clause += "".join(f" AND {t}" for t in typed)
        params.extend(typed_params)
        where, args = self._where(clause, params)
        total = self.conn.execute(
            "SELECT count(*) FROM knoxidx.nodes n LEFT JOIN knoxidx.files f ON f.id = n.file_id"
            + where, args).fetchone()[0]
        rows = self._nodes(clause, params, f" ORDER BY {order}, n.repo, n.id LIMIT %s OFFSET %s",
                           (limit, offset))
        return rows, total

    def nodes_qualified(self, qualified: str, limit: int = 50) -> list[dict]:
        return self._nodes("n.qualified_name = %s", [qualified],
                           f" ORDER BY {_PATH}, n.repo LIMIT %s", (limit,))

    def nodes_with_suffix(self, suffix: str, limit: int = 50) -> list[dict]:
        norm = normalise_qualified(suffix)
        last = norm.rsplit(".", 1)[-1]
        rows = self._nodes("n.name = %s", [last], f" ORDER BY {_PATH}, n.repo LIMIT 5000")
        return [
            r for r in rows if normalise_qualified(r["qualified_name"]).endswith("." + norm)
        ][:limit]

    def node_at(self, path: str, line: int) -> dict | None:
        rows = self._nodes(
            "f.path = %s AND n.def_index IS NOT NULL AND n.start_line <= %s AND n.end_line >= %s",
            [path, line, line], " ORDER BY n.start_byte DESC, n.end_byte ASC LIMIT 1",
        )
        return rows[0] if rows else None

    def file_node(self, path: str) -> dict | None:
        rows = self._nodes("f.path = %s AND n.kind = 'File'", [path], " LIMIT 1")
        return rows[0] if rows else None

    def module_nodes(self, key: str) -> list[dict]:
        return self._nodes(
            "n.kind = 'Module' AND n.file_id IS NULL AND (n.qualified_name = %s OR n.name = %s)",
            [key, key],
        )

    def nodes_by_id(self, ids: Iterable[int]) -> dict[int, dict]:
        ids = list(ids)
        if not ids:
            return {}
        return {n["id"]: n for n in self._nodes("n.id = ANY(%s)", [ids])}

    def edges(
        self, ids: Iterable[int], direction: str, types: Iterable[str] | None = None
    ) -> list[dict]:
        ids = list(ids)
        if not ids:
            return []
        column = "target" if direction == "in" else "source"
        clause = f"e.{column} = ANY(%s)"
        params: list[list[Any]] = [ids]
        type_list = list(types) if types else None
        if type_list:
            clause += " AND e.type = ANY(%s)"
            params.append(type_list)
        where, args = self._where(clause, params, "e")
        rows = self.conn.execute(
            "SELECT e.source, e.target, e.type, e.confidence, f.path, e.line FROM knoxidx.edges e"
            " LEFT JOIN knoxidx.files f ON f.id = e.file_id" + where
            + f" ORDER BY {_PATH}, e.line NULLS FIRST", args,
        )
        return [dict(zip(EDGE_FIELDS, r, strict=True)) for r in rows]

    def member_names(self, node_id: int) -> tuple[bool, list[str]]:
        where, args = self._where("n.id = %s", [node_id])
        row = self.conn.execute(
            "SELECT n.member, n.owner, n.family, n.name, n.file_id, n.repo FROM knoxidx.nodes n"
            + where, args).fetchone()
        if row is None:
            return False, []
        member, owner, family, name, file_id, repo = row
        names = [r[0] for r in self.conn.execute(
            "SELECT name COLLATE \"C\" FROM knoxidx.nodes WHERE repo = %s AND file_id = %s"
            " AND parent_id = %s UNION SELECT name FROM knoxidx.nodes WHERE repo = %s"
            " AND owner = %s AND owner <> '' AND family = %s ORDER BY 1",
            (repo, file_id, node_id, repo, name, family))]
        return bool(member) or bool(owner), names

    def members(self, node_id: int, limit: int) -> tuple[int, list[dict]]:
        where, args = self._where("n.id = %s", [node_id])
        row = self.conn.execute(
            "SELECT n.family, n.name, n.file_id, n.repo FROM knoxidx.nodes n" + where,
            args).fetchone()
        if row is None:
            return 0, []
        family, name, file_id, repo = row
        where = (" WHERE n.repo = %s AND n.id <> %s AND ((n.file_id = %s AND n.parent_id = %s)"
                 " OR (n.owner = %s AND n.owner <> '' AND n.family = %s))")
        params = (repo, node_id, file_id, node_id, name, family)
        total = self.conn.execute("SELECT count(*) FROM knoxidx.nodes n" + where,
                                  params).fetchone()[0]
        rows = self.conn.execute(_NODE_SELECT + where + f" ORDER BY {_PATH}, n.start_line, n.id"
                                 " LIMIT %s", (*params, limit))
        return total, [self._dict(r) for r in rows]

    def unresolved_calls(self, anywhere: Sequence[str], as_member: Sequence[str],
                         limit: int) -> tuple[int, list[dict]]:
        last = "substring(u.name from '[^.]*$')"
        clause = (
            f"u.reason <> 'external' AND ({last} = ANY(%s) OR (position('.' in u.name) > 0"
            f" AND {last} = ANY(%s)))"
        )
        where, args = self._where(clause, [list(anywhere), list(as_member)], "u")
        tail = " FROM knoxidx.unresolved u JOIN knoxidx.files f ON f.id = u.file_id" + where
        total = self.conn.execute("SELECT count(*)" + tail, args).fetchone()[0]
        rows = self.conn.execute(
            "SELECT f.path, u.line, u.name, u.reason, u.candidates, u.source" + tail
            + f" ORDER BY {_PATH}, u.line LIMIT %s", (*args, limit))
        return total, [dict(zip(UNRESOLVED_FIELDS, r, strict=True)) for r in rows]

    def edges_of_types(self, types: Iterable[str]) -> Iterator[tuple[int, int, str]]:
        """(source, target, type) of every stored edge of ``types``, in no particular order."""
        where, args = self._where("e.type = ANY(%s)", [list(types)], "e")
        yield from self.conn.execute(
            "SELECT e.source, e.target, e.type FROM knoxidx.edges e" + where, args)

    def totals(self) -> tuple[int, int]:
        """(nodes, edges) as :meth:`counts` sums them, without its per-kind scans."""
        found = []
        for table, extra in (("nodes", ""), ("edges", ""), ("nodes", " AND def_index IS NOT NULL")):
            where, args = self._where("TRUE" + extra, [], "t")
            found.append(self.conn.execute(
                f"SELECT count(*) FROM knoxidx.{table} t{where}", args).fetchone()[0])
        nodes, edges, defs = found
        return nodes, edges + 2 * defs  # each definition: a Defines and a Contains edge

    def counts(self) -> dict[str, Any]:
        def grouped(column: str, table: str, extra: str = "") -> dict:
            where, args = self._where("TRUE" + extra, [], "t")
            return dict(self.conn.execute(
                f"SELECT {column}, count(*) FROM knoxidx.{table} t{where} GROUP BY {column}", args
            ).fetchall())

        kinds = grouped("kind", "nodes")
        edge_types = grouped("type", "edges")
        where, args = self._where("def_index IS NOT NULL", [], "t")
        defs = self.conn.execute(f"SELECT count(*) FROM knoxidx.nodes t{where}", args).fetchone()[0]
        edge_types["Defines"] = defs
        edge_types["Contains"] = edge_types.get("Contains", 0) + defs
        where, args = self._where("TRUE", [], "t")
        lines = self.conn.execute(
            f"SELECT coalesce(sum(lines), 0) FROM knoxidx.files t{where}", args
        ).fetchone()[0]
        return {
            "files": grouped("status", "files"),
            "languages": grouped("language", "files", " AND status = 'ok'"),
            "lines": int(lines), "nodes": kinds, "edges": edge_types,
            "calls_by_confidence": grouped("confidence", "edges", " AND type = 'Calls'"),
            "unresolved_calls": grouped("reason", "unresolved"),
        }

    def all_nodes(self) -> Iterator[dict]:
        where, args = self._where("TRUE", [])
        with self.conn.cursor() as cur:
            for row in cur.execute(_NODE_SELECT + where + " ORDER BY n.id", args):
                yield self._dict(row)

    def all_unresolved(self) -> Iterator[tuple]:
        """Every unresolved reference, with how many times its site holds it: (path, line,
        kind, name, reason, candidates, source, count)."""
        where, args = self._where("TRUE", [], "u")
        yield from self.conn.execute(
            "SELECT f.path, u.line, u.kind, u.name, u.reason, u.candidates, u.source, count(*)"
            " FROM knoxidx.unresolved u JOIN knoxidx.files f ON f.id = u.file_id" + where
            + " GROUP BY 1, 2, 3, 4, 5, 6, 7", args)

    def all_edges(self) -> Iterator[tuple]:
        """Stored edges plus the structural ones (Defines, Contains) derived from nodes."""
        where, args = self._where("TRUE", [], "e")
        yield from self.conn.execute(
            "SELECT e.source, e.target, e.type, e.confidence, f.path, e.line FROM knoxidx.edges e"
            " LEFT JOIN knoxidx.files f ON f.id = e.file_id" + where + _EDGE_ORDER, args
        )
        where, args = self._where("n.def_index IS NOT NULL", [])
        structural = (
            " FROM knoxidx.nodes n JOIN knoxidx.files f ON f.id = n.file_id JOIN knoxidx.nodes fn"
            " ON fn.repo = n.repo AND fn.file_id = n.file_id AND fn.kind = 'File'" + where
        )
        yield from self.conn.execute(
            "SELECT fn.id, n.id, 'Defines', 'exact', f.path, n.start_line" + structural
            + _EDGE_ORDER, args
        )
        yield from self.conn.execute(
            "SELECT coalesce(n.parent_id, fn.id), n.id, 'Contains', 'exact', f.path, n.start_line"
            + structural + _EDGE_ORDER, args
        )

    def integrity(self) -> str:
        return "ok"  # PostgreSQL checks its own pages; there is no PRAGMA integrity_check

    # ---- across repositories -------------------------------------------------------------

    def external_importers(self, module_keys: Iterable[str], exclude_repo: str) -> list[dict]:
        """Files of other repositories importing an external module named like one of
        ``module_keys`` (the other repository's package, seen from outside)."""
        keys = sorted(set(module_keys))
        rows = self.conn.execute(
            "SELECT e.repo, f.path, e.line, x.name FROM knoxidx.externals x"
            " JOIN knoxidx.edges e ON e.repo = x.repo AND e.target = x.id AND e.type = 'Imports'"
            " JOIN knoxidx.files f ON f.id = e.file_id"
            f" WHERE x.name = ANY(%s) AND x.repo <> %s ORDER BY e.repo, {_PATH}, e.line",
            (keys, exclude_repo),
        )
        return [{"repo": r[0], "path": r[1], "line": r[2], "module": r[3]} for r in rows]

    def external_callers(self, name: str, module_keys: Iterable[str],
                         exclude_repo: str) -> list[dict]:
        """Calls left unresolved as external in other repositories that name ``name`` (alone
        or as ``something.name``) from a file importing one of ``module_keys``."""
        keys = sorted(set(module_keys))
        rows = self.conn.execute(
            "SELECT u.repo, f.path, u.line, u.name, n.qualified_name, n.kind FROM"
            " knoxidx.unresolved u JOIN knoxidx.files f ON f.id = u.file_id"
            " LEFT JOIN knoxidx.nodes n ON n.repo = u.repo AND n.id = u.source"
            " WHERE u.reason = 'external' AND u.repo <> %s"
            " AND (u.name = %s OR u.name LIKE %s) AND EXISTS (SELECT 1 FROM knoxidx.edges e"
            " JOIN knoxidx.externals x ON x.repo = e.repo AND x.id = e.target"
            " WHERE e.repo = u.repo AND e.file_id = u.file_id AND e.type = 'Imports'"
            f" AND x.name = ANY(%s)) ORDER BY u.repo, {_PATH}, u.line",
            (exclude_repo, name, "%." + name.replace("%", "\\%").replace("_", "\\_"), keys),
        )
        return [{"repo": r[0], "path": r[1], "line": r[2], "called_as": r[3],
                 "qualified_name": r[4], "kind": r[5], "confidence": "external-name"}
                for r in rows]

    def module_keys_of_path(self, path: str) -> list[str]:
        """The module keys the file at ``path`` is importable under, with their parents
        (``ledger.api`` also answers to ``ledger``)."""
        where, args = self._where("f.path = %s", [path], "m")
        keys = [r[0] for r in self.conn.execute(
            "SELECT m.key FROM knoxidx.modules m JOIN knoxidx.files f ON f.id = m.file_id" + where,
            args,
        )]
        out: set[str] = set()
        for key in keys:
            parts = key.replace("::", ".").replace("/", ".").split(".")
            out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        return sorted(out)
