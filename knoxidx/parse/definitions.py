"""What holds what in one file's facts: the definitions nested in one another (with their
qualified names, owners, signatures and declared types), the names a function binds for itself,
and which definition encloses a position. Called by :func:`knoxidx.parse.extract.extract`
on the nodes its query captured; a pure function of them, like extraction itself."""

from __future__ import annotations

import re
from operator import attrgetter
from typing import Any

from knoxidx.core.facts import Definition, NamePath
from knoxidx.core.model import NodeKind
from knoxidx.languages.protocol import Language
from knoxidx.parse.name_paths import alias_path, name_path, type_path
from knoxidx.parse.signatures import type_signature_of

_TYPE_PARAMS = re.compile(r"\[[^\]]*\]")
_REFERENCE = re.compile(r"(?:&\s*(?:'\w+\s+)?(?:mut\s+)?)+")


def impl_type_path(text: str) -> NamePath:
    """The type an `impl` block is for: `impl IntoIterator for &'a Fields` is Fields's (its
    methods take a `&Fields` as `self`)."""
    return name_path(_REFERENCE.sub("", text, count=1) if text.startswith("&") else text)
_new = tuple.__new__  # a NamedTuple record without its Python-level __new__

# Capture-name suffix -> node kind. Methods are Functions; structs and enums are Classes.
# (Here, not in extract: each language's classify reads it for every definition, at module
# level, where an import inside classify ran on every call.)
DEF_KINDS: dict[str, str] = {
    "function": NodeKind.FUNCTION.value,
    "method": NodeKind.FUNCTION.value,
    "class": NodeKind.CLASS.value,
    "anonymous": NodeKind.CLASS.value,  # a class without a name of its own (see ANONYMOUS)
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


def node_text(source: bytes, node: Any) -> str:
    """A node's text, sliced from the source: ``node.text`` would read it back through the
    parse callback, 256 bytes a call."""
    return span_text(source, node.start_byte, node.end_byte)


def span_text(source: bytes, start: int, end: int) -> str:
    """The text of ``source[start:end]`` (a capture the native matches gave as a span)."""
    return source[start:end].decode("utf-8", "replace")




def outermost_first(item: tuple[tuple[int, int, int], Any]) -> tuple[int, int]:
    """The order of ``raw_defs`` items in which a definition comes before those inside it:
    by start, the longer first."""
    return item[0][0], -item[0][1]


def build_definitions(
    raw_defs: dict[tuple[int, int, int], tuple[Any, str, Any, Any, Any]],
    raw_impls: list[tuple[Any, Any, Any]],
    plugin: Language,
    source: bytes,
) -> list[Definition]:
    impl_spans = sorted(
        (node.start_byte, node.end_byte, impl_type_path(node_text(source, type_node)))
        for node, type_node, _ in raw_impls
    )
    defs: list[Definition] = []
    stack: list[int] = []
    anonymous: dict[int, int] = {}  # how many anonymous classes each class holds so far
    for (start, end, _), (node, sub, name_node, type_node, owner_node) in sorted(
        raw_defs.items(), key=outermost_first
    ):
        name = node_text(source, name_node)
        kind = plugin.classify(sub, name, node, source)
        if kind is None:
            continue
        # what ends before this one starts is no parent of it; nor is a definition of the
        # same node (`var a, b int` defines a and b side by side, not b inside a)
        while stack and (defs[stack[-1]].end_byte <= start
                         or (defs[stack[-1]].start_byte == start
                             and defs[stack[-1]].end_byte == end)):
            stack.pop()
        parent = stack[-1] if stack else -1
        if sub == ANONYMOUS:
            name = _anonymous_name(defs, parent, anonymous)
        if sub == "field" and parent >= 0 and defs[parent].kind == _FUNCTION:
            parent = defs[parent].parent  # `constructor(private x: T)` declares a field
        owner = ""
        if owner_node is not None:
            owner_text = _TYPE_PARAMS.sub("", node_text(source, owner_node))
            owner_path = name_path(owner_text.lstrip("*&").strip())
            owner = owner_path[-1] if owner_path else ""
        elif impl_spans:
            # an impl inside the parent (a module, a function): a function nested in one of
            # the impl's methods is that method's helper, no method of the type
            inner_from = defs[parent].start_byte if parent >= 0 else -1
            for impl_start, impl_end, impl_type in impl_spans:
                if inner_from < impl_start <= start and end <= impl_end and impl_type:
                    owner = impl_type[-1]
        if owner:
            qualname = (f"{defs[parent].qualname}.{owner}.{name}" if parent >= 0
                        else f"{owner}.{name}")
        elif parent >= 0:
            qualname = f"{defs[parent].qualname}.{name}"
        else:
            qualname = name
        type_hint: NamePath = ()
        if type_node is not None:
            text = node_text(source, type_node)
            square = plugin.SQUARE_TYPE_ARGS
            if kind == _TYPE:
                type_hint = alias_path(text, square)
            elif kind == _FUNCTION:  # a return type reads through wrappers: `f()?`
                type_hint = declared_type(plugin, text, returned=True)
            else:
                type_hint = declared_type(plugin, text)
        end_row, end_column = node.end_point
        defs.append(_new(Definition, (
            kind, name, qualname, parent,
            node.start_point[0] + 1, end_row + 1 - (end_column == 0),
            start, end,
            _anonymous_signature(node, source) if sub == ANONYMOUS else signature(node, source),
            plugin.doc_comment(node, source),
            plugin.is_exported(node, name, parent >= 0, source), owner, type_hint,
            0, 0, 0,  # complexity: filled in for functions (``complexity.with_complexity``)
            # None (no signature) is stored as (); never a union with () in a return type,
            # which the compiled build checks against the wrong member
            (plugin.signature_of(node, source) if kind == _FUNCTION
             else type_signature_of(node, source) if kind in _GENERIC_KINDS else None) or (),
        )))
        stack.append(len(defs) - 1)
    return defs


# A class body with no name of its own (Java's `new T() {..}`): named as javac names it, its
# innermost enclosing class's name, `$` and its rank among that class's anonymous ones in
# source order (`Outer$1`, `Outer$1$1` inside it); its ``type_hint`` is its base, the type
# its `new` names (``ScopeResolver.bases_of``).
ANONYMOUS = "anonymous"


def is_anonymous(d: Definition) -> bool:
    """Whether ``d`` is an anonymous class (see ``ANONYMOUS``): no other class has a type."""
    return d.kind == _CLASS and bool(d.type_hint)


def _anonymous_name(defs: list[Definition], parent: int, counts: dict[int, int]) -> str:
    """The name of the next anonymous class inside ``parent`` (see ``ANONYMOUS``)."""
    holder = parent
    while holder >= 0 and defs[holder].kind not in _CLASS_KINDS:
        holder = defs[holder].parent
    rank = counts[holder] = counts.get(holder, 0) + 1
    return f"{defs[holder].name if holder >= 0 else ''}${rank}"


def _anonymous_signature(body: Any, source: bytes) -> str:
    """What an anonymous class's body follows: `new T<A>(args)`, an enum constant's `A(args)`."""
    start = body.parent.start_byte if body.parent is not None else body.start_byte
    return " ".join(span_text(source, start, min(body.start_byte, start + 400)).split())


_VALUE_KINDS = frozenset({NodeKind.VARIABLE.value, NodeKind.CONSTANT.value})
_CLASS_KINDS = frozenset({NodeKind.CLASS.value, NodeKind.INTERFACE.value})
_FUNCTION = NodeKind.FUNCTION.value
_CLASS = NodeKind.CLASS.value
_TYPE = NodeKind.TYPE.value
_GENERIC_KINDS = frozenset({NodeKind.CLASS.value, NodeKind.INTERFACE.value, _TYPE})


# by (family, returned), read once: a getattr that misses raises (and formats) an
# AttributeError, and declared types are read for most definitions and bindings of the
# languages without them
_OPAQUE_WRAPPERS: dict[tuple[str, bool], re.Pattern[str] | None] = {}


def declared_type(plugin: Language, declared: str, returned: bool = False) -> NamePath:
    """The type a value declared ``declared`` has, whose methods it shows: through pointers,
    references and wrappers (``type_path``), except the wrappers the language's
    ``OPAQUE_WRAPPERS`` match, which are that type themselves (Rust's `Option<T>` and
    `Mutex<T>` have no `Deref`: `x.lock()` is the Mutex's, `x.clone()` the Option's), the
    last wrapper the match opens (`Arc<Mutex<T>>` derefs to the Mutex). ``returned``: a
    function's return type, read through all but its ``OPAQUE_RESULTS`` (`f()?`)."""
    key = (plugin.FAMILY, returned)
    if key in _OPAQUE_WRAPPERS:
        opaque = _OPAQUE_WRAPPERS[key]
    else:
        opaque = _OPAQUE_WRAPPERS[key] = getattr(
            plugin, "OPAQUE_RESULTS" if returned else "OPAQUE_WRAPPERS", None)
    matched = opaque.match(declared) if opaque is not None else None
    if matched is None:
        return type_path(declared, plugin.SQUARE_TYPE_ARGS)
    opened = declared[:matched.end()].rstrip().removesuffix("<").rpartition("<")[2]
    return type_path(opened.rstrip(), plugin.SQUARE_TYPE_ARGS)


def bound_locals(
    raw_locals: list[tuple[int, int]], raw_globals: list[Any],
    raw_defs: dict[tuple[int, int, int], Any], defs: list[Definition],
    spans: list[tuple[int, int, int]], source: bytes,
) -> dict[int, set[str]]:
    """The names each definition binds for itself (parameters, local variables), by the index
    of the innermost definition around them. Not the names of definitions themselves (a nested
    `const f = () => ...` stays a definition, found as one), nor a name that a nested
    definition also binds there (`def f(): ...` in one branch, `f = None` in the other: the
    definition is what a reference can be shown to mean), nothing at the top level (a
    module-level loop variable is a module name), and not what Python's `global` hands back.
    ``raw_locals``: the (start, end) bytes of each name bound."""
    if not raw_locals:
        return {}
    def_names = {key[2] for key in raw_defs}
    bound = sorted(span for span in raw_locals if span[0] not in def_names)
    names: dict[int, set[str]] = {}
    for (start, end), scope in zip(bound, enclosing(spans, [b[0] for b in bound]), strict=True):
        # a class body binds nothing its methods see (nor do the parameters of a signature
        # that is no definition of its own, an `@overload` stub's)
        if scope >= 0 and defs[scope].kind not in _CLASS_KINDS:
            names.setdefault(scope, set()).add(span_text(source, start, end))
    if names:
        for d in defs:
            taken = names.get(d.parent)
            if taken is not None:
                taken.discard(d.name)
    if raw_globals:
        nodes = sorted(raw_globals, key=_START_BYTE)
        for node, scope in zip(nodes, enclosing(spans, [n.start_byte for n in nodes]),
                               strict=True):
            names.get(scope, set()).discard(node_text(source, node))
    return names


def is_local(name: str, scope: int, local_names: dict[int, set[str]],
              defs: list[Definition]) -> bool:
    """Whether ``name`` at ``scope`` is bound by the definition there or one around it."""
    while scope >= 0:
        bound = local_names.get(scope)
        if bound is not None and name in bound:
            return True
        scope = defs[scope].parent
    return False


_START_BYTE = attrgetter("start_byte")


def binding_scope(defs: list[Definition], scope: int) -> int:
    """Names bound inside a variable's initialiser (``const x = require(...)``) belong to the
    scope the variable is declared in."""
    while scope >= 0 and defs[scope].kind in _VALUE_KINDS:
        scope = defs[scope].parent
    return scope


def signature(node: Any, source: bytes) -> str:
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    end = min(end, node.start_byte + 400)
    raw = source[node.start_byte : end]
    if body is not None and (b"#" in raw or b"//" in raw or b"/*" in raw):
        end = min(end, _header_end(node, body))  # a comment before the body is not the header
        raw = source[node.start_byte : end]
    text = raw.decode("utf-8", "replace")
    if body is None:
        text, _, rest = text.partition("\n")
        # an annotation's own line (`@DefinedBy(Api.X)` above `void accept(V v);`) is no
        # header: the line after it is
        while rest and text.lstrip().startswith("@") and text.count("(") == text.count(")"):
            text, _, rest = rest.partition("\n")
    # whitespace runs as one space (str.split, in C: a regex cost ~4 % of extraction)
    return " ".join(text.split()).rstrip("{:").rstrip()


def _header_end(node: Any, body: Any) -> int:
    """Where the header ends: after its last part before ``body`` that is not a comment."""
    end = node.start_byte
    for child in node.children:
        if child.start_byte >= body.start_byte:
            break
        if "comment" not in child.type:
            end = child.end_byte
    return end if end > node.start_byte else body.start_byte


def enclosing(spans: list[tuple[int, int, int]], positions: list[int]) -> list[int]:
    """For each position (sorted), the index of the innermost span containing it, or -1.

    ``spans`` are (start, end, index) sorted by start with enclosing spans first: one merge
    pass instead of a search per position. The next span's start and the innermost open
    span's end are kept as plain ints, so that most positions cost two comparisons (indexing
    the tuples for each position was 37 % of this merge's instructions).
    """
    result: list[int] = []
    append = result.append
    stack: list[tuple[int, int, int]] = []
    i = 0
    n = len(spans)
    next_start = spans[0][0] if n else _NEVER
    top_end = _NEVER  # the end of the innermost open span (stack[-1])
    top = -1  # ... and its index
    for pos in positions:
        while pos >= next_start:
            while top_end <= next_start:  # what ends before this span starts is closed
                stack.pop()
                top_end = stack[-1][1] if stack else _NEVER
            span = spans[i]
            stack.append(span)
            _, top_end, top = span
            i += 1
            next_start = spans[i][0] if i < n else _NEVER
        if pos >= top_end:
            stack.pop()
            while stack and stack[-1][1] <= pos:
                stack.pop()
            _, top_end, top = stack[-1] if stack else _NO_SPAN
        append(top)
    return result


_NEVER = 1 << 62  # past every byte offset (tree-sitter's are 32-bit)
_NO_SPAN = (-1, _NEVER, -1)
