"""The whole graph as data: JSON (the documented shape), GraphML and DOT via networkx."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

from knoxidx.graph.queries import GraphQueries

EXPORT_NODE_FIELDS = (
    "id", "kind", "name", "qualified_name", "path", "start_line", "end_line", "language",
    "signature", "doc", "exported",
)
EDGE_FIELDS = ("source", "target", "type", "confidence", "path", "line")


def nodes(q: GraphQueries) -> Iterator[dict[str, Any]]:
    for node in q.all_nodes():
        out = {k: node[k] for k in EXPORT_NODE_FIELDS}
        out["exported"] = None if out["exported"] is None else bool(out["exported"])
        yield out


def edges(q: GraphQueries) -> Iterator[dict[str, Any]]:
    for row in q.all_edges():
        yield dict(zip(EDGE_FIELDS, row, strict=True))


def canonical(q: GraphQueries) -> tuple[set[tuple], set[tuple]]:
    """Order-free form of the graph, for comparing an incremental index with a clean one."""
    node_set = {tuple(n[k] for k in EXPORT_NODE_FIELDS) for n in nodes(q)}
    edge_set = {tuple(e[k] for k in EDGE_FIELDS) for e in edges(q)}
    return node_set, edge_set


def write_json(q: GraphQueries, out: IO[str]) -> None:
    # Streamed: a large graph never sits in memory as one JSON string.
    out.write('{"nodes": [')
    for i, node in enumerate(nodes(q)):
        out.write(("," if i else "") + "\n" + json.dumps(node, ensure_ascii=False))
    out.write('\n], "edges": [')
    for i, edge in enumerate(edges(q)):
        out.write(("," if i else "") + "\n" + json.dumps(edge, ensure_ascii=False))
    out.write("\n]}\n")


def to_networkx(q: GraphQueries) -> Any:
    import networkx as nx

    graph = nx.MultiDiGraph()
    for node in nodes(q):
        graph.add_node(node["id"], **{k: ("" if v is None else v) for k, v in node.items()
                                      if k != "id"})
    for edge in edges(q):
        attrs = {k: ("" if edge[k] is None else edge[k])
                 for k in ("type", "confidence", "path", "line")}
        graph.add_edge(edge["source"], edge["target"], key=None, **attrs)
    return graph


def write_graphml(q: GraphQueries, out: IO[bytes]) -> None:
    import networkx as nx

    nx.write_graphml(to_networkx(q), out)


def _dot_quote(value: Any) -> str:
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def write_dot(q: GraphQueries, out: IO[str]) -> None:
    out.write("digraph knoxidx {\n  node [shape=box];\n")
    for node in nodes(q):
        label = _dot_quote(f"{node['kind']}\n{node['qualified_name']}")
        out.write(f"  {node['id']} [label={label}, kind={_dot_quote(node['kind'])}];\n")
    for edge in edges(q):
        out.write(f"  {edge['source']} -> {edge['target']} [label={_dot_quote(edge['type'])},"
                  f" confidence={_dot_quote(edge['confidence'])}];\n")
    out.write("}\n")
