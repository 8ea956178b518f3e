"""The bindings of a file's names to types, read from the nodes the query captured for them:
how each one's type is read (declared, a call's result, an element, a callback's parameter, a
copy, a doc comment's, a framework's injection), which assignments bind where a local was
declared with no value, the types doc comments declare, and the bindings completed once the
references are read (type parameters' bounds, payloads, fields copying locals, copies of
names, what functions return).
"""

from __future__ import annotations

from typing import Any, cast

from knoxidx.core.facts import (
    ELEMENT_OF,
    INJECTED,
    OWN_MEMBERS,
    TYPE_ARGUMENTS,
    Binding,
    Definition,
    NamePath,
)
from knoxidx.core.model import NodeKind
from knoxidx.languages.protocol import (
    BindsCallbacks,
    BindsDocumented,
    BindsElements,
    BindsElementTypes,
    BindsTypeParameters,
    DeclaresPayloads,
    Language,
    ReadsDeclaredTypes,
    ReadsReturns,
    TypesProperties,
)
from knoxidx.parse.definitions import binding_scope, declared_type, enclosing, is_local, node_text
from knoxidx.parse.name_paths import RESULT_SEGMENT_PREFIX, alias_path, name_path, type_arguments
from knoxidx.parse.returns import result_member_bindings, returned_bindings

# how a binding's type is read from its captured node: a declared type, the type a call
# returns, the type of an element of a collection, a call's result after its first
READ_DECLARED, READ_CALLED, READ_ELEMENT, READ_RESULT = "declared", "called", "element", "result"
READ_CALLBACK, READ_COPY, READ_DOCUMENTED = "callback", "copy", "documented"
READ_ELEMENTS = "elements"  # the type of the elements of the collection the name holds
READ_INJECTED = "injected"  # what a framework passes a parameter by its name (see INJECTED)
_COPIED = "="  # the head of a copy's type path until _copies_typed reads it
_FUNCTION_KIND = NodeKind.FUNCTION.value


def assigned_where_unset(assigned: list[tuple[Any, Any, str, bool, Any]], unset: list[Any],
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


def read_bindings(raw_bindings: list[tuple[Any, Any, str, bool, Any]], defs: list[Definition],
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
        is_call = how in (READ_CALLED, READ_RESULT)
        arguments: tuple[str, ...] = ()
        if how == READ_ELEMENT:
            bound_type, is_call = cast(BindsElements, plugin).element_binding(type_node, source)
        elif how == READ_CALLBACK:
            bound_type = cast(BindsCallbacks, plugin).callback_binding(type_node, source)
        elif how == READ_COPY:  # read once every binding is known (see _copies_typed)
            bound_type = (_COPIED, node_text(source, type_node))
        elif how == READ_DOCUMENTED:
            bound_type = cast(BindsDocumented, plugin).documented_binding(type_node, source)
        elif how == READ_ELEMENTS:
            bound_type = cast(BindsElementTypes, plugin).elements_binding(type_node, source)
        elif how == READ_INJECTED:
            bound_type = (INJECTED, node_text(source, type_node))
        elif is_call:
            raw = node_text(source, type_node)
            if raw in type_argument_calls:
                continue  # `new(T)`: the name's other binding is to T
            bound_type = name_path(raw)
            # (the first result too where a pattern says so: `let (a, b) = f()`'s a is f's #0)
            if bound_type and how == READ_RESULT:
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
            if how == READ_ELEMENTS:
                name += ELEMENT_OF
            typed_names.append((name, scope))
            if is_member and is_call:  # `const { a } = f()`: the member a of f's result
                bound_type = (*bound_type[:-1], bound_type[-1] + "()", name)
                is_call = False
            elif is_member:  # the type of that member: the path to it, resolved to its type
                bound_type = (*bound_type, name)
            elif how == READ_DECLARED and type_node.type in value_paths and scope >= 0:
                aliases.setdefault((scope, name), bound_type)
            owner = binding_scope(defs, scope)
            if (owner != scope and function_literals
                    and _in_function_literal(name_node, defs[scope].start_byte,
                                             function_literals)):
                # `var f = func(c *T) { c.m() }`: c is the literal's, read inside the value only
                owner = scope
            binding = Binding(owner, name, bound_type, is_call)
            if how == READ_DOCUMENTED:
                documented.append(binding)
            else:
                if ordered:
                    nodes.append((len(bindings), name_node, type_node))
                bindings.append(binding)
            if arguments:
                bindings.append(Binding(owner, name + TYPE_ARGUMENTS, arguments, False))
    # declared in a doc comment, a field's type comes before whatever is assigned to it
    return documented + bindings, typed_names, aliases, nodes



def completed_bindings(bindings: list[Binding],
                       refs: list[tuple[str, NamePath, int, int, int, int, tuple[str, ...]]],
                       raw_defs: dict[tuple[int, int, int], tuple[Any, str, Any, Any, Any]],
                       defs: list[Definition], spans: list[tuple[int, int, int]],
                       local_names: dict[int, set[str]], raw_returns: list[Any], root: Any,
                       plugin: Language, source: bytes) -> list[Binding]:
    """``bindings`` completed with what the plugin reads once the references are known (a type
    parameter's bound, an enum payload's places, a doc comment's types, fields copying
    locals), each copy of a name bound as that name is, and what functions declaring no
    return type return (which sets their ``type_hint`` in ``defs``)."""
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
    return bindings


def _in_function_literal(node: Any, start: int, literals: frozenset[str]) -> bool:
    """Whether ``node`` lies inside a function literal (a node of a type in ``literals``)
    that begins at or after ``start``."""
    parent = node.parent
    while parent is not None and parent.start_byte >= start:
        if parent.type in literals:
            return True
        parent = parent.parent
    return False



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

