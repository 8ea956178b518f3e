"""``extract(path, source, language) -> FileFacts``: the one place syntax trees are read.

A pure function of its arguments (no database, no other files), so it is cached by content hash,
runs in worker processes and is tested in isolation. All tree reading is one tree-sitter query
per language, run in C; Python only touches the captured nodes.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

from knoxidx.graph.model import NodeKind
from knoxidx.indexer.facts import Binding, Definition, FileFacts, Impl, Import, NamePath, Reference
from knoxidx.indexer.languages import BY_NAME, query_source, ts_language

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

# Files this large are parsed with a deadline so a pathological input cannot hang a worker.
DEADLINE_BYTES = 256 * 1024
PARSE_SECONDS_PER_MB = 4.0

_SUPER_CALL = re.compile(r"\bsuper\s*\([^()]*\)")
_GENERIC_ARGS = re.compile(r"::<[^<>]*(?:<[^<>]*>[^<>]*)*>|<[^<>()]*(?:<[^<>()]*>[^<>()]*)*>")
_SEPARATOR = re.compile(r"\s*(?:\?\.|!\.|::|->|\.)\s*")
_IDENTIFIER = re.compile(r"(?:[^\W\d]|[$#])[\w$]*\Z")
_CALL_SEGMENT = re.compile(r"((?:[^\W\d]|[$#])[\w$]*)\s*\(.*\)\Z", re.DOTALL)
_SPACES = re.compile(r"\s+")


class ParseTimeoutError(Exception):
    """tree-sitter did not finish within the deadline for this file's size."""


def name_path(text: str) -> NamePath:
    """Split an expression naming something into its segments: ``a.b.c`` -> ("a", "b", "c").

    A call inside the chain keeps its name with "()" (``make().run`` -> ("make()", "run")), so
    the resolver can follow return types. A receiver that is neither (``a[0].g``, ``(x).g``)
    becomes "?": the path keeps the longest trailing run of names. ``super()`` is "super".
    """
    if "(" in text:
        text = _SUPER_CALL.sub("super", text)
    if "<" in text:
        text = _GENERIC_ARGS.sub("", text)
    parts = _split_top_level(text.strip())
    i = len(parts)
    while i > 0:
        part = parts[i - 1]
        if _IDENTIFIER.match(part):
            i -= 1
            continue
        call = _CALL_SEGMENT.match(part)
        if call and i < len(parts):
            parts[i - 1] = call.group(1) + "()"
            i -= 1
            continue
        break
    if i == len(parts):
        return ()
    return tuple(parts) if i == 0 else ("?", *parts[i:])


def _split_top_level(text: str) -> list[str]:
    """Split at member separators (``.``, ``?.``, ``::``, ``->``) outside brackets."""
    if "(" not in text and "[" not in text:
        return _SEPARATOR.split(text)
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            sep = _SEPARATOR.match(text, i)
            if sep and sep.end() > i:
                parts.append(text[start:i].strip())
                start = i = sep.end()
                continue
        i += 1
    parts.append(text[start:].strip())
    return parts


@dataclass(slots=True)
class _Compiled:
    parser: Any
    query: Any
    errors_query: Any
    plugin: ModuleType
    roles: dict[int, tuple[str, str]]


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


def _role(caps: dict[str, list[Any]]) -> tuple[str, str]:
    for key in caps:
        head, _, tail = key.partition(".")
        if head == "definition":
            return "def", tail
        if head == "reference":
            return "ref", tail
    for key in ("import", "binding.name", "impl", "package"):
        if key in caps:
            return key, ""
    return "ignore", ""


def _parse(compiled: _Compiled, source: bytes) -> Any:
    if len(source) < DEADLINE_BYTES:
        return compiled.parser.parse(source)
    deadline = time.monotonic() + 1.0 + PARSE_SECONDS_PER_MB * len(source) / 1e6
    size = len(source)

    def read(offset: int, _point: Any) -> bytes:
        return source[offset : offset + 65536] if offset < size else b""

    def progress(_offset: int, _has_error: bool) -> bool:
        return time.monotonic() > deadline  # True cancels the parse

    tree = compiled.parser.parse(read, progress_callback=progress)
    if tree is None:
        compiled.parser.reset()
        raise ParseTimeoutError(f"parse exceeded its deadline ({size} bytes)")
    return tree


def extract(path: str, source: bytes, language: str) -> FileFacts:
    compiled = _compiled(language)
    plugin = compiled.plugin
    tree = _parse(compiled, source)
    root = tree.root_node
    roles = compiled.roles

    from tree_sitter import QueryCursor

    raw_defs: dict[tuple[int, int, int], tuple[Any, str, Any, Any, Any]] = {}
    raw_refs: dict[tuple[int, int, str], Any] = {}
    import_nodes: list[Any] = []
    raw_bindings: list[tuple[Any, Any, bool]] = []
    raw_impls: list[tuple[Any, Any, Any]] = []
    package = ""
    for pattern, caps in QueryCursor(compiled.query).matches(root):
        role = roles.get(pattern)
        if role is None:
            role = roles[pattern] = _role(caps)
        kind, sub = role
        if kind == "ref":
            node = caps["reference." + sub][0]
            raw_refs.setdefault((node.start_byte, node.end_byte, sub), node)
        elif kind == "def":
            node = caps["definition." + sub][0]
            name_node = caps["name"][0]
            type_node = caps.get("def.type")
            owner_node = caps.get("def.owner")
            key = (node.start_byte, node.end_byte, name_node.start_byte)
            if key not in raw_defs:
                raw_defs[key] = (
                    node, sub, name_node,
                    type_node[0] if type_node else None,
                    owner_node[0] if owner_node else None,
                )
        elif kind == "import":
            import_nodes.append(caps["import"][0])
        elif kind == "binding.name":
            target = caps.get("binding.type") or caps.get("binding.call")
            if target:
                raw_bindings.append((caps["binding.name"][0], target[0], "binding.call" in caps))
        elif kind == "impl":
            trait = caps.get("impl.trait")
            raw_impls.append((caps["impl"][0], caps["impl.type"][0], trait[0] if trait else None))
        elif kind == "package":
            package = plugin.package_name(caps["package"][0].text.decode("utf-8", "replace"))

    defs = _build_definitions(raw_defs, raw_impls, plugin, source)
    spans = [(d.start_byte, d.end_byte, i) for i, d in enumerate(defs)]

    ref_items = sorted(raw_refs.items())
    ref_scopes = _scopes(spans, [key[0] for key, _ in ref_items])
    refs: list[Reference] = []
    for ((_, _, sub), node), scope in zip(ref_items, ref_scopes, strict=True):
        ref_path = name_path(node.text.decode("utf-8", "replace"))
        if ref_path:
            point = node.start_point
            refs.append(Reference(sub, ref_path, scope, point[0] + 1, point[1]))

    import_nodes.sort(key=lambda n: n.start_byte)
    imports: list[Import] = []
    for node, scope in zip(
        import_nodes, _scopes(spans, [n.start_byte for n in import_nodes]), strict=True
    ):
        imports.extend(plugin.decode_import(node, scope))

    raw_bindings.sort(key=lambda b: b[0].start_byte)
    bindings: list[Binding] = []
    for (name_node, type_node, is_call), scope in zip(
        raw_bindings, _scopes(spans, [b[0].start_byte for b in raw_bindings]), strict=True
    ):
        type_path = name_path(type_node.text.decode("utf-8", "replace"))
        if type_path and type_path[0] != "?":
            name = _SPACES.sub("", name_node.text.decode("utf-8", "replace"))
            bindings.append(Binding(scope, name, type_path, is_call))

    impls = [
        Impl(
            name_path(type_node.text.decode("utf-8", "replace")),
            name_path(trait_node.text.decode("utf-8", "replace")) if trait_node else (),
            node.start_byte, node.end_byte, node.start_point[0] + 1,
        )
        for node, type_node, trait_node in raw_impls
    ]

    errors = 0
    if root.has_error:
        errors = max(1, len(QueryCursor(compiled.errors_query).captures(root).get("error", ())))
    lines = source.count(b"\n") + (1 if source and not source.endswith(b"\n") else 0)
    return FileFacts(
        path, language, package, lines, errors,
        tuple(defs), tuple(refs), tuple(imports), tuple(bindings), tuple(impls),
    )


def _build_definitions(
    raw_defs: dict[tuple[int, int, int], tuple[Any, str, Any, Any, Any]],
    raw_impls: list[tuple[Any, Any, Any]],
    plugin: ModuleType,
    source: bytes,
) -> list[Definition]:
    impl_spans = sorted(
        (node.start_byte, node.end_byte, name_path(type_node.text.decode("utf-8", "replace")))
        for node, type_node, _ in raw_impls
    )
    defs: list[Definition] = []
    stack: list[int] = []
    for (start, end, _), (node, sub, name_node, type_node, owner_node) in sorted(
        raw_defs.items(), key=lambda item: (item[0][0], -item[0][1])
    ):
        name = name_node.text.decode("utf-8", "replace")
        kind = plugin.classify(sub, name, node)
        if kind is None:
            continue
        while stack and defs[stack[-1]].end_byte <= start:
            stack.pop()
        parent = stack[-1] if stack else -1
        owner = ""
        if owner_node is not None:
            owner_path = name_path(owner_node.text.decode("utf-8", "replace").lstrip("*&"))
            owner = owner_path[-1] if owner_path else ""
        elif impl_spans and (parent < 0 or defs[parent].kind == NodeKind.FUNCTION.value):
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
            type_hint = name_path(type_node.text.decode("utf-8", "replace"))
            if type_hint and type_hint[0] == "?":
                type_hint = ()
        defs.append(
            Definition(
                kind, name, qualname, parent,
                node.start_point[0] + 1, node.end_point[0] + 1 - (node.end_point[1] == 0),
                start, end,
                _signature(node, source), plugin.doc_comment(node, source),
                plugin.is_exported(node, name, parent >= 0), owner, type_hint,
            )
        )
        stack.append(len(defs) - 1)
    return defs


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
