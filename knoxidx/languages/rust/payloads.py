"""What a variant's or a tuple struct's payload holds: `enum E { V(A, Box<B>) }` declares the
payload of E::V, A at 0 and B at 1, `S { a: A }` E::S's, A at a, and `struct W(Inner)` W's,
Inner at 0. Extraction
records each place's declared type (:func:`payload_declarations`, a binding in the type's
scope named by ``payload_name``); a name a pattern binds there (`E::V(_, b) => b.run()`,
``PAYLOAD_OF``) is read at resolution as that place's type (:func:`payload_types`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from knoxidx.core.facts import ITEMS_HEAD, Binding, Definition, payload_name
from knoxidx.core.symbols import DEFINITION_TAG, INSTANCE_TAG, Symbol
from knoxidx.parse.definitions import node_text
from knoxidx.parse.file_index import CLASS, FileIndex
from knoxidx.parse.name_paths import type_path

if TYPE_CHECKING:
    from knoxidx.languages.protocol import ResolverView

_WITH_PAYLOADS = frozenset({"enum_item", "struct_item"})
# a tuple, a raw pointer, an array or a function (behind references and `Box`es): no named
# type's methods, though a declared type reads the first of a tuple's and a pointer's pointee
_UNNAMED = re.compile(
    r"(?:&\s*(?:'\w+\s+)?(?:mut\s+)?|(?:(?:std|alloc)::\w+::)?(?:Box|Arc|Rc)\s*<\s*)*"
    r"(?:[(*\[]|(?:unsafe\s+)?(?:extern\b[^(]*)?fn\b)")
_TUPLE = "ordered_field_declaration_list"
MAX_TYPES = 4  # as many types of a value as the resolver reads


def payload_declarations(root: Any, defs: Sequence[Definition], source: bytes
                         ) -> list[tuple[int, str, str]]:
    """(the type's definition, ``payload_name``, the declared type as written) of each place
    of each variant of the file's enums (a tuple's or a struct-like one's) and of its tuple
    structs. A type written of the item's own type parameters (`V(T)`, `V(Box<T>)`) is left
    out: what it holds is the type argument of each use, which the pattern does not say; so
    are tuples, raw pointers, arrays and functions (`V((A, B))`: a tuple's methods are std's,
    not A's)."""
    out: list[tuple[int, str, str]] = []
    for index, d in enumerate(defs):
        if d.kind != CLASS or b"(" not in source[d.start_byte:d.end_byte]:
            continue
        node = root.descendant_for_byte_range(d.start_byte, d.end_byte)
        if node is None or node.type not in _WITH_PAYLOADS:
            continue
        body = node.child_by_field_name("body")
        if body is None:
            continue
        parameters = _type_parameters(node, source)
        if body.type == _TUPLE:  # `struct W(Inner);`
            out.extend(_places(index, "", body, parameters, source))
            continue
        for variant in body.named_children:
            payload = variant.child_by_field_name("body") if variant.type == "enum_variant" \
                else None
            name = variant.child_by_field_name("name") if payload is not None else None
            if payload is not None and name is not None:
                out.extend(_places(index, node_text(source, name), payload, parameters, source))
    return out


def _places(index: int, constructor: str, payload: Any, parameters: frozenset[str],
            source: bytes) -> list[tuple[int, str, str]]:
    """The places of a tuple payload by index, a struct-like variant's (`S { a: A }`) by
    field name."""
    places: list[tuple[int | str, Any]]
    if payload.type == _TUPLE:
        places = list(enumerate(payload.children_by_field_name("type")))
    else:
        places = []
        for field in payload.named_children:
            name, declared = field.child_by_field_name("name"), field.child_by_field_name("type")
            if field.type == "field_declaration" and name is not None and declared is not None:
                places.append((node_text(source, name), declared))
    out: list[tuple[int, str, str]] = []
    for place, declared in places:
        written = node_text(source, declared)
        if _UNNAMED.match(written):
            continue
        named = type_path(written)
        if named and named[0] not in parameters:
            out.append((index, payload_name(constructor, place), written))
    return out


def _type_parameters(item: Any, source: bytes) -> frozenset[str]:
    """The names of the type parameters an enum or struct declares (`<T, U: Clone>`)."""
    parameters = item.child_by_field_name("type_parameters")
    if parameters is None:
        return frozenset()
    names: set[str] = set()
    for parameter in parameters.named_children:
        name = parameter.child_by_field_name("name") if parameter.type == "type_parameter" \
            else None
        if name is not None:
            names.add(node_text(source, name))
    return frozenset(names)


def payload_types(r: ResolverView, fi: FileIndex, binding: Binding, depth: int
                  ) -> list[Symbol]:
    """The instance types of the name ``binding`` binds in a pattern's payload (its path:
    the variant's, then the place, see ``PAYLOAD_OF``): a tuple struct's (`W(x)`, `Self(x)`)
    where the path names one, else a variant's of the enum the path names before the
    variant's name (`E::V(x)`, `Self::V(x)`, `module::E::V(x)`), or of the enum an import
    brings a bare variant from (`use E::*;`). None where none declares that place (`Err(e)`:
    std's)."""
    *variant, place = binding.type_path
    if not variant:
        return []
    found = _declared(r, fi, binding.scope, tuple(variant), place, depth)
    if not found and len(variant) > 1:
        found = _declared(r, fi, binding.scope, tuple(variant[:-1]), variant[-1] + place,
                          depth)
    elif not found:
        found = _imported(r, fi, binding.scope, variant[0], place, depth)
    return found


def _imported(r: ResolverView, fi: FileIndex, scope: int, name: str, place: str, depth: int
              ) -> list[Symbol]:
    """A variant named bare (`V(x) =>`) that an import in scope brings from its enum (`use
    E::*;`, `use E::V;`, `use E::V as W;`): its payload at ``place``; none where imports of
    two enums could bring it."""
    found: list[Symbol] = []
    for imp in fi.facts.imports:
        variant = name if imp.name == "*" else imp.name if imp.alias == name else ""
        if not variant or not _visible(fi, imp.scope, scope):
            continue
        typed = _declared(r, fi, imp.scope, tuple(imp.module.split("::")), variant + place,
                          depth)
        if typed and found:
            return []
        found = typed or found
    return found


def _visible(fi: FileIndex, declared: int, scope: int) -> bool:
    """Whether what ``declared`` (a definition's index, -1 at the top) holds is in scope in
    ``scope``: that definition is ``scope`` or encloses it."""
    defs = fi.facts.defs
    while scope >= 0 and scope != declared:
        scope = defs[scope].parent
    return scope == declared


def _declared(r: ResolverView, fi: FileIndex, scope: int, owner: tuple[str, ...], name: str,
              depth: int) -> list[Symbol]:
    """The instance types of the payload binding ``name`` of each type ``owner`` names from
    ``scope``, its declared type read from the type's parent's scope (a declared type names
    no member of the enum)."""
    found, _ = r.resolve_path(fi, (ITEMS_HEAD, *owner), scope, want_type=True)
    out: list[Symbol] = []
    for symbol in found[:MAX_TYPES]:
        if symbol[0] != DEFINITION_TAG and symbol[0] != INSTANCE_TAG:
            continue
        where = r.index(symbol[1])
        held = where.bindings.get((symbol[2], name)) if where is not None else None
        if where is None or held is None:
            continue
        parent = where.facts.defs[symbol[2]].parent
        for typed in r.binding_type(where, Binding(parent, "", held.type_path, False),
                                    depth + 1):
            if typed not in out:
                out.append(typed)
    return out
