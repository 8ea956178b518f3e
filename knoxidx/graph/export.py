"""The whole graph as data, streamed: JSON (the documented shape), GraphML and DOT; and as a
networkx graph for its algorithms."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any, NamedTuple
from xml.sax.saxutils import escape

from knoxidx.core.terminal import character_references, json_text
from knoxidx.graph.queries import EDGE_FIELDS, GraphQueries

EXPORT_NODE_FIELDS = (
    "id", "kind", "name", "qualified_name", "path", "start_line", "end_line", "language",
    "signature", "doc", "exported",
)
# a function's signature as data (knoxidx.parse.signatures.as_json's keys; a generic type has
# type_parameters alone), exported as stored
SIGNATURE_FIELDS = ("parameters", "returns", "type_parameters", "decorators")
# GraphML and networkx attributes are scalars: these lists become their JSON text
_LIST_FIELDS = ("parameters", "type_parameters", "decorators")
# what a client may see of an exported node (the CLI passes
# knoxidx.retrieval.disclosure.declaration_shown, which this layer cannot import)
NodeShown = Callable[[dict[str, Any]], dict[str, Any]]


def nodes(q: GraphQueries, evolution: Mapping[int, dict[str, Any]] | None = None,
          shown: NodeShown | None = None) -> Iterator[dict[str, Any]]:
    """Every node as exported; with ``evolution`` (node id -> its evolution object, from the
    history, which this layer cannot read), each definition's beside it; with ``shown``, each
    node as it returns it (its secrets masked)."""
    for node in q.all_nodes():
        out = {k: node[k] for k in EXPORT_NODE_FIELDS}
        if "complexity" in node:  # a function's
            out["complexity"] = node["complexity"]
        out.update((k, node[k]) for k in SIGNATURE_FIELDS if k in node)  # a function's, a
        # generic type's type_parameters
        if shown is not None:
            out = shown(out)
        if evolution and node["id"] in evolution:
            out["evolution"] = evolution[node["id"]]
        yield out


def flat_node(node: dict[str, Any]) -> dict[str, Any]:
    """An exported node with a function's complexity as three attributes of its own, and its
    parameters, type parameters and decorators as JSON text (GraphML and networkx attributes
    are scalars)."""
    complexity = node.get("complexity")
    if complexity is None and "type_parameters" not in node:
        return node
    flat = {k: v for k, v in node.items() if k != "complexity"}
    flat.update(complexity or {})
    for key in _LIST_FIELDS:
        if key in flat:
            flat[key] = json.dumps(flat[key], ensure_ascii=False, separators=(",", ":"))
    return flat


def edges(q: GraphQueries) -> Iterator[dict[str, Any]]:
    for row in q.all_edges():
        yield dict(zip(EDGE_FIELDS, row, strict=True))


class Canonical(NamedTuple):
    """Order-free form of an index's graph: what an incremental index and a clean one must
    have alike."""

    nodes: set[tuple]
    edges: set[tuple]
    # the calls left unresolved, with why: `refs`, `goto` and `stats` answer from them
    unresolved: set[tuple]


EMPTY = Canonical(set(), set(), set())


def canonical(q: GraphQueries) -> Canonical:
    """Order-free form of the graph, for comparing an incremental index with a clean one."""
    node_set = {(*(n[k] for k in EXPORT_NODE_FIELDS),
                 json.dumps([n.get(k) for k in SIGNATURE_FIELDS])) for n in nodes(q)}
    edge_set = {tuple(e[k] for k in EDGE_FIELDS) for e in edges(q)}
    return Canonical(node_set, edge_set, set(q.all_unresolved()))


def write_json(q: GraphQueries, out: IO[str],
               evolution: Mapping[int, dict[str, Any]] | None = None,
               shown: NodeShown | None = None) -> None:
    # Streamed: a large graph never sits in memory as one JSON string.
    out.write('{"nodes": [')
    for i, node in enumerate(nodes(q, evolution, shown)):
        out.write(("," if i else "") + "\n" + json_text(node))  # no control character raw
    out.write('\n], "edges": [')
    for i, edge in enumerate(edges(q)):
        out.write(("," if i else "") + "\n" + json_text(edge))
    out.write("\n]}\n")


def to_networkx(q: GraphQueries) -> Any:
    import networkx as nx

    graph = nx.MultiDiGraph()
    for node in nodes(q):  # an attribute without a value is left out, as in the GraphML
        graph.add_node(node["id"], **{k: v for k, v in flat_node(node).items()
                                      if k != "id" and v is not None})
    for edge in edges(q):
        attrs = {k: edge[k] for k in ("type", "confidence", "path", "line")
                 if edge[k] is not None}
        graph.add_edge(edge["source"], edge["target"], key=None, **attrs)
    return graph


# GraphML attributes, each declared once with its type (an attribute without a value is left
# out, as GraphML allows: networkx's writer declared "line" as both long and string, since
# a missing line became "")
GRAPHML_NODE_KEYS = (
    ("kind", "string"), ("name", "string"), ("qualified_name", "string"), ("path", "string"),
    ("start_line", "long"), ("end_line", "long"), ("language", "string"),
    ("signature", "string"), ("doc", "string"), ("exported", "boolean"),
    ("cyclomatic", "long"), ("nesting", "long"), ("loc", "long"),
    ("parameters", "string"), ("returns", "string"), ("type_parameters", "string"),
    ("decorators", "string"),
)
GRAPHML_EDGE_KEYS = (("type", "string"), ("confidence", "string"), ("path", "string"),
                     ("line", "long"))
# what XML 1.0 cannot hold at all, escaped or not (a form feed in a doc comment)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def write_graphml(q: GraphQueries, out: IO[bytes], shown: NodeShown | None = None) -> None:
    """GraphML, streamed as the JSON is: networkx's writer builds the whole document in memory
    first (2.9 GB and 34 s for the benchmark corpus's 119k nodes and 564k edges). What
    ``networkx.read_graphml`` reads back is :func:`to_networkx`'s graph, node ids as strings
    and text that XML cannot hold replaced."""
    out.write(b"<?xml version='1.0' encoding='utf-8'?>\n"
              b'<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
              b'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
              b'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
              b'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n')
    for prefix, kind, keys in (("n", "node", GRAPHML_NODE_KEYS), ("e", "edge", GRAPHML_EDGE_KEYS)):
        for i, (name, type_) in enumerate(keys):
            out.write(f'  <key id="{prefix}{i}" for="{kind}" attr.name="{name}" '
                      f'attr.type="{type_}" />\n'.encode())
    out.write(b'  <graph edgedefault="directed">\n')
    for node in nodes(q, shown=shown):
        out.write((f'    <node id="{node["id"]}">'
                   + _graphml_data("n", GRAPHML_NODE_KEYS, flat_node(node))
                   + "</node>\n").encode())
    for edge in edges(q):
        out.write((f'    <edge source="{edge["source"]}" target="{edge["target"]}">'
                   + _graphml_data("e", GRAPHML_EDGE_KEYS, edge) + "</edge>\n").encode())
    out.write(b"  </graph>\n</graphml>\n")


def _graphml_data(prefix: str, keys: tuple[tuple[str, str], ...], row: dict[str, Any]) -> str:
    parts = []
    for i, (name, type_) in enumerate(keys):
        value = row.get(name)
        if value is None:
            continue
        text = ("true" if value else "false") if type_ == "boolean" else str(value)
        shown = character_references(escape(_NOT_XML.sub(chr(0xFFFD), text)), keep="\t\n")
        parts.append(f'<data key="{prefix}{i}">{shown}</data>')
    return "".join(parts)


def _dot_quote(value: Any) -> str:
    # exported to a terminal as often as to a file: no control character goes out raw
    text = character_references(str(value))
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def write_dot(q: GraphQueries, out: IO[str]) -> None:
    out.write("digraph knoxidx {\n  node [shape=box];\n")
    for node in nodes(q):
        label = _dot_quote(f"{node['kind']}\n{node['qualified_name']}")
        out.write(f"  {node['id']} [label={label}, kind={_dot_quote(node['kind'])}];\n")
    for edge in edges(q):
        out.write(f"  {edge['source']} -> {edge['target']} [label={_dot_quote(edge['type'])},"
                  f" confidence={_dot_quote(edge['confidence'])}];\n")
    out.write("}\n")
