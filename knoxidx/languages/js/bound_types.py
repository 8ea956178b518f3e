"""What a binding holds where extraction reads it from the tree: an object literal of
spreads, a callback's first parameter, a `return`'s value, an inline object type's properties,
the names an object pattern binds."""

from __future__ import annotations

from typing import Any

from knoxidx.core.facts import CALLBACK_OF, TYPES_JOINER, NamePath
from knoxidx.languages.js.elements import SPREAD_VALUES
from knoxidx.parse.definitions import node_text
from knoxidx.parse.name_paths import name_path, reference_path, split_top_level

MAX_SPREADS = 4  # the resolver reads at most four types of a value


def declared_binding_type(type_node: Any, source: bytes) -> NamePath | None:
    """What an object literal of spreads holds (`const z = { ...schemas, ...checks }`): the
    members of each value spread, their paths joined by ``TYPES_JOINER`` (a namespace's
    functions, called as `z.string()`); None for any other node, read as declared types are."""
    if type_node.type != "object":
        return None
    joined: list[str] = []
    spreads = 0
    for child in type_node.named_children:
        if child.type != "spread_element" or not child.named_child_count:
            continue
        spread = child.named_child(0)
        path = name_path(node_text(source, spread)) if spread.type in SPREAD_VALUES else ()
        if path and spreads < MAX_SPREADS:
            joined.extend((TYPES_JOINER, *path) if joined else path)
            spreads += 1
    return tuple(joined)


_CALLEES = frozenset({"identifier", "member_expression"})


def callback_binding(callback: Any, source: bytes) -> NamePath:
    """What the first parameter of a function passed to a call holds (`doc.indented((d) =>
    ..)`, `xs.forEach((x) => ..)`): the called path and the argument's position after
    ``CALLBACK_OF`` (resolution reads the called function's declared parameter there, or
    the receiver's elements); () where the call names no function (`f()((x) => ..)`)."""
    arguments = callback.parent
    call = arguments.parent if arguments is not None else None
    if call is None or call.type != "call_expression":
        return ()
    callee = call.child_by_field_name("function")
    if callee is None or callee.type not in _CALLEES:
        return ()
    path = reference_path(source, callee.start_byte, callee.end_byte)
    if not path or path[0] == "?":
        return ()
    position = 0
    for argument in arguments.named_children:
        if argument.start_byte == callback.start_byte:
            return (*path, f"{CALLBACK_OF}{position}")
        if argument.type != "comment":
            position += 1
    return ()


def bound_names(node: Any) -> list[Any]:
    """The names a `@binding.names` node binds: an object pattern's shorthand ones
    (`{ board, size }`)."""
    return [c for c in node.named_children if c.type == "shorthand_property_identifier_pattern"]


# what a function's own `return` may sit in: a function the index holds as a definition (a
# declaration, a method, one assigned to a name, a property or a field); a `return` in any
# other (a callback passed to a call, a function returned) is that function's, not the
# definition's around it
_FUNCTION_NODES = frozenset({"function_declaration", "generator_function_declaration",
                             "method_definition", "arrow_function", "function_expression",
                             "generator_function", "function"})
_DEFINED_FUNCTIONS = frozenset({"function_declaration", "generator_function_declaration",
                                "method_definition"})
_HOLDING_FUNCTIONS = frozenset({"variable_declarator", "pair", "assignment_expression",
                                "public_field_definition", "field_definition"})
_NOTHING = frozenset({"null", "undefined"})


def returned_value(node: Any, source: bytes) -> tuple[NamePath, bool] | None:
    """What a `return` statement's value holds (see ``ReadsReturns``): the class a `new`
    makes (`return new ShaderMaterial(..)`) or the path a call calls (`return
    _getMaterial(..)`), both read as a call's; a name or a member read (`return this`,
    `return target`, `return this._cache`); NOTHING_RETURNED for `return`, `return null`
    and `return undefined`, and for a `return` in a function the index holds no definition
    of (a callback's: none of the definition's around it). None for any other value, and
    for a `yield` or an `async` function's (a generator, a promise)."""
    if node.type != "return_statement":
        return None
    if not _returns_from_definition(node):
        return (), False
    value = next((c for c in node.named_children if c.type != "comment"), None)
    while value is not None and value.type == "parenthesized_expression" \
            and value.named_child_count == 1:
        value = value.named_child(0)
    if value is None or value.type in _NOTHING:
        return (), False
    called = value.type in ("call_expression", "new_expression")
    if called:
        value = value.child_by_field_name(
            "function" if value.type == "call_expression" else "constructor")
    if value is None or value.type not in ("identifier", "member_expression", "this"):
        return None
    text = node_text(source, value)
    if "(" in text or "[" in text or "?" in text:
        return None  # a call or an index inside the chain: no path the binding could name
    path = name_path(text)
    return (path, called) if path else None


def returned_path(path: NamePath, called: bool) -> tuple[NamePath, bool]:
    """What a returned binding holds (see ``ReadsReturns``): what the binding says."""
    return path, called


def _returns_from_definition(node: Any) -> bool:
    """Whether the `return` at ``node`` is that of a function the index defines."""
    parent = node.parent
    while parent is not None and parent.type not in _FUNCTION_NODES:
        parent = parent.parent
    if parent is None:
        return False
    if parent.type in _DEFINED_FUNCTIONS:
        return True
    holder = parent.parent
    return holder is not None and holder.type in _HOLDING_FUNCTIONS


_NAMED_TYPES = ("type_identifier", "nested_type_identifier")


def property_types(object_type: Any, source: bytes) -> dict[str, Any]:
    """Property name -> the node naming its type, in an inline object type (`{ board: Board;
    items: List<Item> }`), for the properties typed by a named or generic type."""
    out: dict[str, Any] = {}
    for prop in object_type.named_children:
        if prop.type != "property_signature":
            continue
        name = prop.child_by_field_name("name")
        annotation = prop.child_by_field_name("type")
        if name is None or annotation is None or not annotation.named_children:
            continue
        typed = annotation.named_children[0]
        if typed.type == "generic_type":
            typed = typed.child_by_field_name("name")
        if typed is not None and typed.type in _NAMED_TYPES:
            out.setdefault(node_text(source, name), typed)
    return out


def callback_parameter(declared: str) -> str:
    """The type of the first parameter of the function type ``declared`` (`(doc: Doc) =>
    void`), "" where it declares none."""
    text = declared.strip()
    if not text.startswith("("):
        return ""
    depth, end = 0, -1
    for at, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if depth == 0:
            end = at
            break
    if end < 0 or not text[end + 1:].lstrip().startswith("=>"):
        return ""  # a type in parentheses, no function type
    first = split_top_level(text[1:end])[0]
    name, colon, typed = first.partition(":")
    typed = typed.strip()
    if not colon or name.strip().startswith("...") or not typed or "|" in typed:
        return ""
    return typed
