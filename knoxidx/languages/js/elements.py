"""Collections' elements: what a loop's or an indexed read's value is an element of, the type
of a collection's elements where the source says it, and the methods of arrays, sets and maps
that pass a callback, keep or return their elements."""

from __future__ import annotations

import re
from typing import Any

from knoxidx.core.facts import NamePath
from knoxidx.languages.js.jsdoc import JSDOC_TYPE, jsdoc_comment, jsdoc_type
from knoxidx.parse.definitions import node_text
from knoxidx.parse.name_paths import (
    alias_path,
    element_path,
    indexed_path,
    name_path,
    split_top_level,
)

# what an element is read from by a path (`xs`, `this.children`, `this.getAll()`)
_COLLECTIONS = frozenset({"identifier", "member_expression", "call_expression"})
# an index that names a member, not an element (`o["key"]`, `o[`key`]`)
_KEYS = frozenset({"string", "template_string"})
_KEY_INDEX = re.compile(r"\[\s*['\"`]")


def element_binding(value_node: Any, source: bytes) -> tuple[NamePath, bool]:
    """`const child = children[i]`, `for (const x of xs)`: x is an element of what xs names
    (the resolver reads the collection's element type, see ``ELEMENT_OF``); not `o["key"]`,
    a member."""
    if value_node.type == "subscript_expression":
        index = value_node.child_by_field_name("index")
        if index is None or index.type in _KEYS:
            return (), False
        value_node = value_node.child_by_field_name("object")
    if value_node is None or value_node.type not in _COLLECTIONS:
        return (), False
    return element_path(node_text(source, value_node)), False


def indexed_receiver(text: str) -> NamePath:
    """The path of a member read on an element (`this.children[i].update`: ("this",
    "children", "[]", "update")), as name_paths.indexed_path reads it; () where an index is
    a quoted key (`o["key"].run`: a member of o, whose type is not known)."""
    if _KEY_INDEX.search(text):
        return ()
    return indexed_path(text)


def elements_binding(node: Any, source: bytes) -> NamePath:
    """The type of the elements of a collection, where the source says it: the JSDoc type of
    an assignment (`/** @type {Array<Plane>} */ this.planes = ..`, ``node`` the statement),
    a TypeScript annotation (`const xs: Plane[] = []`), the class of the object created by
    each item of an array literal (`[new Vector3(), new Vector3()]`) or pushed into it
    (`xs.push(new Vector3())`, ``node`` the arguments); () where it says none."""
    kind = node.type
    if kind == "expression_statement":
        comment = jsdoc_comment(node, source)
        declared = JSDOC_TYPE.search(source, comment.start_byte, comment.end_byte) \
            if comment is not None else None
        element = element_type(jsdoc_type(declared.group(1))) if declared else ""
        return alias_path(element) if element else ()
    if kind in _ANNOTATED_COLLECTIONS:
        written = node_text(source, node)
        # a map's elements are its entries (`for (const [k, v] of m)`), not its values
        element = "" if _MAPPING.match(written) else element_type(written)
        return alias_path(element) if element else ()
    if kind == "new_expression":  # `xs[i] = new Vector3()`
        constructor = node.child_by_field_name("constructor")
        return name_path(node_text(source, constructor)) \
            if constructor is not None and constructor.type in SPREAD_VALUES else ()
    created: NamePath = ()
    for item in node.named_children:
        if item.type == "comment":  # `/*@__PURE__*/ new Vector3()`
            continue
        constructor = item.child_by_field_name("constructor") if item.type == "new_expression" \
            else None
        if constructor is None or constructor.type not in SPREAD_VALUES:
            return ()
        path = name_path(node_text(source, constructor))
        if created and path != created:
            return ()  # of several classes: no one class's methods are meant
        created = path
        if kind == "arguments":
            break  # `xs.push(new A(), b)`: the first says it
    return created


_ANNOTATED_COLLECTIONS = frozenset({"array_type", "generic_type"})
SPREAD_VALUES = frozenset({"identifier", "member_expression"})


# a field's declaration (`#observers: Array<Observer> = []`): the type after its name
_DECLARED_FIELD = re.compile(
    r"\s*(?:(?:public|private|protected|readonly|static|declare|override|abstract)\s+)*"
    r"[#\w$]+\s*[?!]?\s*:(?!:)")
_INITIALIZER = re.compile(r"\s=(?![=>])")
_COLLECTION = re.compile(r"(?:Readonly)?(?:Array|Set)\s*<(.*)>\Z", re.DOTALL)
_MAPPING = re.compile(r"(?:Readonly|Weak)?Map\s*<(.*)>\Z", re.DOTALL)
# the methods of arrays, sets and maps whose callback's first parameter is an element (a
# map's value): `xs.forEach((x) => ..)`
ELEMENT_CALLBACKS = frozenset({
    "forEach", "map", "filter", "find", "findLast", "findIndex", "findLastIndex", "some",
    "every", "flatMap", "toSorted"})
# ... and those returning the receiver's elements (some of them): `xs.filter(..).map(..)`
ELEMENTS_KEPT = frozenset({"filter", "slice", "toSorted", "toReversed", "concat"})
# ... and those returning one of them (a map's value: `m.get(k)`)
ELEMENT_RESULTS = frozenset({"find", "findLast", "at", "pop", "shift", "get"})


def element_type(declared: str) -> str:
    """The type of the elements of a collection declared ``declared`` (a field's
    declaration, or a type as written): `T[]`, `Array<T>`, `Set<T>` and their read-only
    kinds give T, `Map<K, V>` (and `WeakMap<K, V>`) gives V; "" for others (a union of
    them, a tuple)."""
    field = _DECLARED_FIELD.match(declared)
    text = declared[field.end():] if field else declared
    text = _INITIALIZER.split(text, maxsplit=1)[0].strip().removeprefix("readonly ").strip()
    if text.endswith("[]"):
        element = text[:-2].strip()
    else:
        collection = _COLLECTION.match(text) or _MAPPING.match(text)
        if collection is None:
            return ""
        arguments = split_top_level(collection.group(1))
        if len(arguments) != (1 if collection.re is _COLLECTION else 2):
            return ""
        element = arguments[-1].strip()
    if not element or element[0] in "({[" or "|" in element or "&" in element:
        return ""
    return element
