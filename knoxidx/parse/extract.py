"""``extract(path, source, language) -> FileFacts``: the one place syntax trees are read.

A pure function of its arguments (no database, no other files), so it is cached by content hash,
runs in worker processes and is tested in isolation. All tree reading is one tree-sitter query
per language, run in C; Python only touches the captured nodes. In the compiled build the
query's matches come from ``_matches.c`` (see ``native_matches``): the references' and local
names' as plain rows, with no node object made for them; the facts are the same either way.

The steps, each a module: the compiled parser and query (:mod:`~knoxidx.parse.compiled_queries`),
the matches sorted by role (:mod:`~knoxidx.parse.captures`), the definitions
(:mod:`~knoxidx.parse.definitions`, :mod:`~knoxidx.parse.block_variables`), the bindings' types
(:mod:`~knoxidx.parse.binding_types`) and the references' rows (:mod:`~knoxidx.parse.references`).
"""

from __future__ import annotations

from typing import Any, cast

from knoxidx.core.facts import Definition, FileFacts, Impl, Import, as_references
from knoxidx.languages.protocol import Language, OrdersBindings, StatesConstraints
from knoxidx.parse.binding_sites import placed
from knoxidx.parse.binding_types import assigned_where_unset, completed_bindings, read_bindings
from knoxidx.parse.block_variables import add_block_variables
from knoxidx.parse.captures import read_matches
from knoxidx.parse.compiled_queries import COMPILED as COMPILED
from knoxidx.parse.compiled_queries import MAX_QUERY_DEPTH, compiled_query, query_cursor
from knoxidx.parse.compiled_queries import compiled_languages as compiled_languages
from knoxidx.parse.compiled_queries import native_matches as native_matches
from knoxidx.parse.compiled_queries import prepare as prepare
from knoxidx.parse.complexity import with_complexity
from knoxidx.parse.definitions import (
    binding_scope,
    bound_locals,
    build_definitions,
    enclosing,
    impl_type_path,
    node_text,
)
from knoxidx.parse.name_paths import name_path
from knoxidx.parse.references import reference_rows
from knoxidx.parse.tree_parse import ParseTimeoutError, parse_tree

# The most children one ERROR node may have (MAX_QUERY_DEPTH bounds the query's depth):
# tree-sitter's query cursor takes time quadratic in them (69,264 `(` as Python, one ERROR
# node at the top: 6 s per query, even `(ERROR) @e`; found by bench.fuzz), where a list
# literal of as many elements is linear. At this width a query of it takes ~0.1 s.
MAX_ERROR_WIDTH = 10_000
# How many nodes _sampled_shape looks at in a tree with syntax errors, and in one without.
# Each sample costs a walk from the root (tree-sitter scans each node's children on the way
# down): at 256 a tree, sampling cost 3.6 % of extraction, for a note.
ERROR_SAMPLES = 1024
DEPTH_SAMPLES = 16


def extract(path: str, source: bytes, language: str) -> FileFacts:
    return extract_with_notes(path, source, language)[0]


def extract_with_notes(path: str, source: bytes, language: str) -> tuple[FileFacts, list[str]]:
    """:func:`extract`, plus what a reader should know about the result (what was left out)."""
    facts, notes = extract_rows(path, source, language)
    return facts._replace(refs=as_references(facts.refs)), notes


def extract_rows(path: str, source: bytes, language: str) -> tuple[FileFacts, list[str]]:
    """:func:`extract_with_notes` as an index worker calls it: the references (most of a
    file's records) left as plain tuples in :class:`Reference`'s field order, which
    ``dump_facts`` marshals as they are. Read them by index, not by field name."""
    compiled = compiled_query(language)
    plugin = compiled.plugin
    tree = parse_tree(compiled.parser, source)
    unwrap = getattr(plugin, "unwrap_item_macros", None)
    if unwrap is not None:  # items inside macro calls, parsed where they stand (Rust)
        unwrapped = unwrap(tree, source, compiled.parser)
        if unwrapped is not None:
            source, tree = unwrapped
    root = tree.root_node
    notes = _shape_notes(tree)
    caps = read_matches(compiled, root, source)

    raw_defs = caps.defs
    if caps.assigned:
        add_block_variables(raw_defs, caps.assigned, caps.import_nodes, plugin, source)
    defs = with_complexity(build_definitions(raw_defs, caps.impls, plugin, source),
                           caps.complexity, source)
    spans = [(d.start_byte, d.end_byte, i) for i, d in enumerate(defs)]
    local_names = bound_locals(caps.locals, caps.globals, raw_defs, defs, spans, source)

    raw_bindings = caps.bindings
    if caps.assigned_bindings and caps.unset:
        raw_bindings += assigned_where_unset(caps.assigned_bindings, caps.unset, defs, spans,
                                              source)
    bindings, typed_names, aliases, placing = read_bindings(raw_bindings, defs, spans, plugin,
                                                        source)
    if placing:
        bindings = placed(bindings, placing, defs, spans, caps.locals, root, source,
                          cast(OrdersBindings, plugin))

    refs = reference_rows(caps.refs, spans, defs, local_names, typed_names, aliases,
                          caps.narrowed, caps.arities, root, plugin, source)
    imports = _imports(caps.import_nodes, defs, spans, plugin, source)
    bindings = completed_bindings(bindings, refs, raw_defs, defs, spans, local_names,
                                  caps.returns, root, plugin, source)
    impls = [
        Impl(
            impl_type_path(node_text(source, type_node)),
            name_path(node_text(source, trait_node)) if trait_node else (),
            node.start_byte, node.end_byte, node.start_point[0] + 1,
        )
        for node, type_node, trait_node in caps.impls
    ]

    errors = 0
    if root.has_error:
        errors = max(1, len(query_cursor(compiled.errors_query).captures(root).get("error", ())))
    lines = source.count(b"\n") + (1 if source and not source.endswith(b"\n") else 0)
    constraint = getattr(plugin, "build_constraint", None)
    return FileFacts(
        path, language, caps.package, lines, errors,
        tuple(defs), cast(Any, tuple(refs)), tuple(imports), tuple(bindings), tuple(impls),
        cast(StatesConstraints, plugin).build_constraint(root, source) if constraint else "",
    ), notes


def _shape_notes(tree: Any) -> list[str]:
    """What a reader should know of the tree's shape (nesting deeper than the query reads);
    ParseTimeoutError for a syntax error too wide to query."""
    notes: list[str] = []
    depth, widest_error = _sampled_shape(tree)
    if widest_error > MAX_ERROR_WIDTH:
        raise ParseTimeoutError(
            f"a syntax error of {widest_error:,} tokens side by side (pathological input?); "
            "not indexed")
    if depth > MAX_QUERY_DEPTH:
        notes.append(f"nesting at least {depth} levels deep; what lies deeper than "
                     f"{MAX_QUERY_DEPTH} is not indexed")
    return notes


def _imports(import_nodes: list[Any], defs: list[Definition], spans: list[tuple[int, int, int]],
             plugin: Language, source: bytes) -> list[Import]:
    """The imports the captured import statements make, in source order, each scoped to the
    definition it sits in."""
    import_nodes = sorted({n.start_byte: n for n in import_nodes}.values(),
                          key=lambda n: n.start_byte)
    imports: list[Import] = []
    for node, scope in zip(
        import_nodes, enclosing(spans, [n.start_byte for n in import_nodes]), strict=True
    ):
        imports.extend(plugin.decode_import(node, binding_scope(defs, scope), source))
    return imports


def _sampled_shape(tree: Any) -> tuple[int, int]:
    """The deepest of the nodes sampled evenly over the tree, and (when the tree holds syntax
    errors) the most children an ERROR node among their parents has; (0, 0) for a tree too
    small to reach either limit. An ERROR node wide enough to slow the query (over
    MAX_ERROR_WIDTH children) holds over 1 % of the nodes of any file under the size limit,
    which ERROR_SAMPLES samples all miss once in 30,000. The depth only decides the note that
    nesting past MAX_QUERY_DEPTH went unindexed (the query's start depth is bounded whatever
    it says), so a tree without errors is sampled DEPTH_SAMPLES times: a deep stretch that
    holds under 1/16 of the nodes goes without the note."""
    root = tree.root_node
    count = root.descendant_count
    errors = root.has_error
    if count <= min(MAX_QUERY_DEPTH, MAX_ERROR_WIDTH):
        return 0, 0
    cursor = tree.walk()
    goto, parent = cursor.goto_descendant, cursor.goto_parent
    deepest = widest = 0
    step = max(1, count // (ERROR_SAMPLES if errors else DEPTH_SAMPLES))
    for index in range(0, count, step):
        goto(index)
        depth = cursor.depth
        if depth > deepest:
            deepest = depth
        if errors and parent():
            node = cursor.node
            if node.is_error and node.child_count > widest:
                widest = node.child_count
    return deepest, widest


