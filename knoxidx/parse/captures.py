"""A file's query matches, sorted by the role of their pattern into the raw captures the
rest of extraction reads (:class:`RawCaptures`): definitions, references, imports, bindings,
impls, locals, narrowings, returns, call arguments, the package and complexity's captures.
One pass of the whole query over the tree; in the compiled build the references and locals
come from the native matches as rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, cast

from knoxidx.languages.protocol import BindsNames, CountsArguments, TypesProperties
from knoxidx.parse.binding_types import (
    READ_CALLBACK,
    READ_CALLED,
    READ_COPY,
    READ_DECLARED,
    READ_DOCUMENTED,
    READ_ELEMENT,
    READ_ELEMENTS,
    READ_INJECTED,
    READ_RESULT,
)
from knoxidx.parse.compiled_queries import (
    MAX_QUERY_DEPTH,
    REF_RANKS,
    CompiledQuery,
    native_matches,
    pattern_role,
    query_cursor,
)
from knoxidx.parse.complexity import ComplexityCaptures
from knoxidx.parse.definitions import node_text


@dataclass(slots=True)
class RawCaptures:
    """What :func:`read_matches` captured, by role (see ``pattern_role``)."""

    # (start, end, name's start) -> (node, kind, name node, type node, owner node)
    defs: dict[tuple[int, int, int], tuple[Any, str, Any, Any, Any]]
    # (sort key, start, end, kind, row, column, receiver's start, end or -1, -1); the key
    # orders by (start, end, kind)
    refs: list[tuple[int, int, int, str, int, int, int, int]]
    import_nodes: list[Any]
    # (name, type or value node, how its type is read: READ_DECLARED, READ_CALLED,
    # READ_ELEMENT, READ_CALLBACK or READ_RESULT (a call's result after its first), whether the
    # name is a member of that type, and for a READ_RESULT, its place: the name's node (its
    # commas counted) or its index)
    bindings: list[tuple[Any, Any, str, bool, Any]]
    # ... those an assignment makes (`x = new T()`), kept where x was declared with no value
    assigned_bindings: list[tuple[Any, Any, str, bool, Any]]
    unset: list[Any]  # the names of locals declared with no value (`let x;`)
    impls: list[tuple[Any, Any, Any]]
    locals: list[tuple[int, int]]  # (start, end) of the names a function binds for itself
    assigned: list[Any]  # ... by an assignment (some of them module variables)
    globals: list[Any]  # Python `global x`: not a local after all
    # (start, end, name, type node): inside the span, the name holds that type
    narrowed: list[tuple[int, int, str, Any]]
    returns: list[Any]  # `return` statements, and what makes a function return none
    # a call's argument count and types (see Reference), by its called name's start
    arities: dict[int, tuple[int, tuple[str, ...]]]
    package: str
    complexity: ComplexityCaptures


def read_matches(compiled: CompiledQuery, root: Any, source: bytes) -> RawCaptures:
    """The query's matches over the tree at ``root``, by role."""
    plugin = compiled.plugin
    roles = compiled.roles
    # (each as RawCaptures' field of its name says)
    raw_defs: dict[tuple[int, int, int], tuple[Any, str, Any, Any, Any]] = {}
    raw_refs: list[tuple[int, int, int, str, int, int, int, int]]
    import_nodes: list[Any] = []
    raw_bindings: list[tuple[Any, Any, str, bool, Any]] = []
    assigned_bindings: list[tuple[Any, Any, str, bool, Any]] = []
    raw_unset: list[Any] = []
    raw_impls: list[tuple[Any, Any, Any]] = []
    raw_locals: list[tuple[int, int]]
    raw_assigned: list[Any] = []
    raw_globals: list[Any] = []
    raw_narrowed: list[tuple[int, int, str, Any]] = []
    raw_returns: list[Any] = []
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
        matches = query_cursor(compiled.query).matches(root)
    for pattern, caps in matches:
        role = roles.get(pattern)
        if role is None:
            role = roles[pattern] = pattern_role(caps)
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
            how = READ_CALLED if "binding.call" in caps else READ_DECLARED
            place = caps.get("binding.result")
            if target and place:  # `_, b := f()`: b is f's second result
                how = READ_RESULT
            if not target:  # `for _, v := range xs`, `v := xs[i]`: an element of the value
                target, how = caps.get("binding.element"), READ_ELEMENT
            if not target:  # `xs.forEach((x) => ..)`: what the call passes its callback
                target, how = caps.get("binding.callback"), READ_CALLBACK
            if not target:  # `const point = target`: what the name copied holds
                target, how = caps.get("binding.copy"), READ_COPY
            if not target:  # `/** @type {Node} */ this.node = null`: what its doc declares
                target, how = caps.get("binding.documented"), READ_DOCUMENTED
            if not target:  # `xs.push(new T())`: what xs's elements hold
                target, how = caps.get("binding.elements"), READ_ELEMENTS
            if not target:  # a pytest fixture's name: what the fixture gives (see INJECTED)
                target, how = caps.get("binding.injected"), READ_INJECTED
            if target:
                # `binding.member`: the name is a member of that type (`{ board }: Props`)
                (assigned_bindings if "binding.assigned" in caps else raw_bindings).append(
                    (caps[main][0], target[0], how, "binding.member" in caps,
                     place[0] if how == READ_RESULT and place else None))
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
                        raw_bindings.append((name_node, typed, READ_DECLARED, False, None))
            elif target and "binding.result" in caps:
                # `a, b, c, err := f()`: each name after the first (bound as the call's value
                # by a pattern of its own) is the result at its place, its index among the
                # names (counting the commas before each name walks its siblings: 20,000 names
                # of one `var` took minutes)
                for position, name_node in enumerate(names):
                    if position and node_text(source, name_node) != "_":
                        raw_bindings.append((name_node, target[0], READ_RESULT, False, position))
            elif target:
                how = READ_CALLED if "binding.call" in caps else READ_DECLARED
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
    return RawCaptures(raw_defs, raw_refs, import_nodes, raw_bindings, assigned_bindings,
                       raw_unset, raw_impls, raw_locals, raw_assigned, raw_globals, raw_narrowed,
                       raw_returns, arities, package, complexity)


_END_SHIFT: Final = 3
_START_SHIFT: Final = _END_SHIFT + 32
assert len(REF_RANKS) <= 1 << _END_SHIFT
