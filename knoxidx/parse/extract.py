"""``extract(path, source, language) -> FileFacts``: the one place syntax trees are read.

A pure function of its arguments (no database, no other files), so it is cached by content hash,
runs in worker processes and is tested in isolation. All tree reading is one tree-sitter query
per language, run in C; Python only touches the captured nodes. In the compiled build the
query's matches come from ``_matches.c`` (see ``native_matches``): the references' and local
names' as plain rows, with no node object made for them; the facts are the same either way.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Final, cast

from knoxidx.core.facts import (
    ELEMENT_OF,
    INJECTED,
    ITEMS_HEAD,
    OWN_MEMBERS,
    REF_KINDS,
    TYPE_ARGUMENTS,
    Binding,
    Definition,
    FileFacts,
    Impl,
    Import,
    NamePath,
    RefKind,
    as_references,
)
from knoxidx.core.model import NodeKind
from knoxidx.languages.protocol import (
    BindsCallbacks,
    BindsDocumented,
    BindsElements,
    BindsElementTypes,
    BindsNames,
    BindsTypeParameters,
    CountsArguments,
    DeclaresPayloads,
    Language,
    OrdersBindings,
    ReadsDeclaredTypes,
    ReadsReturns,
    StatesConstraints,
    TypesProperties,
)
from knoxidx.languages.registry import BY_NAME, query_source, ts_language
from knoxidx.parse.binding_sites import in_own_value, placed
from knoxidx.parse.complexity import ComplexityCaptures, with_complexity
from knoxidx.parse.definitions import (
    binding_scope,
    bound_locals,
    build_definitions,
    declared_type,
    enclosing,
    impl_type_path,
    is_anonymous,
    is_local,
    node_text,
    outermost_first,
    span_text,
)
from knoxidx.parse.name_paths import (
    CACHED_NAME_CHARS,
    MAX_REFERENCE_CHARS,
    RESULT_SEGMENT_PREFIX,
    alias_path,
    indexed_path,
    name_path,
    reference_path,
    short_reference,
    type_arguments,
)
from knoxidx.parse.returns import result_member_bindings, returned_bindings
from knoxidx.parse.tree_parse import ParseTimeoutError, parse_tree

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
# How many nodes _sampled_shape looks at in a tree with syntax errors, and in one without.
# Each sample costs a walk from the root (tree-sitter scans each node's children on the way
# down): at 256 a tree, sampling cost 3.6 % of extraction, for a note.
ERROR_SAMPLES = 1024
DEPTH_SAMPLES = 16


@dataclass(slots=True)
class _Compiled:
    parser: Any
    query: Any  # the language's whole tags file: one pass over the tree, run with matches()
    errors_query: Any
    plugin: Language
    # pattern index -> (role, kind, main capture, the kind's rank among reference kinds)
    roles: dict[int, tuple[str, str, str, int]]
    plan: Any = None  # the query's plan for knoxidx.parse._matches, where that runs it


def prepare(languages: Iterable[str]) -> None:
    """Compile the parsers and queries of ``languages`` in this process now, so that the parse
    worker it forks next inherits them compiled (and so do later updates' in a long-lived
    process). Compiling the TypeScript query alone takes ~0.1 s, all seven ~0.35 s. A pool of
    several workers does not wait for it: each worker compiles the languages of the chunks it
    claims (``parse_worker.read_claimed``)."""
    for language in languages:
        _compiled(language)


def compiled_languages() -> set[str]:
    """The languages whose parser and queries this process holds compiled (itself, or
    inherited from the process it was forked from)."""
    return set(COMPILED)


COMPILED: dict[str, _Compiled] = {}  # by language: compiled once per process


def native_matches() -> Any:
    """``knoxidx.parse._matches`` (see ``_matches.c``) where it was built, and built for the
    tree-sitter installed (it reads py-tree-sitter's objects by their layout in that version),
    unless ``KNOXIDX_NATIVE=0``; else None, and extraction reads py-tree-sitter's matches."""
    global _NATIVE, _NATIVE_LOADED
    if not _NATIVE_LOADED:
        _NATIVE_LOADED = True
        _NATIVE = _load_native()
    return _NATIVE


def _load_native() -> Any:
    if os.environ.get("KNOXIDX_NATIVE") == "0":
        return None
    try:
        import tree_sitter

        from knoxidx.parse import _matches  # type: ignore[attr-defined]
    except ImportError:
        return None
    if getattr(_matches, "TREE_SITTER_VERSION", None) != getattr(tree_sitter, "__version__", ""):
        return None  # built against another py-tree-sitter: reinstall knoxidx to rebuild it
    return _matches


_NATIVE: Any = None
_NATIVE_LOADED = False


def _compiled(language: str) -> _Compiled:
    compiled = COMPILED.get(language)
    if compiled is None:
        compiled = COMPILED[language] = _compile(language)
    return compiled


def _compile(language: str) -> _Compiled:
    from tree_sitter import Parser, Query

    lang = ts_language(language)
    compiled = _Compiled(
        parser=Parser(lang),
        query=Query(lang, query_source(language)),
        errors_query=Query(lang, "(ERROR) @error"),
        plugin=BY_NAME[language].plugin,
        roles={},
    )
    native = native_matches()
    if native is not None:
        compiled.plan = _plan(native, compiled.query, compiled.roles)
    return compiled


def _plan(native: Any, query: Any, roles: dict[int, tuple[str, str, str, int]]) -> Any:
    """``query``'s plan for the native matches (its reference patterns' matches as rows of
    ints, its locals' as spans), with ``roles`` filled in for every pattern; None where the
    query holds a predicate the native matches do not evaluate."""
    ids = {query.capture_name(i): i for i in range(query.capture_count)}
    modes = bytearray()
    ranks = bytearray()
    mains: list[int] = []
    receivers: list[int] = []
    kinds: list[str | None] = []
    for pattern, names in enumerate(native.pattern_captures(query)):
        role = roles[pattern] = _role(dict.fromkeys(names, []))
        kind, sub, main, rank = role
        modes.append(_REF_MODE if kind == "ref" else _SPAN_MODE if kind == "local" else 0)
        ranks.append(rank)
        mains.append(ids.get(main, -1))
        receivers.append(ids["receiver"] if kind == "ref" and "receiver" in names else -1)
        kinds.append(sub if kind == "ref" else None)
    try:
        return native.plan(query, bytes(modes), bytes(ranks), tuple(mains), tuple(receivers),
                           tuple(kinds))
    except ValueError:
        roles.clear()
        return None


def _assigned_where_unset(assigned: list[tuple[Any, Any, str, bool, Any]], unset: list[Any],
                          defs: list[Definition], spans: list[tuple[int, int, int]],
                          source: bytes) -> list[tuple[Any, Any, str, bool, Any]]:
    """The bindings of ``assigned`` whose name the same function declares with no value
    (``unset``): `let x; .. x = new T()` makes x a T, while an assignment to a local declared
    with a value (`let f = () => {}; f = g()`) leaves it the value's type, as TypeScript reads
    both. An assignment to a name declared outside the function binds nothing: a binding
    would make it the function's own local, hiding the module variable it writes."""
    declared = {(binding_scope(defs, scope), node_text(source, node))
                for node, scope in zip(unset, enclosing(spans, [n.start_byte for n in unset]),
                                       strict=True)}
    return [binding for binding, scope in zip(
                assigned, enclosing(spans, [b[0].start_byte for b in assigned]), strict=True)
            if (binding_scope(defs, scope), node_text(source, binding[0])) in declared]


def _role(caps: dict[str, list[Any]]) -> tuple[str, str, str, int]:
    """What a pattern's matches are, from the capture names of one of them: (role, kind, the
    capture holding the node, the kind's rank in the references' order) — the role "def",
    "ref", "import", "binding.name", "binding.names" (a declaration binding each name the
    plugin's ``bound_names`` lists), "narrowed" (a span where a name holds a type of its own:
    a Go type switch's case), "impl", "package", "local" (a name a function binds for
    itself), "local.assigned" (one an assignment binds: at a module's top level, a module
    variable), "global", "arity" (a call's arguments, its called name in ``arity.name``),
    "returned" (a function's `return` or `yield`: see ``parse.returns``), "unset" (a local
    declared with no value: the bindings of its assignments are read) or "ignore"."""
    for key in caps:
        head, _, tail = key.partition(".")
        if head == "definition":
            return "def", tail, key, 0
        if head == "reference":
            rank = _REF_RANKS.get(tail)
            if rank is None:
                raise ValueError(f"the query captures an unknown reference kind: @{key}")
            return "ref", tail, key, rank
    for key in ("import", "binding.name", "binding.names", "impl", "package", "local",
                "local.assigned", "global", "arity", "narrowed", "returned", "unset",
                *_COMPLEXITY_ROLES):
        if key in caps:
            return key, "", key, 0
    return "ignore", "", "", 0


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
    compiled = _compiled(language)
    plugin = compiled.plugin
    tree = parse_tree(compiled.parser, source)
    unwrap = getattr(plugin, "unwrap_item_macros", None)
    if unwrap is not None:  # items inside macro calls, parsed where they stand (Rust)
        unwrapped = unwrap(tree, source, compiled.parser)
        if unwrapped is not None:
            source, tree = unwrapped
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
    # (sort key, start, end, kind, row, column, receiver's start, end or -1, -1); the key
    # orders by (start, end, kind)
    raw_refs: list[tuple[int, int, int, str, int, int, int, int]]
    import_nodes: list[Any] = []
    # (name, type or value node, how its type is read: _DECLARED, _CALLED, _ELEMENT, _CALLBACK or
    # _RESULT (a call's result after its first), whether the name is a member of that type, and
    # for a _RESULT, its place: the name's node (its commas counted) or its index)
    raw_bindings: list[tuple[Any, Any, str, bool, Any]] = []
    # ... those an assignment makes (`x = new T()`), kept where x was declared with no value
    assigned_bindings: list[tuple[Any, Any, str, bool, Any]] = []
    raw_unset: list[Any] = []  # the names of locals declared with no value (`let x;`)
    raw_impls: list[tuple[Any, Any, Any]] = []
    raw_locals: list[tuple[int, int]]  # (start, end) of the names a function binds for itself
    raw_assigned: list[Any] = []  # ... by an assignment (some of them module variables)
    raw_globals: list[Any] = []  # Python `global x`: not a local after all
    # (start, end, name, type node): inside the span, the name holds that type
    raw_narrowed: list[tuple[int, int, str, Any]] = []
    raw_returns: list[Any] = []  # `return` statements, and what makes a function return none
    # a call's argument count and types (see Reference), by its called name's start
    arities: dict[int, tuple[int, tuple[str, ...]]] = {}
    package = ""
    complexity = ComplexityCaptures()
    # One pass of the whole query over the tree: each pass walks every node, which costs a
    # quarter of the parse before any pattern matches.
    # typed, so that the compiled loop indexes the list and unpacks each match as a tuple
    # (as Any, every match was unpacked through the iterator protocol)
    matches: list[tuple[int, dict[str, list[Any]]]]
    if compiled.plan is not None:  # the references and locals come apart, as rows
        raw_refs, raw_locals, matches = native_matches().matches(
            compiled.plan, root, source, MAX_QUERY_DEPTH)
    else:
        raw_refs, raw_locals = [], []
        matches = _cursor(compiled.query).matches(root)
    for pattern, caps in matches:
        role = roles.get(pattern)
        if role is None:
            role = roles[pattern] = _role(caps)
        kind, sub, main, rank = role
        # the roles in the order of how often they match (references, then locals, comments,
        # decisions...): each match compares its role with every one before its own
        if kind == "ref":
            node = caps[main][0]
            receiver_caps = caps.get("receiver")  # `recv.name(...)` captured apart (Java)
            start: int = node.start_byte  # (typed: compiled, the key is native arithmetic)
            end: int = node.end_byte
            row, col = node.start_point
            receiver_start = receiver_end = -1
            if receiver_caps:
                receiver_start = receiver_caps[0].start_byte
                receiver_end = receiver_caps[0].end_byte
            # one integer orders by (start, end, kind): tree-sitter's offsets are 32-bit
            raw_refs.append(((start << _START_SHIFT) | (end << _END_SHIFT) | rank,
                             start, end, sub, row, col, receiver_start, receiver_end))
        elif kind == "local":
            node = caps[main][0]
            raw_locals.append((node.start_byte, node.end_byte))
        elif kind == "complexity.comment":
            node = caps[main][0]
            start_row, start_col = node.start_point
            end_row, end_col = node.end_point
            complexity.comments.append((start_row, start_col, end_row, end_col))
        elif kind == "complexity.decision":
            complexity.decisions.append(caps[main][0].start_byte)
        elif kind == "def":
            node = caps[main][0]
            name_node = caps["name"][0]
            # (the captures' lists named apart from the nodes below: compiled, a name keeps
            # one type)
            type_caps = caps.get("def.type")
            if type_caps is None and node.type in plugin.TYPE_AFTER_NAMES:
                declared = node.child_by_field_name("type")
                type_caps = [declared] if declared is not None else None
            owner_caps = caps.get("def.owner")
            key = (node.start_byte, node.end_byte, name_node.start_byte)
            previous = raw_defs.get(key)
            # The same node may match several patterns: keep the most specific reading
            # (a function beats a constant; one with a declared type beats one without).
            if previous is None or (
                (sub in ("function", "method") and previous[1] not in ("function", "method"))
                or (previous[3] is None and type_caps)
            ):
                raw_defs[key] = (
                    node, sub, name_node,
                    type_caps[0] if type_caps else None,
                    owner_caps[0] if owner_caps else None,
                )
        elif kind == "binding.name":
            target = caps.get("binding.type") or caps.get("binding.call")
            how = _CALLED if "binding.call" in caps else _DECLARED
            place = caps.get("binding.result")
            if target and place:  # `_, b := f()`: b is f's second result
                how = _RESULT
            if not target:  # `for _, v := range xs`, `v := xs[i]`: an element of the value
                target, how = caps.get("binding.element"), _ELEMENT
            if not target:  # `xs.forEach((x) => ..)`: what the call passes its callback
                target, how = caps.get("binding.callback"), _CALLBACK
            if not target:  # `const point = target`: what the name copied holds
                target, how = caps.get("binding.copy"), _COPY
            if not target:  # `/** @type {Node} */ this.node = null`: what its doc declares
                target, how = caps.get("binding.documented"), _DOCUMENTED
            if not target:  # `xs.push(new T())`: what xs's elements hold
                target, how = caps.get("binding.elements"), _ELEMENTS
            if not target:  # a pytest fixture's name: what the fixture gives (see INJECTED)
                target, how = caps.get("binding.injected"), _INJECTED
            if target:
                # `binding.member`: the name is a member of that type (`{ board }: Props`)
                (assigned_bindings if "binding.assigned" in caps else raw_bindings).append(
                    (caps[main][0], target[0], how, "binding.member" in caps,
                     place[0] if how == _RESULT and place else None))
        elif kind == "complexity.nesting":
            node = caps[main][0]
            complexity.nesting.append((node.start_byte, node.end_byte))
        elif kind == "arity":
            arities[caps["arity.name"][0].start_byte] = cast(
                CountsArguments, plugin).call_arguments(caps[main][0], source)
        elif kind == "import":
            import_nodes.append(caps[main][0])
        elif kind == "complexity.scope":
            node = caps[main][0]
            outer = node.parent
            complexity.scopes.append((
                node.start_byte, node.end_byte,
                outer.start_byte if outer is not None else -1,
                outer.end_byte if outer is not None else -1))
        elif kind == "local.assigned":
            node = caps[main][0]
            raw_locals.append((node.start_byte, node.end_byte))
            raw_assigned.append(node)
        elif kind == "binding.names":  # `var a, b *T`, `({ a, b }: Props)`: each name bound
            names = cast(BindsNames, plugin).bound_names(caps[main][0])
            target = caps.get("binding.type") or caps.get("binding.call")
            inline = caps.get("binding.object")
            if inline:  # `({ a }: { a: A })`: each name typed by its own property
                types = cast(TypesProperties, plugin).property_types(inline[0], source)
                for name_node in names:
                    typed = types.get(node_text(source, name_node))
                    if typed is not None:
                        raw_bindings.append((name_node, typed, _DECLARED, False, None))
            elif target and "binding.result" in caps:
                # `a, b, c, err := f()`: each name after the first (bound as the call's value
                # by a pattern of its own) is the result at its place, its index among the
                # names (counting the commas before each name walks its siblings: 20,000 names
                # of one `var` took minutes)
                for position, name_node in enumerate(names):
                    if position and node_text(source, name_node) != "_":
                        raw_bindings.append((name_node, target[0], _RESULT, False, position))
            elif target:
                how = _CALLED if "binding.call" in caps else _DECLARED
                is_member = "binding.member" in caps
                for name_node in names:
                    raw_bindings.append((name_node, target[0], how, is_member, None))
        elif kind == "impl":
            trait = caps.get("impl.trait")
            raw_impls.append((caps[main][0], caps["impl.type"][0], trait[0] if trait else None))
        elif kind == "complexity.flat":
            complexity.flat.add(caps[main][0].start_byte)
        elif kind == "global":
            raw_globals.append(caps[main][0])
        elif kind == "narrowed":
            node = caps[main][0]
            raw_narrowed.append((node.start_byte, node.end_byte,
                                 node_text(source, caps["narrowed.name"][0]),
                                 caps["narrowed.type"][0]))
        elif kind == "package":
            package = plugin.package_name(node_text(source, caps[main][0]))
        elif kind == "returned":
            raw_returns.append(caps[main][0])
        elif kind == "unset":
            raw_unset.append(caps[main][0])

    if raw_assigned:
        _add_block_variables(raw_defs, raw_assigned, import_nodes, plugin, source)
    defs = with_complexity(build_definitions(raw_defs, raw_impls, plugin, source), complexity,
                           source)
    spans = [(d.start_byte, d.end_byte, i) for i, d in enumerate(defs)]
    local_names = bound_locals(raw_locals, raw_globals, raw_defs, defs, spans, source)

    if assigned_bindings and raw_unset:
        raw_bindings += _assigned_where_unset(assigned_bindings, raw_unset, defs, spans, source)
    bindings, typed_names, aliases, placing = _bindings(raw_bindings, defs, spans, plugin,
                                                        source)
    if placing:
        bindings = placed(bindings, placing, defs, spans, raw_locals, root, source,
                          cast(OrdersBindings, plugin))

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

    import_nodes = sorted({n.start_byte: n for n in import_nodes}.values(), key=lambda n: n.start_byte)
    imports: list[Import] = []
    for node, scope in zip(
        import_nodes, enclosing(spans, [n.start_byte for n in import_nodes]), strict=True
    ):
        imports.extend(plugin.decode_import(node, binding_scope(defs, scope), source))

    parameter_heads = getattr(plugin, "type_parameter_bindings", None)
    if parameter_heads is not None:  # `L::from_raw(p)` where `L: Link`: a bound's function
        bindings.extend(cast(BindsTypeParameters, plugin).type_parameter_bindings(
            root, refs, defs, source))
    payloads = getattr(plugin, "payload_declarations", None)
    if payloads is not None:  # `enum E { V(A, B) }`: what each place of V's payload holds
        for index, name, written in cast(DeclaresPayloads, plugin).payload_declarations(
                root, defs, source):
            held = declared_type(plugin, written)
            if held and held[0] != "?":
                bindings.append(Binding(index, name, held, False))
    documented = getattr(plugin, "documented_types", None)
    if documented is not None:
        # declared in JSDoc, a parameter's type comes before whatever the body assigns to it
        bindings[:0] = _documented_types(documented, raw_defs, defs, plugin, source)
        bindings = _fields_from_locals(bindings)
    elif getattr(plugin, "FIELDS_COPY_LOCALS", False):
        # `self.preparer = preparer`: the field holds what the local (a typed parameter) does
        bindings = _fields_from_locals(bindings)
    if any(b.type_path[0] == _COPIED for b in bindings):
        bindings = _copies_typed(bindings, local_names, defs)
    if raw_returns:  # what a function declaring no return type returns (sets its type_hint)
        bindings.extend(returned_bindings(raw_returns, defs, spans, bindings, local_names,
                                          cast(ReadsReturns, plugin),
                                          plugin.RULES.self_names, source))

    if getattr(plugin, "property_types", None) is not None \
            and any(d.type_hint == OWN_MEMBERS for d in defs):
        # `f(): { status: ParseStatus }`: what the members of f's result hold
        bindings.extend(result_member_bindings(raw_defs, defs, cast(TypesProperties, plugin),
                                               source))

    impls = [
        Impl(
            impl_type_path(node_text(source, type_node)),
            name_path(node_text(source, trait_node)) if trait_node else (),
            node.start_byte, node.end_byte, node.start_point[0] + 1,
        )
        for node, type_node, trait_node in raw_impls
    ]

    errors = 0
    if root.has_error:
        errors = max(1, len(_cursor(compiled.errors_query).captures(root).get("error", ())))
    lines = source.count(b"\n") + (1 if source and not source.endswith(b"\n") else 0)
    constraint = getattr(plugin, "build_constraint", None)
    return FileFacts(
        path, language, package, lines, errors,
        tuple(defs), cast(Any, tuple(refs)), tuple(imports), tuple(bindings), tuple(impls),
        cast(StatesConstraints, plugin).build_constraint(root, source) if constraint else "",
    ), notes


def _bindings(raw_bindings: list[tuple[Any, Any, str, bool, Any]], defs: list[Definition],
              spans: list[tuple[int, int, int]], plugin: Language, source: bytes,
              ) -> tuple[list[Binding], list[tuple[str, int]], dict[tuple[int, str], NamePath],
                         list[tuple[int, Any, Any]]]:
    """The bindings whose type the source says, in source order, and each one's name with the
    innermost definition around it (a local whose binding says no type is an untyped one).
    Third, the locals copying a value read through a path (the plugin's ``VALUE_PATHS``:
    `const precedence = astUtils.getPrecedence`), by (innermost definition, name): a call of
    the local is a call of that path. Last, where the plugin places bindings
    (``OrdersBindings``), each one's index among the bindings, name node and value node."""
    raw_bindings.sort(key=lambda b: b[0].start_byte)
    bindings: list[Binding] = []
    typed_names: list[tuple[str, int]] = []
    aliases: dict[tuple[int, str], NamePath] = {}
    documented: list[Binding] = []
    value_paths: frozenset[str] = getattr(plugin, "VALUE_PATHS", frozenset())
    declared_binding_type = getattr(plugin, "declared_binding_type", None)
    type_argument_calls: frozenset[str] = getattr(plugin, "TYPE_ARGUMENT_CALLS", frozenset())
    # the type arguments of a declared type, bound apart (see TYPE_ARGUMENTS)
    binds_type_arguments = getattr(plugin, "BINDS_TYPE_ARGUMENTS", False)
    function_literals: frozenset[str] = getattr(plugin, "FUNCTION_LITERALS", frozenset())
    # (index in bindings, name node, value node) of each binding to place (see binding_sites)
    ordered = getattr(plugin, "BINDING_BLOCKS", None) is not None
    nodes: list[tuple[int, Any, Any]] = []
    for (name_node, type_node, how, is_member, place), scope in zip(
        raw_bindings, enclosing(spans, [b[0].start_byte for b in raw_bindings]), strict=True
    ):
        is_call = how in (_CALLED, _RESULT)
        arguments: tuple[str, ...] = ()
        if how == _ELEMENT:
            bound_type, is_call = cast(BindsElements, plugin).element_binding(type_node, source)
        elif how == _CALLBACK:
            bound_type = cast(BindsCallbacks, plugin).callback_binding(type_node, source)
        elif how == _COPY:  # read once every binding is known (see _copies_typed)
            bound_type = (_COPIED, node_text(source, type_node))
        elif how == _DOCUMENTED:
            bound_type = cast(BindsDocumented, plugin).documented_binding(type_node, source)
        elif how == _ELEMENTS:
            bound_type = cast(BindsElementTypes, plugin).elements_binding(type_node, source)
        elif how == _INJECTED:
            bound_type = (INJECTED, node_text(source, type_node))
        elif is_call:
            raw = node_text(source, type_node)
            if raw in type_argument_calls:
                continue  # `new(T)`: the name's other binding is to T
            bound_type = name_path(raw)
            # (the first result too where a pattern says so: `let (a, b) = f()`'s a is f's #0)
            if bound_type and how == _RESULT:
                position = place if isinstance(place, int) else _position(place)
                bound_type = (*bound_type, f"{RESULT_SEGMENT_PREFIX}{position}")
        else:
            read = (cast(ReadsDeclaredTypes, plugin).declared_binding_type(type_node, source)
                    if declared_binding_type is not None else None)
            written = node_text(source, type_node)
            bound_type = read if read is not None else declared_type(plugin, written)
            if binds_type_arguments and "<" in written:
                arguments = type_arguments(written)
        if bound_type and bound_type[0] != "?":
            name = "".join(node_text(source, name_node).split())  # without whitespace
            if how == _ELEMENTS:
                name += ELEMENT_OF
            typed_names.append((name, scope))
            if is_member and is_call:  # `const { a } = f()`: the member a of f's result
                bound_type = (*bound_type[:-1], bound_type[-1] + "()", name)
                is_call = False
            elif is_member:  # the type of that member: the path to it, resolved to its type
                bound_type = (*bound_type, name)
            elif how == _DECLARED and type_node.type in value_paths and scope >= 0:
                aliases.setdefault((scope, name), bound_type)
            owner = binding_scope(defs, scope)
            if (owner != scope and function_literals
                    and _in_function_literal(name_node, defs[scope].start_byte,
                                             function_literals)):
                # `var f = func(c *T) { c.m() }`: c is the literal's, read inside the value only
                owner = scope
            binding = Binding(owner, name, bound_type, is_call)
            if how == _DOCUMENTED:
                documented.append(binding)
            else:
                if ordered:
                    nodes.append((len(bindings), name_node, type_node))
                bindings.append(binding)
            if arguments:
                bindings.append(Binding(owner, name + TYPE_ARGUMENTS, arguments, False))
    # declared in a doc comment, a field's type comes before whatever is assigned to it
    return documented + bindings, typed_names, aliases, nodes


def _in_function_literal(node: Any, start: int, literals: frozenset[str]) -> bool:
    """Whether ``node`` lies inside a function literal (a node of a type in ``literals``)
    that begins at or after ``start``."""
    parent = node.parent
    while parent is not None and parent.start_byte >= start:
        if parent.type in literals:
            return True
        parent = parent.parent
    return False


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


def _documented_types(
    documented: Any, raw_defs: dict[tuple[int, int, int], tuple[Any, str, Any, Any, Any]],
    defs: list[Definition], plugin: Language, source: bytes,
) -> list[Binding]:
    """What each function's doc comment types (JavaScript's JSDoc): its return type, set on
    its definition where it declares none of its own (`@return {Vector3}` is what a call
    yields), and the bindings of its parameters (`@param {T} name`), scoped to it. A union
    of several named types (`{A|B}`) types nothing: no one type's methods are meant."""
    functions = {(d.start_byte, d.end_byte): i for i, d in enumerate(defs)
                 if d.kind == _FUNCTION_KIND}
    out: list[Binding] = []
    for (start, end, _), (node, *_rest) in raw_defs.items():
        index = functions.get((start, end))
        if index is None:
            continue
        returned, parameters = documented(node, source)
        if returned and not defs[index].type_hint:
            defs[index] = defs[index]._replace(
                type_hint=OWN_MEMBERS if returned == OWN_MEMBERS[0]
                else alias_path(returned, plugin.SQUARE_TYPE_ARGS))
        for name, declared in parameters:
            bound_type = alias_path(declared, plugin.SQUARE_TYPE_ARGS)
            if bound_type:
                out.append(Binding(index, name, bound_type, False))
    return out


def _aliased(name: str, scope: int, local_names: dict[int, set[str]], defs: list[Definition],
             aliases: dict[tuple[int, str], NamePath]) -> NamePath | None:
    """The path the local ``name`` read at ``scope`` copies (see ``_bindings``' aliases),
    from the innermost definition binding it, or None."""
    while scope >= 0:
        bound = local_names.get(scope)
        if bound is not None and name in bound:
            return aliases.get((scope, name))
        scope = defs[scope].parent
    return None


def _copies_typed(bindings: list[Binding], local_names: dict[int, set[str]],
                  defs: list[Definition]) -> list[Binding]:
    """The bindings with each copy of a name (`const point = target`) bound as that name is,
    in the same function, else at the module level where no local hides it (in source
    order, so a copy of a copy too); a copy of a name bound to no known type is dropped."""
    typed: dict[tuple[int, str], Binding] = {}
    for b in bindings:
        if b.type_path[0] != _COPIED:
            typed.setdefault((b.scope, b.name), b)
    out: list[Binding] = []
    for b in bindings:
        if b.type_path[0] == _COPIED:
            copied_name = b.type_path[1]
            copied = typed.get((b.scope, copied_name))
            if copied is None and not is_local(copied_name, b.scope, local_names, defs):
                copied = typed.get((-1, copied_name))
            if copied is None:
                continue
            b = b._replace(type_path=copied.type_path, is_call=copied.is_call)
            typed.setdefault((b.scope, b.name), b)
        out.append(b)
    return out


def _fields_from_locals(bindings: list[Binding]) -> list[Binding]:
    """`this.start = start` binds the field to the type of the local it copies, where that
    local's own binding in the same function says it (a JSDoc-typed parameter)."""
    typed: dict[tuple[int, str], Binding] = {}
    for b in bindings:
        if "." not in b.name:
            typed.setdefault((b.scope, b.name), b)
    out: list[Binding] = []
    for b in bindings:
        copied = typed.get((b.scope, b.type_path[0])) \
            if "." in b.name and not b.is_call and len(b.type_path) == 1 else None
        out.append(b._replace(type_path=copied.type_path, is_call=copied.is_call)
                   if copied is not None else b)
    return out


def _add_block_variables(
    raw_defs: dict[tuple[int, int, int], tuple[Any, str, Any, Any, Any]], assigned: list[Any],
    import_nodes: list[Any], plugin: Language, source: bytes,
) -> None:
    """Add to ``raw_defs`` the names a module assigns outside every function and class that
    the query's module-level pattern does not reach: in the block of an ``if``, ``try``,
    ``with``, ``for`` or ``while`` (``try: import docutils`` / ``except ImportError:
    docutils_is_available = False``), and a chained assignment's names after its first (``b``
    and ``c`` of ``a = b = c = f()``). They are module variables as much as the top level's (a
    pattern for each kind of block would keep its states open over the whole module). Each
    name once, at its first assignment, defined by the whole statement (so ``a``, ``b`` and
    ``c`` are siblings); none the module already defines at its top level or imports (``except
    ImportError: json = None`` leaves ``json`` the import). ``assigned``: the names
    ``@local.assigned`` captured (Python's query)."""
    named = {key[2] for key in raw_defs}
    ordered = sorted(raw_defs.items(), key=outermost_first)
    scopes = [(key[0], key[1], 0) for key, raw in ordered if raw[1] in _SCOPE_SUBS]
    nodes = sorted({n.start_byte: n for n in assigned if n.start_byte not in named}.items())
    inside = enclosing(scopes, [start for start, _ in nodes])
    found = [node for (_, node), scope in zip(nodes, inside, strict=True) if scope < 0]
    if not found:
        return
    taken: set[str] = set()  # the top level's names: its definitions' and its imports'
    ends: list[int] = []  # the scopes open at each definition, in order
    for key, raw in ordered:
        while ends and ends[-1] <= key[0]:
            ends.pop()
        if not ends:
            taken.add(node_text(source, raw[2]))
        if raw[1] in _SCOPE_SUBS:
            ends.append(key[1])
    starts = [n.start_byte for n in import_nodes]
    for node, scope in zip(import_nodes, enclosing(scopes, starts), strict=True):
        if scope < 0:
            taken.update(i.alias for i in plugin.decode_import(node, -1, source) if i.alias)
    for name_node in found:
        name = node_text(source, name_node)
        statement = name_node.parent  # the assignment, or in a chain the one on its right
        if name in taken or statement is None:
            continue
        outer = statement.parent
        while outer is not None and outer.type == statement.type:
            statement, outer = outer, outer.parent
        taken.add(name)
        raw_defs[(statement.start_byte, statement.end_byte, name_node.start_byte)] = (
            statement, "variable", name_node, statement.child_by_field_name("type"), None)


# what a name assigned inside one is local to (see _add_block_variables)
_COMPLEXITY_ROLES = ("complexity.decision", "complexity.nesting", "complexity.flat",
                     "complexity.comment", "complexity.scope")
_SCOPE_SUBS = frozenset({"function", "method", "class", "struct", "enum", "interface", "trait"})


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


def _cursor(query: Any) -> Any:
    from tree_sitter import QueryCursor

    cursor = QueryCursor(query)
    cursor.set_max_start_depth(MAX_QUERY_DEPTH)
    return cursor


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


_FIRST = itemgetter(0)


def _position(node: Any) -> int:
    """Where ``node`` stands in its parent's list (a name in `a, b, c`, Rust's `mut b` in
    `(a, mut b)`): the separators before it, as Rust's `_` in `(_, b)` is no named node."""
    place = 0
    sibling = node.prev_sibling
    while sibling is not None:
        if sibling.type == ",":
            place += 1
        sibling = sibling.prev_sibling
    return place


# The reference kinds in the order the references of one expression are kept (see the loop
# over raw_refs: a value reading sorts after every more specific reading of the same span).
_REF_RANKS: dict[str, int] = {kind: i for i, kind in enumerate(sorted(REF_KINDS))}
_END_SHIFT: Final = 3
_START_SHIFT: Final = _END_SHIFT + 32
assert len(_REF_RANKS) <= 1 << _END_SHIFT
_VALUE = RefKind.VALUE
_NEW = RefKind.NEW
_CALL = RefKind.CALL
# how a binding's type is read from its captured node: a declared type, the type a call
# returns, the type of an element of a collection, a call's result after its first
_DECLARED, _CALLED, _ELEMENT, _RESULT = "declared", "called", "element", "result"
_CALLBACK, _COPY, _DOCUMENTED = "callback", "copy", "documented"
_ELEMENTS = "elements"  # the type of the elements of the collection the name holds
_INJECTED = "injected"  # what a framework passes a parameter by its name (see INJECTED)
_COPIED = "="  # the head of a copy's type path until _copies_typed reads it
_FUNCTION_KIND = NodeKind.FUNCTION.value
_NO_ARGUMENTS: tuple[int, tuple[str, ...]] = (-1, ())  # a reference that is no call's
# how the native matches hand back a pattern's matches (``_matches.c``): as a reference's row,
# a local name's span, or else as py-tree-sitter's
_REF_MODE: Final = 1
_SPAN_MODE: Final = 2
