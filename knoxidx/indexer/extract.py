"""``extract(path, source, language) -> FileFacts``: the one place syntax trees are read.

A pure function of its arguments (no database, no other files), so it is cached by content hash,
runs in worker processes and is tested in isolation. All tree reading is one tree-sitter query
per language, run in C; Python only touches the captured nodes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from operator import attrgetter, itemgetter
from types import ModuleType
from typing import Any

from knoxidx.graph.model import NodeKind
from knoxidx.indexer.facts import (
    Binding,
    Definition,
    FileFacts,
    Impl,
    Import,
    NamePath,
    Reference,
)
from knoxidx.indexer.languages import BY_NAME, query_source, ts_language
from knoxidx.indexer.name_paths import (
    CACHED_NAME_CHARS,
    MAX_REFERENCE_CHARS,
    alias_path,
    cached_bytes_name_path,
    name_path,
    reference_path,
    type_path,
)
from knoxidx.indexer.tree_parse import ParseTimeoutError, parse_tree

# Capture-name suffix -> node kind. Methods are Functions; structs and enums are Classes.
DEF_KINDS: dict[str, str] = {
    "function": NodeKind.FUNCTION.value,
    "method": NodeKind.FUNCTION.value,
    "class": NodeKind.CLASS.value,
    "struct": NodeKind.CLASS.value,
    "enum": NodeKind.CLASS.value,
    "interface": NodeKind.INTERFACE.value,
    "trait": NodeKind.INTERFACE.value,
    "type": NodeKind.TYPE.value,
    "constant": NodeKind.CONSTANT.value,
    "variable": NodeKind.VARIABLE.value,
    "field": NodeKind.VARIABLE.value,
    "module": NodeKind.MODULE.value,
}

# Query patterns start no deeper than this in the tree. tree-sitter's query cursor keeps a
# state for each enclosing node that may begin a pattern, so on pathologically deep nesting
# (10,000 nested generics, calls or blocks) a query costs depth x nodes: minutes for one file.
# Real code nests far shallower (a 2,500-file sample of the benchmark corpus: 69 levels at
# most, 1,024 nodes sampled per file); what lies deeper is not indexed, with a warning.
MAX_QUERY_DEPTH = 1000
# ... and the children of one ERROR node: tree-sitter's query cursor takes time quadratic in
# them (69,264 `(` as Python, one ERROR node at the top: 6 s per query, even `(ERROR) @e`;
# found by bench.fuzz), where a list literal of as many elements is linear. At this width a
# query of it takes ~0.1 s.
MAX_ERROR_WIDTH = 10_000
_SPACES = re.compile(r"\s+")
_TYPE_PARAMS = re.compile(r"\[[^\]]*\]")


@dataclass(slots=True)
class _Compiled:
    parser: Any
    query: Any  # the language's whole tags file: one pass over the tree, run with matches()
    errors_query: Any
    plugin: ModuleType
    roles: dict[int, tuple[str, str, str]]  # pattern index -> (role, kind, main capture)


def prepare(languages: Iterable[str]) -> None:
    """Compile the parsers and queries of ``languages`` in this process now, so that the parse
    workers it forks next inherit them compiled. Compiling the TypeScript query alone takes
    ~0.17 s (0.5 s for all seven): each worker compiled every query again on every update
    that used workers, and a long-lived writer (the watcher, a server) now compiles once."""
    for language in languages:
        _compiled(language)


@cache
def _compiled(language: str) -> _Compiled:
    from tree_sitter import Parser, Query

    lang = ts_language(language)
    return _Compiled(
        parser=Parser(lang),
        query=Query(lang, query_source(language)),
        errors_query=Query(lang, "(ERROR) @error"),
        plugin=BY_NAME[language].plugin,
        roles={},
    )


def _role(caps: dict[str, list[Any]]) -> tuple[str, str, str]:
    """What a pattern's matches are, from the capture names of one of them: (role, kind, the
    capture holding the node) — the role "def", "ref", "import", "binding.name",
    "binding.names" (a declaration binding each name the plugin's ``bound_names`` lists), "impl",
    "package", "local" (a name a function binds for itself), "global" or "ignore"."""
    for key in caps:
        head, _, tail = key.partition(".")
        if head == "definition":
            return "def", tail, key
        if head == "reference":
            return "ref", tail, key
    for key in ("import", "binding.name", "binding.names", "impl", "package", "local",
                "global"):
        if key in caps:
            return key, "", key
    return "ignore", "", ""


def extract(path: str, source: bytes, language: str) -> FileFacts:
    return extract_with_notes(path, source, language)[0]


def extract_with_notes(path: str, source: bytes, language: str) -> tuple[FileFacts, list[str]]:
    """:func:`extract`, plus what a reader should know about the result (what was left out)."""
    compiled = _compiled(language)
    plugin = compiled.plugin
    tree = parse_tree(compiled.parser, source)
    root = tree.root_node
    roles = compiled.roles
    notes: list[str] = []
    depth, widest_error = _sampled_shape(tree)
    if widest_error > MAX_ERROR_WIDTH:
        raise ParseTimeoutError(
            f"a syntax error of {widest_error:,} tokens side by side (pathological input?); "
            "not indexed")
    if depth > MAX_QUERY_DEPTH:
        notes.append(f"nesting at least {depth} levels deep; what lies deeper than "
                     f"{MAX_QUERY_DEPTH} is not indexed")

    raw_defs: dict[tuple[int, int, int], tuple[Any, str, Any, Any, Any]] = {}
    raw_refs: list[tuple[int, int, str, Any, Any]] = []
    import_nodes: list[Any] = []
    raw_bindings: list[tuple[Any, Any, bool, bool]] = []
    raw_impls: list[tuple[Any, Any, Any]] = []
    raw_locals: list[Any] = []  # names a function binds for itself
    raw_globals: list[Any] = []  # Python `global x`: not a local after all
    package = ""
    # One pass of the whole query over the tree: each pass walks every node, which costs a
    # quarter of the parse before any pattern matches.
    for pattern, caps in _cursor(compiled.query).matches(root):
        role = roles.get(pattern)
        if role is None:
            role = roles[pattern] = _role(caps)
        kind, sub, main = role
        if kind == "ref":
            node = caps[main][0]
            receiver = caps.get("receiver")  # `recv.name(...)` captured apart (Java)
            raw_refs.append((node.start_byte, node.end_byte, sub, node,
                             receiver[0] if receiver else None))
        elif kind == "def":
            node = caps[main][0]
            name_node = caps["name"][0]
            type_node = caps.get("def.type")
            if type_node is None and node.type in plugin.TYPE_AFTER_NAMES:
                declared = node.child_by_field_name("type")
                type_node = [declared] if declared is not None else None
            owner_node = caps.get("def.owner")
            key = (node.start_byte, node.end_byte, name_node.start_byte)
            previous = raw_defs.get(key)
            # The same node may match several patterns: keep the most specific reading
            # (a function beats a constant; one with a declared type beats one without).
            if previous is None or (
                (sub in ("function", "method") and previous[1] not in ("function", "method"))
                or (previous[3] is None and type_node)
            ):
                raw_defs[key] = (
                    node, sub, name_node,
                    type_node[0] if type_node else None,
                    owner_node[0] if owner_node else None,
                )
        elif kind == "import":
            import_nodes.append(caps[main][0])
        elif kind == "binding.name":
            target = caps.get("binding.type") or caps.get("binding.call")
            if target:
                # `binding.member`: the name is a member of that type (`{ board }: Props`)
                raw_bindings.append((caps[main][0], target[0], "binding.call" in caps,
                                     "binding.member" in caps))
        elif kind == "binding.names":  # `var a, b *T`, `({ a, b }: Props)`: each name bound
            names = plugin.bound_names(caps[main][0])
            target = caps.get("binding.type") or caps.get("binding.call")
            inline = caps.get("binding.object")
            if inline:  # `({ a }: { a: A })`: each name typed by its own property
                types = plugin.property_types(inline[0])
                for name_node in names:
                    typed = types.get(_text(source, name_node))
                    if typed is not None:
                        raw_bindings.append((name_node, typed, False, False))
            elif target:
                is_call = "binding.call" in caps
                is_member = "binding.member" in caps
                for name_node in names:
                    raw_bindings.append((name_node, target[0], is_call, is_member))
        elif kind == "impl":
            trait = caps.get("impl.trait")
            raw_impls.append((caps[main][0], caps["impl.type"][0], trait[0] if trait else None))
        elif kind == "local":
            raw_locals.append(caps[main][0])
        elif kind == "global":
            raw_globals.append(caps[main][0])
        elif kind == "package":
            package = plugin.package_name(_text(source, caps[main][0]))

    defs = _build_definitions(raw_defs, raw_impls, plugin, source)
    spans = [(d.start_byte, d.end_byte, i) for i, d in enumerate(defs)]
    local_names = _local_names(raw_locals, raw_globals, raw_defs, defs, spans, source)

    raw_refs.sort(key=_REF_ORDER)
    ref_scopes = _scopes(spans, [r[0] for r in raw_refs])
    refs: list[Reference] = []
    last_start = last_end = -1
    last_sub = ""
    # the hot loop of extraction (hundreds of thousands of references): short texts go
    # straight to the cached split, keyed by their bytes (most are repeats: no decoding)
    for (start, end, sub, node, receiver), scope in zip(raw_refs, ref_scopes, strict=True):
        if start == last_start and end == last_end and sub == last_sub:
            continue  # matched by two patterns
        last_start, last_end, last_sub = start, end, sub
        if end - start <= CACHED_NAME_CHARS:
            ref_path = cached_bytes_name_path(source[start:end])
        else:
            ref_path = reference_path(source, start, end)
        if receiver is not None and ref_path:
            # `recv.name(...)` captured as two nodes (Java): the receiver's path, then the name
            if receiver.end_byte - receiver.start_byte <= MAX_REFERENCE_CHARS:
                ref_path = name_path(_text(source, receiver) + "." + ref_path[-1])
            else:
                ref_path = ("?", ref_path[-1])
            node = receiver
        if ref_path:
            if (local_names and len(ref_path) == 1 and sub in plugin.LOCAL_SHADOWS
                    and _is_local(ref_path[0], scope, local_names, defs)):
                continue  # a parameter or local variable: nothing outside the function
            row, col = node.start_point
            refs.append(_new(Reference, (sub, ref_path, scope, row + 1, col)))

    import_nodes = sorted({n.start_byte: n for n in import_nodes}.values(), key=lambda n: n.start_byte)
    imports: list[Import] = []
    for node, scope in zip(
        import_nodes, _scopes(spans, [n.start_byte for n in import_nodes]), strict=True
    ):
        imports.extend(plugin.decode_import(node, _binding_scope(defs, scope)))

    raw_bindings.sort(key=lambda b: b[0].start_byte)
    bindings: list[Binding] = []
    for (name_node, type_node, is_call, is_member), scope in zip(
        raw_bindings, _scopes(spans, [b[0].start_byte for b in raw_bindings]), strict=True
    ):
        raw = _text(source, type_node)
        bound_type = name_path(raw) if is_call else type_path(raw)
        if bound_type and bound_type[0] != "?":
            name = _SPACES.sub("", _text(source, name_node))
            if is_member:  # the type of that member: the path to it, resolved to its type
                bound_type = (*bound_type, name)
            bindings.append(Binding(_binding_scope(defs, scope), name, bound_type, is_call))

    impls = [
        Impl(
            name_path(_text(source, type_node)),
            name_path(_text(source, trait_node)) if trait_node else (),
            node.start_byte, node.end_byte, node.start_point[0] + 1,
        )
        for node, type_node, trait_node in raw_impls
    ]

    errors = 0
    if root.has_error:
        errors = max(1, len(_cursor(compiled.errors_query).captures(root).get("error", ())))
    lines = source.count(b"\n") + (1 if source and not source.endswith(b"\n") else 0)
    return FileFacts(
        path, language, package, lines, errors,
        tuple(defs), tuple(refs), tuple(imports), tuple(bindings), tuple(impls),
    ), notes


def _text(source: bytes, node: Any) -> str:
    """A node's text, sliced from the source: ``node.text`` would read it back through the
    parse callback, 256 bytes a call."""
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _cursor(query: Any) -> Any:
    from tree_sitter import QueryCursor

    cursor = QueryCursor(query)
    cursor.set_max_start_depth(MAX_QUERY_DEPTH)
    return cursor


def _sampled_shape(tree: Any) -> tuple[int, int]:
    """The deepest of the nodes sampled evenly over the tree, and (when the tree holds syntax
    errors) the most children an ERROR node among their parents has; (0, 0) for a tree too
    small to reach either limit. A deep stretch that no sample hits holds under 1/256 of the
    nodes, too few to make the queries slow; an ERROR node wide enough to (over MAX_ERROR_WIDTH
    children) holds over 1 % of the nodes of any file under the size limit, which 1,024
    samples all miss once in 30,000."""
    root = tree.root_node
    count = root.descendant_count
    errors = root.has_error
    if count <= min(MAX_QUERY_DEPTH, MAX_ERROR_WIDTH):
        return 0, 0
    cursor = tree.walk()
    goto, parent = cursor.goto_descendant, cursor.goto_parent
    deepest = widest = 0
    step = max(1, count // (1024 if errors else 256))
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


_new = tuple.__new__  # a NamedTuple record without its Python-level __new__
_REF_ORDER = itemgetter(0, 1, 2)  # (start, end, kind): nodes themselves do not compare


def _build_definitions(
    raw_defs: dict[tuple[int, int, int], tuple[Any, str, Any, Any, Any]],
    raw_impls: list[tuple[Any, Any, Any]],
    plugin: ModuleType,
    source: bytes,
) -> list[Definition]:
    impl_spans = sorted(
        (node.start_byte, node.end_byte, name_path(_text(source, type_node)))
        for node, type_node, _ in raw_impls
    )
    defs: list[Definition] = []
    stack: list[int] = []
    for (start, end, _), (node, sub, name_node, type_node, owner_node) in sorted(
        raw_defs.items(), key=lambda item: (item[0][0], -item[0][1])
    ):
        name = _text(source, name_node)
        kind = plugin.classify(sub, name, node)
        if kind is None:
            continue
        # what ends before this one starts is no parent of it; nor is a definition of the
        # same node (`var a, b int` defines a and b side by side, not b inside a)
        while stack and (defs[stack[-1]].end_byte <= start
                         or (defs[stack[-1]].start_byte == start
                             and defs[stack[-1]].end_byte == end)):
            stack.pop()
        parent = stack[-1] if stack else -1
        if sub == "field" and parent >= 0 and defs[parent].kind == _FUNCTION:
            parent = defs[parent].parent  # `constructor(private x: T)` declares a field
        owner = ""
        if owner_node is not None:
            owner_text = _TYPE_PARAMS.sub("", _text(source, owner_node))
            owner_path = name_path(owner_text.lstrip("*&").strip())
            owner = owner_path[-1] if owner_path else ""
        elif impl_spans and (parent < 0 or defs[parent].kind == _FUNCTION):
            for impl_start, impl_end, impl_type in impl_spans:
                if impl_start <= start and end <= impl_end and impl_type:
                    owner = impl_type[-1]
        if parent >= 0:
            qualname = f"{defs[parent].qualname}.{name}"
        elif owner:
            qualname = f"{owner}.{name}"
        else:
            qualname = name
        type_hint: NamePath = ()
        if type_node is not None:
            text = _text(source, type_node)
            type_hint = alias_path(text) if kind == _TYPE else type_path(text)
        end_row, end_column = node.end_point
        defs.append(_new(Definition, (
            kind, name, qualname, parent,
            node.start_point[0] + 1, end_row + 1 - (end_column == 0),
            start, end,
            _signature(node, source), plugin.doc_comment(node, source),
            plugin.is_exported(node, name, parent >= 0), owner, type_hint,
        )))
        stack.append(len(defs) - 1)
    return defs


_VALUE_KINDS = frozenset({NodeKind.VARIABLE.value, NodeKind.CONSTANT.value})
_FUNCTION = NodeKind.FUNCTION.value
_TYPE = NodeKind.TYPE.value


def _local_names(
    raw_locals: list[Any], raw_globals: list[Any], raw_defs: dict[tuple[int, int, int], Any],
    defs: list[Definition], spans: list[tuple[int, int, int]], source: bytes,
) -> dict[int, set[str]]:
    """The names each definition binds for itself (parameters, local variables), by the index
    of the innermost definition around them. Not the names of definitions themselves (a nested
    `const f = () => ...` stays a definition, found as one), nor a name that a nested
    definition also binds there (`def f(): ...` in one branch, `f = None` in the other: the
    definition is what a reference can be shown to mean), nothing at the top level (a
    module-level loop variable is a module name), and not what Python's `global` hands back."""
    if not raw_locals:
        return {}
    def_names = {key[2] for key in raw_defs}
    nodes = sorted((n for n in raw_locals if n.start_byte not in def_names),
                   key=_START_BYTE)
    names: dict[int, set[str]] = {}
    for node, scope in zip(nodes, _scopes(spans, [n.start_byte for n in nodes]), strict=True):
        if scope >= 0:
            names.setdefault(scope, set()).add(_text(source, node))
    if names:
        for d in defs:
            bound = names.get(d.parent)
            if bound is not None:
                bound.discard(d.name)
    if raw_globals:
        nodes = sorted(raw_globals, key=_START_BYTE)
        for node, scope in zip(nodes, _scopes(spans, [n.start_byte for n in nodes]),
                               strict=True):
            names.get(scope, set()).discard(_text(source, node))
    return names


def _is_local(name: str, scope: int, local_names: dict[int, set[str]],
              defs: list[Definition]) -> bool:
    """Whether ``name`` at ``scope`` is bound by the definition there or one around it."""
    while scope >= 0:
        bound = local_names.get(scope)
        if bound is not None and name in bound:
            return True
        scope = defs[scope].parent
    return False


_START_BYTE = attrgetter("start_byte")


def _binding_scope(defs: list[Definition], scope: int) -> int:
    """Names bound inside a variable's initialiser (``const x = require(...)``) belong to the
    scope the variable is declared in."""
    while scope >= 0 and defs[scope].kind in _VALUE_KINDS:
        scope = defs[scope].parent
    return scope


def _signature(node: Any, source: bytes) -> str:
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    end = min(end, node.start_byte + 400)
    text = source[node.start_byte : end].decode("utf-8", "replace")
    if body is None:
        text = text.split("\n", 1)[0]
    return _SPACES.sub(" ", text).strip().rstrip("{:").rstrip()


def _scopes(spans: list[tuple[int, int, int]], positions: list[int]) -> list[int]:
    """For each position (sorted), the index of the innermost span containing it, or -1.

    ``spans`` are (start, end, index) sorted by start with enclosing spans first: one merge
    pass instead of a search per position.
    """
    result: list[int] = []
    stack: list[tuple[int, int, int]] = []
    i = 0
    n = len(spans)
    for pos in positions:
        while i < n and spans[i][0] <= pos:
            span = spans[i]
            while stack and stack[-1][1] <= span[0]:
                stack.pop()
            stack.append(span)
            i += 1
        while stack and stack[-1][1] <= pos:
            stack.pop()
        result.append(stack[-1][2] if stack else -1)
    return result
