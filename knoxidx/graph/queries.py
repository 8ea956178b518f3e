"""Read-side SQL over a :class:`~knoxidx.graph.store.SQLiteStore` connection: the lookups and
walks of :mod:`knoxidx.graph.traverse`, the export and ``stats``. (The PostgreSQL store's are
:mod:`knoxidx.graph.pg_queries`, same methods, same results.)"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from knoxidx.core.path_glob import WILDCARDS, path_prefix
from knoxidx.graph.sqlite_schema import OUTSIDE_RUNS
from knoxidx.parse.signatures import as_json as signature_json
from knoxidx.parse.signatures import key_needles

NODE_SELECT = (
    "SELECT n.id, n.kind, n.name, n.qualified_name, f.path, n.start_line, n.end_line,"
    " n.start_byte, n.end_byte, n.language, n.signature, n.doc, n.exported, n.cyclomatic,"
    " n.nesting, n.loc, n.signature_data, n.parent_id, n.file_id"
    " FROM nodes n LEFT JOIN files f ON f.id = n.file_id"
)
# The order of each part of GraphQueries.all_edges (source, target, type, confidence, path,
# line): by site, edges without one (the module layer's) first, then by the ids and the type,
# which no two edges share all of. The PostgreSQL store's is the same, in byte order.
EDGE_ORDER = " ORDER BY f.path IS NOT NULL, f.path, 6, 1, 2, 3"
_EDGE_COLUMNS = "SELECT e.source, e.target, e.type, e.confidence, f.path, e.line"
_EDGE_SELECT = f"{_EDGE_COLUMNS} FROM edges e LEFT JOIN files f ON f.id = e.file_id"
# an edge row as GraphQueries.edges and all_edges give it, and the export writes it
EDGE_FIELDS = ("source", "target", "type", "confidence", "path", "line")
# an unresolved call as GraphQueries.unresolved_calls gives it
UNRESOLVED_FIELDS = ("path", "line", "called_as", "reason", "candidates", "source")
NODE_FIELDS = (
    "id", "kind", "name", "qualified_name", "path", "start_line", "end_line", "start_byte",
    "end_byte", "language", "signature", "doc", "exported", "cyclomatic", "nesting", "loc",
    "signature_data", "parent_id", "file_id",
)
COMPLEXITY_FIELDS = ("cyclomatic", "nesting", "loc")


def normalise_qualified(name: str) -> str:
    return name.replace("::", ".").replace("/", ".").replace(":", ".")


def node_dict(row: Iterable[Any]) -> dict[str, Any]:
    """A node row (NODE_FIELDS) as the answers give it: ``exported`` (stored as 0/1) a
    boolean, a function's complexity as one ``complexity`` object (no such key for other
    kinds), and a function's signature as its ``parameters``, ``returns``,
    ``type_parameters`` and ``decorators`` (see :mod:`knoxidx.parse.signatures`)."""
    node = dict(zip(NODE_FIELDS, row, strict=True))
    if node["exported"] is not None:
        node["exported"] = bool(node["exported"])
    cyclomatic, nesting, loc = node.pop("cyclomatic"), node.pop("nesting"), node.pop("loc")
    if cyclomatic is not None:
        node["complexity"] = {"cyclomatic": cyclomatic, "nesting": nesting, "loc": loc}
    signature_data = node.pop("signature_data")
    if signature_data is not None:
        node.update(signature_json(json.loads(signature_data)))
    return node


def type_clauses(returns: str | None, param_type: str | None,
                 find: str) -> tuple[list[str], list[str]]:
    """The SQL conditions (and their parameters) of the ``--returns`` / ``--param-type``
    filters (types from :func:`~knoxidx.parse.signatures.type_query`), with ``find`` the
    store's substring test of a column (``instr({}, ?) > 0``, ``strpos({}, %s) > 0``)."""
    clauses: list[str] = []
    params: list[str] = []
    for column, query in (("n.returns_types", returns), ("n.param_types", param_type)):
        if query is not None:
            clauses.append(f"({find.format(column)} OR {find.format(column)})")
            params.extend(key_needles(query))
    return clauses, params


def _node_dicts(rows: Iterable[tuple]) -> list[dict[str, Any]]:
    return [node_dict(row) for row in rows]


def edges_out_sql(ids: int, types: int) -> str:
    """The edges out of ``ids`` nodes, of ``types`` types (0: any), ordered as ``edges``
    orders them; its parameters: the ids twice, the types, the ids, the types. There is no index
    by source: an edge lies in its site's file's run of rowids (``file_rows``), and its source
    is that file's node or one of its definitions, but for the module layer's edges and
    Implements edges (a Rust `impl Trait for T` in another file than T), which edges_outside
    indexes by source (``sqlite_schema.OUTSIDE_RUNS``)."""
    marks = ",".join("?" * ids)
    typed = _types_clause(types)
    return (
        f"{_EDGE_COLUMNS} FROM file_rows r JOIN edges e ON e.rowid BETWEEN r.edges_lo AND"
        " r.edges_hi LEFT JOIN files f ON f.id = e.file_id WHERE r.file_id IN (SELECT"
        f" n.file_id FROM nodes n WHERE n.id IN ({marks})) AND e.source IN ({marks})"
        f" AND e.type != 'Implements'{typed} UNION ALL {_EDGE_SELECT} WHERE e.source IN"
        f" ({marks}) AND ({OUTSIDE_RUNS}){typed} ORDER BY 5, 6"
    )


def _types_clause(types: int) -> str:
    """The edges' condition on their type, for ``types`` of them as parameters (0: any)."""
    return f" AND e.type IN ({','.join('?' * types)})" if types else ""


def _path_clause(path_glob: str) -> str:
    """Files whose path passes ``path_glob``: a GLOB, else the file or the directory named."""
    if any(ch in path_glob for ch in WILDCARDS):
        return "f.path GLOB ?"
    return "(f.path = ? OR substr(f.path, 1, ?) = ?)"


def _path_params(path_glob: str) -> list[Any]:
    if any(ch in path_glob for ch in WILDCARDS):
        return [path_glob]
    prefix = path_prefix(path_glob)
    return [prefix, len(prefix) + 1, prefix + "/"]


class _Connected(Protocol):
    """What the queries read of a store (a :class:`~knoxidx.graph.store.SQLiteStore`)."""

    conn: sqlite3.Connection


class GraphQueries:
    """Read-side SQL over a :class:`SQLiteStore` connection."""

    def __init__(self, store: _Connected) -> None:
        self.conn = store.conn

    def scoped(self, repo: str) -> GraphQueries:
        return self  # a SQLite store holds one repository

    def nodes_named(self, name: str, kind: str | None = None, limit: int = 200) -> list[dict]:
        return self._nodes_matching("n.name = ?", name, kind,
                                    "n.kind = 'Module', f.path, n.start_line", limit)

    def nodes_like(self, pattern: str, kind: str | None = None, limit: int = 200) -> list[dict]:
        return self._nodes_matching("n.name LIKE ? ESCAPE '\\'", pattern, kind,
                                    "length(n.name), f.path, n.start_line", limit)

    def _nodes_matching(self, condition: str, value: str, kind: str | None, order: str,
                        limit: int) -> list[dict]:
        sql = f"{NODE_SELECT} WHERE {condition}"
        params: list[Any] = [value]
        if kind:
            sql += " AND n.kind = ?"
            params.append(kind)
        return _node_dicts(self.conn.execute(f"{sql} ORDER BY {order} LIMIT ?", (*params, limit)))

    def nodes_page(self, by: str, value: str, kind: str | None, path_glob: str | None,
                   limit: int, offset: int,
                   min_complexity: int | None = None, returns: str | None = None,
                   param_type: str | None = None) -> tuple[list[dict], int]:
        """Nodes named ``value`` (``by="name"``, in nodes_named's order) or whose name matches
        the LIKE pattern ``value`` (``by="like"``, in nodes_like's), of ``kind`` and in files
        matching ``path_glob`` (see :mod:`knoxidx.core.path_glob`): ``limit`` of them from
        ``offset``, and how many there are in all. With ``min_complexity``: functions of at
        least that cyclomatic complexity, the most complex first. With ``returns`` /
        ``param_type``: functions whose return type / a parameter's type names that type
        (:func:`type_clauses`)."""
        condition, order = {"name": ("n.name = ?", "n.kind = 'Module', f.path, n.start_line"),
                            "like": ("n.name LIKE ? ESCAPE '\\'",
                                     "length(n.name), f.path, n.start_line")}[by]
        clauses: list[str] = [condition]
        params: list[Any] = [value]
        if kind:
            clauses.append("n.kind = ?")
            params.append(kind)
        if path_glob:
            clauses.append(_path_clause(path_glob))
            params.extend(_path_params(path_glob))
        if min_complexity is not None:
            clauses.append("n.cyclomatic >= ?")
            params.append(min_complexity)
            order = f"n.cyclomatic DESC, {order}"
        typed, typed_params = type_clauses(returns, param_type, "instr({}, ?) > 0")
        clauses.extend(typed)
        params.extend(typed_params)
        where = " WHERE " + " AND ".join(clauses)
        total = self.conn.execute(
            "SELECT count(*) FROM nodes n LEFT JOIN files f ON f.id = n.file_id" + where,
            params).fetchone()[0]
        rows = _node_dicts(self.conn.execute(
            f"{NODE_SELECT}{where} ORDER BY {order}, n.id LIMIT ? OFFSET ?",
            (*params, limit, offset)))
        return rows, total

    def nodes_qualified(self, qualified: str, limit: int = 50) -> list[dict]:
        return _node_dicts(self.conn.execute(
            NODE_SELECT + " WHERE n.qualified_name = ? ORDER BY f.path LIMIT ?", (qualified, limit)
        ))

    def nodes_with_suffix(self, suffix: str, limit: int = 50) -> list[dict]:
        """Qualified names ending in ``suffix`` at a separator (``.``, ``::``, ``/``, ``:``)."""
        norm = normalise_qualified(suffix)
        last = norm.rsplit(".", 1)[-1]
        rows = _node_dicts(self.conn.execute(
            NODE_SELECT + " WHERE n.name = ? ORDER BY f.path LIMIT 5000", (last,)
        ))
        return [
            r for r in rows if normalise_qualified(r["qualified_name"]).endswith("." + norm)
        ][:limit]

    def node_at(self, path: str, line: int) -> dict | None:
        rows = _node_dicts(self.conn.execute(
            NODE_SELECT + " WHERE f.path = ? AND n.def_index IS NOT NULL AND n.start_line <= ?"
            " AND n.end_line >= ? ORDER BY n.start_byte DESC, n.end_byte ASC LIMIT 1",
            (path, line, line),
        ))
        return rows[0] if rows else None

    def file_node(self, path: str) -> dict | None:
        rows = _node_dicts(self.conn.execute(
            NODE_SELECT + " WHERE f.path = ? AND n.kind = 'File'", (path,)
        ))
        return rows[0] if rows else None

    def module_nodes(self, key: str) -> list[dict]:
        return _node_dicts(self.conn.execute(
            NODE_SELECT + " WHERE n.kind = 'Module' AND n.file_id IS NULL AND"
            " (n.qualified_name = ? OR n.name = ?)", (key, key)
        ))

    def nodes_by_id(self, ids: Iterable[int]) -> dict[int, dict]:
        ids = list(ids)
        out: dict[int, dict] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            for node in _node_dicts(self.conn.execute(
                NODE_SELECT + f" WHERE n.id IN ({','.join('?' * len(chunk))})", chunk
            )):
                out[node["id"]] = node
        return out

    def edges(
        self, ids: Iterable[int], direction: str, types: Iterable[str] | None = None
    ) -> list[dict]:
        """Stored edges into (direction="in") or out of ("out") the given nodes."""
        ids = list(ids)
        type_list = list(types) if types else []
        typed = _types_clause(len(type_list))
        out: list[dict] = []
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            if direction == "in":
                sql = (f"{_EDGE_SELECT} WHERE e.target IN ({','.join('?' * len(chunk))}){typed}"
                       " ORDER BY f.path, e.line")
                params: list[Any] = [*chunk, *type_list]
            else:
                sql = edges_out_sql(len(chunk), len(type_list))
                params = [*chunk, *chunk, *type_list, *chunk, *type_list]
            out.extend(dict(zip(EDGE_FIELDS, r, strict=True))
                       for r in self.conn.execute(sql, params))
        return out

    def member_names(self, node_id: int) -> tuple[bool, list[str]]:
        """Whether the definition ``node_id`` is a member of a type (a method, a field), and the
        names of its own members: those it contains and the methods declared for it apart
        (Go receivers, Rust ``impl`` blocks)."""
        conn = self.conn
        row = conn.execute("SELECT member, owner, family, name, file_id FROM nodes WHERE id = ?",
                           (node_id,)).fetchone()
        if row is None:
            return False, []
        member, owner, family, name, file_id = row
        names = [r[0] for r in conn.execute(
            "SELECT name FROM nodes WHERE file_id = ? AND parent_id = ? UNION SELECT name FROM"
            " nodes WHERE owner = ? AND owner != '' AND family = ? ORDER BY 1",
            (file_id, node_id, name, family))]
        return bool(member) or bool(owner), names

    def members(self, node_id: int, limit: int) -> tuple[int, list[dict]]:
        """The members of the type ``node_id`` by :meth:`member_names`' rule (those it contains,
        and the methods declared for it apart: Go receivers, Rust ``impl`` blocks): how many,
        and the first ``limit`` by path and line."""
        row = self.conn.execute("SELECT family, name, file_id FROM nodes WHERE id = ?",
                                (node_id,)).fetchone()
        if row is None:
            return 0, []
        family, name, file_id = row
        where = (" WHERE n.id != ? AND ((n.file_id = ? AND n.parent_id = ?)"
                 " OR (n.owner = ? AND n.owner != '' AND n.family = ?))")
        params = (node_id, file_id, node_id, name, family)
        total = self.conn.execute("SELECT count(*) FROM nodes n" + where, params).fetchone()[0]
        rows = self.conn.execute(NODE_SELECT + where + " ORDER BY f.path, n.start_line, n.id"
                                 " LIMIT ?", (*params, limit))
        return total, _node_dicts(rows)

    def unresolved_calls(self, anywhere: Sequence[str], as_member: Sequence[str],
                         limit: int) -> tuple[int, list[dict]]:
        """Calls resolution left unresolved ("unknown" or "ambiguous"; not "external") whose
        last name is one of ``anywhere`` (``f()``, ``x.f()``) or, after a receiver, one of
        ``as_member`` (``x.f()`` only): how many, and the first ``limit`` by site."""
        last = "substr(u.name, length(rtrim(u.name, replace(u.name, '.', ''))) + 1)"
        where = (
            " FROM unresolved u JOIN files f ON f.id = u.file_id WHERE u.reason != 'external'"
            f" AND ({last} IN (SELECT value FROM json_each(?)) OR (instr(u.name, '.') > 0"
            f" AND {last} IN (SELECT value FROM json_each(?))))"
        )
        params = (json.dumps(list(anywhere)), json.dumps(list(as_member)))
        total = self.conn.execute("SELECT count(*)" + where, params).fetchone()[0]
        rows = self.conn.execute(
            "SELECT f.path, u.line, u.name, u.reason, u.candidates, u.source" + where
            + " ORDER BY f.path, u.line LIMIT ?", (*params, limit))
        return total, [dict(zip(UNRESOLVED_FIELDS, r, strict=True)) for r in rows]

    def edges_of_types(self, types: Iterable[str]) -> Iterator[tuple[int, int, str]]:
        """(source, target, type) of every stored edge of ``types``, in no particular order."""
        type_list = list(types)
        yield from self.conn.execute(
            "SELECT source, target, type FROM edges"
            f" WHERE type IN ({','.join('?' * len(type_list))})", type_list)

    def totals(self) -> tuple[int, int]:
        """(nodes, edges) as :meth:`counts` sums them, without its per-kind scans."""
        nodes, edges, defs = self.conn.execute(
            "SELECT (SELECT count(*) FROM nodes), (SELECT count(*) FROM edges),"
            " (SELECT count(*) FROM nodes WHERE def_index IS NOT NULL)"
        ).fetchone()
        return nodes, edges + 2 * defs  # each definition: a Defines and a Contains edge

    def counts(self) -> dict[str, Any]:
        conn = self.conn
        kinds = dict(conn.execute("SELECT kind, count(*) FROM nodes GROUP BY kind"))
        edge_types = dict(conn.execute("SELECT type, count(*) FROM edges GROUP BY type"))
        defs = conn.execute("SELECT count(*) FROM nodes WHERE def_index IS NOT NULL").fetchone()[0]
        edge_types["Defines"] = defs
        edge_types["Contains"] = edge_types.get("Contains", 0) + defs
        confidence = dict(conn.execute(
            "SELECT confidence, count(*) FROM edges WHERE type='Calls' GROUP BY confidence"
        ))
        files = dict(conn.execute("SELECT status, count(*) FROM files GROUP BY status"))
        languages = dict(conn.execute(
            "SELECT language, count(*) FROM files WHERE status='ok' GROUP BY language"
        ))
        lines = conn.execute("SELECT coalesce(sum(lines),0) FROM files").fetchone()[0]
        unresolved = dict(conn.execute(
            "SELECT reason, count(*) FROM unresolved GROUP BY reason"
        ))
        return {
            "files": files, "languages": languages, "lines": lines, "nodes": kinds,
            "edges": edge_types, "calls_by_confidence": confidence,
            "unresolved_calls": unresolved,
        }

    def all_nodes(self) -> Iterator[dict]:
        for row in self.conn.execute(NODE_SELECT + " ORDER BY n.id"):
            yield node_dict(row)

    def all_unresolved(self) -> Iterator[tuple]:
        """Every unresolved reference, with how many times its site holds it: (path, line,
        kind, name, reason, candidates, source, count)."""
        yield from self.conn.execute(
            "SELECT f.path, u.line, u.kind, u.name, u.reason, u.candidates, u.source, count(*)"
            " FROM unresolved u JOIN files f ON f.id = u.file_id GROUP BY 1, 2, 3, 4, 5, 6, 7")

    def all_edges(self) -> Iterator[tuple]:
        """Stored edges plus the structural ones (Defines, Contains) derived from nodes, each
        part in a fixed order (``EDGE_ORDER``): the same graph exports the same bytes, however
        its rows were written (resolution results arrive in any order from the processes that
        resolve them; an update appends a file's edges anew)."""
        yield from self.conn.execute(
            "SELECT e.source, e.target, e.type, e.confidence, f.path, e.line FROM edges e"
            " LEFT JOIN files f ON f.id = e.file_id" + EDGE_ORDER
        )
        yield from self.conn.execute(
            "SELECT fn.id, n.id, 'Defines', 'exact', f.path, n.start_line FROM nodes n"
            " JOIN files f ON f.id = n.file_id JOIN nodes fn ON fn.file_id = n.file_id"
            " AND fn.kind = 'File' WHERE n.def_index IS NOT NULL" + EDGE_ORDER
        )
        yield from self.conn.execute(
            "SELECT coalesce(n.parent_id, fn.id), n.id, 'Contains', 'exact', f.path, n.start_line"
            " FROM nodes n JOIN files f ON f.id = n.file_id JOIN nodes fn"
            " ON fn.file_id = n.file_id AND fn.kind = 'File' WHERE n.def_index IS NOT NULL"
            + EDGE_ORDER
        )

    def integrity(self) -> str:
        return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])
