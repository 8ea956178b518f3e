"""A file's references as rows in :class:`Reference`'s field order, from the query's matches
of them: each one's name path as its source writes it, read through a receiver captured
apart, an anonymous class, a narrowed name, a local copying a function, and each one's
scope, site and call arguments; a local's name is no reference of anything outside its
function.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from knoxidx.core.facts import ITEMS_HEAD, Definition, NamePath, RefKind
from knoxidx.languages.protocol import Language
from knoxidx.parse.binding_sites import in_own_value
from knoxidx.parse.definitions import (
    declared_type,
    enclosing,
    is_anonymous,
    is_local,
    node_text,
    span_text,
)
from knoxidx.parse.name_paths import (
    CACHED_NAME_CHARS,
    MAX_REFERENCE_CHARS,
    indexed_path,
    name_path,
    reference_path,
    short_reference,
)


def reference_rows(raw_refs: list[tuple[int, int, int, str, int, int, int, int]],
                   spans: list[tuple[int, int, int]], defs: list[Definition],
                   local_names: dict[int, set[str]], typed_names: list[tuple[str, int]],
                   aliases: dict[tuple[int, str], NamePath],
                   raw_narrowed: list[tuple[int, int, str, Any]],
                   arities: dict[int, tuple[int, tuple[str, ...]]], root: Any,
                   plugin: Language, source: bytes
                   ) -> list[tuple[str, NamePath, int, int, int, int, tuple[str, ...]]]:
    """The references' rows, in source order, from ``raw_refs`` (see ``read_matches``), whose
    list this sorts: each expression once, in its most specific reading."""
    raw_refs.sort(key=_FIRST)  # integers compared, no key tuples made
    ref_scopes = enclosing(spans, [r[1] for r in raw_refs])
    refs: list[tuple[str, NamePath, int, int, int, int, tuple[str, ...]]] = []  # Reference's
    last_start = last_end = -1
    last_sub = ""
    # `raw.shutdown()` on a local `raw` is a value's method, never the module `raw`'s function
    # (Rust writes that `raw::shutdown()`); a local with a typed binding keeps its name for it
    untyped_local_heads = getattr(plugin, "LOCAL_HEADS_ARE_VALUES", False) and bool(local_names)
    typed_scopes: dict[int, set[str]] = {}  # like local_names: the locals of known type
    if untyped_local_heads:
        for name, name_scope in typed_names:
            typed_scopes.setdefault(name_scope, set()).add(name)
    narrowed = _Narrowings(raw_narrowed, plugin, source) if raw_narrowed else None
    # `xs[i].run()`: a member of an element of xs (name_paths.indexed_path, or the plugin's)
    indexed_receiver = getattr(plugin, "indexed_receiver", None)
    if indexed_receiver is None and getattr(plugin, "INDEXES_ELEMENTS", False):
        indexed_receiver = indexed_path
    # `Outer.this.m()` (Java): the enclosing class's instance, read as `Outer().m`
    qualified_self: str = getattr(plugin, "QUALIFIED_SELF", "")
    # a receiver captured apart that names a type, whose member is one of a value of it (Go's
    # `T{name: v}`: T's field name): read as a call of the type (`T().name`), a value of it
    receivers_are_types: bool = getattr(plugin, "RECEIVERS_ARE_TYPES", False)
    # a receiver ending where an anonymous class's body ends is its creation: `new T() {..}.m()`
    anonymous = {d.end_byte: d.name for d in defs if is_anonymous(d)}
    # `x := x(v)`: a declaration whose value does not see the names it declares (Go's `:=`)
    own_values: frozenset[str] = getattr(plugin, "OWN_VALUE_DECLARATIONS", frozenset())
    # the hot loop of extraction (hundreds of thousands of references): short texts go
    # straight to the cached split, keyed by their bytes (most are repeats: no decoding)
    for i, (_, start, end, sub, row, col, receiver_start, receiver_end) in enumerate(raw_refs):
        scope = ref_scopes[i]  # (indexed: zip's tuples go through the iterator protocol)
        if start == last_start and end == last_end and (sub == last_sub or sub == _VALUE):
            # matched by two patterns; a value reading adds nothing to a more specific reading
            # of the same expression (every other kind sorts before "value")
            continue
        last_start, last_end, last_sub = start, end, sub
        if end - start <= CACHED_NAME_CHARS:
            ref_path, spans_lines = short_reference(source[start:end])
        else:
            ref_path = reference_path(source, start, end)
            spans_lines = source.find(b"\n", start, end) >= 0
        if receiver_start >= 0 and ref_path:
            # `recv.name(...)` captured as two nodes (Java): the receiver's path, then the name
            created = anonymous.get(receiver_end) if anonymous else None
            if created is not None:  # a member of the anonymous class: its own or its base's
                ref_path = (created + "()", ref_path[-1])
            elif receiver_end - receiver_start <= MAX_REFERENCE_CHARS:
                receiver = span_text(source, receiver_start, receiver_end)
                if receivers_are_types:
                    receiver += "()"
                member = ref_path[-1]
                ref_path = name_path(receiver + "." + member)
                if ref_path and ref_path[0] == "?" and indexed_receiver is not None:
                    # `addrs[i].getHostName()`: a member of an element of addrs
                    ref_path = indexed_receiver(receiver + "." + member) or ref_path
            else:
                ref_path = ("?", ref_path[-1])
            if sub == _NEW and ref_path[0] == "?":
                ref_path = ref_path[-1:]  # `(..).new Inner()`: the inner class seen from here
        if ref_path:
            if (ref_path[0] == "?" and indexed_receiver is not None
                    and end - start <= MAX_REFERENCE_CHARS):
                # `xs[i].run()`: a member of an element of xs (else the receiver is unknown)
                ref_path = indexed_receiver(span_text(source, start, end)) or ref_path
            if qualified_self and len(ref_path) > 2 and qualified_self in ref_path:
                ref_path = _through_qualified_self(ref_path, qualified_self)
            if narrowed is not None and len(ref_path) > 1 and ref_path[0] in narrowed.names:
                ref_path = narrowed.path(ref_path, start)
            if (local_names and len(ref_path) == 1 and sub in plugin.LOCAL_SHADOWS
                    and is_local(ref_path[0], scope, local_names, defs)
                    and not (own_values and sub != _VALUE
                             and in_own_value(root.descendant_for_byte_range(start, end),
                                              start, ref_path[0], own_values, source))):
                # a parameter or local variable: nothing outside the function, unless it
                # copies a function read through a path (`precedence(node)`)
                aliased = _aliased(ref_path[0], scope, local_names, defs, aliases) \
                    if aliases and sub == _CALL else None
                if aliased is None:
                    continue
                ref_path = aliased
            if untyped_local_heads and len(ref_path) > 1:
                after = source[start + len(ref_path[0]):start + len(ref_path[0]) + 2]
                if (after[:1] == b"." and is_local(ref_path[0], scope, local_names, defs)
                        and not is_local(ref_path[0], scope, typed_scopes, defs)):
                    ref_path = ("?", *ref_path[1:])
                elif after == b"::" and is_local(ref_path[0], scope, local_names, defs):
                    # `config::APP_NAME` beside a local `config`: a path of items, which
                    # locals do not hide
                    ref_path = (ITEMS_HEAD, *ref_path)
            if spans_lines:  # a chain over several lines: the site is where its last name is
                row, col = _name_position(source, start, end, ref_path[-1], row, col)
            arguments = arities.get(start, _NO_ARGUMENTS) if arities else _NO_ARGUMENTS
            if arguments[1]:
                arguments = _fields_read(arguments, scope, local_names, defs)
            refs.append((sub, ref_path, scope, row + 1, col, arguments[0], arguments[1]))
    return refs


class _Narrowings:
    """The spans where a name holds a type of its own (a Go type switch's cases), read in the
    order of the references: a sweep keeps the spans open at the last one (each inside the one
    below it), so a file of many switches costs each reference its nesting depth, not every
    span before it."""

    def __init__(self, raw: list[tuple[int, int, str, Any]], plugin: Language,
                 source: bytes) -> None:
        # (start, end, name, the path of the call making an instance of the type: ``*pkg.T``
        # -> ("pkg", "T()"), whose members a member read through the name is)
        self.spans: list[tuple[int, int, str, NamePath]] = []
        for start, end, name, type_node in sorted(raw, key=_FIRST):
            typed = declared_type(plugin, node_text(source, type_node))
            if typed:
                self.spans.append((start, end, name, (*typed[:-1], typed[-1] + "()")))
        self.names = frozenset(s[2] for s in self.spans)
        self.opened = 0  # the spans before this one have been opened
        self.open: list[tuple[int, int, str, NamePath]] = []

    def path(self, path: NamePath, start: int) -> NamePath:
        """``path`` (``v.m``) as read at ``start``, no earlier than the last one asked: through
        the innermost span narrowing its head there (``T().m``), else as it is."""
        spans, open_spans = self.spans, self.open
        while self.opened < len(spans) and spans[self.opened][0] <= start:
            span = spans[self.opened]
            self.opened += 1
            while open_spans and open_spans[-1][1] <= span[0]:
                open_spans.pop()
            open_spans.append(span)
        while open_spans and open_spans[-1][1] <= start:
            open_spans.pop()
        for _, _, name, instance in reversed(open_spans):
            if name == path[0]:
                return (*instance, *path[1:])
        return path



def _aliased(name: str, scope: int, local_names: dict[int, set[str]], defs: list[Definition],
             aliases: dict[tuple[int, str], NamePath]) -> NamePath | None:
    """The path the local ``name`` read at ``scope`` copies (see ``read_bindings``' aliases),
    from the innermost definition binding it, or None."""
    while scope >= 0:
        bound = local_names.get(scope)
        if bound is not None and name in bound:
            return aliases.get((scope, name))
        scope = defs[scope].parent
    return None



def _name_position(source: bytes, start: int, end: int, name: str, row: int,
                   col: int) -> tuple[int, int]:
    """Where a reference written over several lines names what it refers to (``where`` in
    ``select(...)\\n    .where(...)``): its last name, which ends the expression; the
    expression's start when it does not (``Foo<\\n T>``). A call's site is the line a reader
    sees the called name on, as a compiler's or a language server's is."""
    encoded = name.encode("utf-8")
    at = end - len(encoded)
    if at <= start or not source.startswith(encoded, at):
        return row, col
    return row + source.count(b"\n", start, at), at - source.rfind(b"\n", 0, at) - 1


def _through_qualified_self(path: NamePath, self_name: str) -> NamePath:
    """``path`` with `Outer.this` before a member read as an instance of Outer, `Outer()`."""
    at = path.index(self_name)
    if at == 0 or at == len(path) - 1:
        return path
    return (*path[: at - 1], path[at - 1] + "()", *path[at + 1 :])


def _fields_read(arguments: tuple[int, tuple[str, ...]], scope: int,
                 local_names: dict[int, set[str]], defs: list[Any]
                 ) -> tuple[int, tuple[str, ...]]:
    """A call's ``arguments`` with each variable ("=x") that the function around it does
    not bind marked as a field's ("~x"): what the resolver looks up for its type."""
    types = arguments[1]
    marked: list[str] | None = None
    for i, t in enumerate(types):
        if t[:1] == "=" and not is_local(t[1:], scope, local_names, defs):
            if marked is None:
                marked = list(types)
            marked[i] = "~" + t[1:]
    return arguments if marked is None else (arguments[0], tuple(marked))



_FIRST = itemgetter(0)


_VALUE = RefKind.VALUE
_NEW = RefKind.NEW
_CALL = RefKind.CALL
_NO_ARGUMENTS: tuple[int, tuple[str, ...]] = (-1, ())  # a reference that is no call's
