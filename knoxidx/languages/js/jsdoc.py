"""Doc comments: the comment above a declaration's statement, and the types a JSDoc comment
declares there (`@type`, `@param`, `@return`), which TypeScript reads for a JavaScript file."""

from __future__ import annotations

import re
from typing import Any

from knoxidx.core.facts import NamePath
from knoxidx.languages.common import preceding_comment
from knoxidx.languages.js.signatures import FUNCTION_HOLDERS
from knoxidx.parse.definitions import node_text
from knoxidx.parse.name_paths import alias_path
from knoxidx.parse.siblings import previous_named


def declaring_statement(node: Any) -> Any:
    """The statement a declaration sits in (through `const x = ...` and `export`)."""
    # each parent asked once: tree-sitter descends from the root to answer it
    target = node
    if target.type == "variable_declarator":
        declaration = target.parent
        if declaration is not None:
            target = declaration
    above = target.parent
    if above is not None and above.type == "export_statement":
        target = above
    return target


def doc_comment(node: Any, source: bytes) -> str:
    return preceding_comment(declaring_statement(node), source)


# JSDoc's return tag (`@return {Vector3}`, `@returns {this}`): the type TypeScript reads for a
# JavaScript function; a type with braces inside (`{{ a: number }}`) names no class
_JSDOC_RETURN = re.compile(rb"@returns?\s*\{([^{}]+)\}")


# JSDoc's parameter tag: `@param {Vector3} target`, `@param {Vector3} [start=(0,0,0)]`; not
# `@param {number} [options.x]`, a property of a parameter
_JSDOC_PARAM = re.compile(rb"@param\s*\{([^{}]+)\}\s*\[?\s*((?:[^\W\d]|\$)[\w$]*)(?![\w$.])")


# JSDoc's type tag: `@type {?Node}`, the declared type of what the statement below assigns
JSDOC_TYPE = re.compile(rb"@type\s*\{([^{}]+)\}")


def documented_binding(statement: Any, source: bytes) -> NamePath:
    """The type the JSDoc comment right above an assignment declares (`/** @type {?Node} */
    this.outputNode = null;`), as TypeScript reads it in a .js file; () where none does (a
    union of several named types names none)."""
    comment = jsdoc_comment(statement, source)
    if comment is None:
        return ()
    declared = JSDOC_TYPE.search(source, comment.start_byte, comment.end_byte)
    return alias_path(jsdoc_type(declared.group(1))) if declared else ()


def jsdoc_comment(node: Any, source: bytes) -> Any:
    """The JSDoc comment (`/** ... */`) right above a function's statement, or None."""
    target = declaring_statement(node)
    comment = previous_named(target, source)
    if (comment is None or comment.type != "comment"
            or comment.end_point[0] < target.start_point[0] - 1
            or not source.startswith(b"/**", comment.start_byte)):
        return None
    return comment


def jsdoc_type(declared: bytes) -> str:
    return declared.decode("utf-8", "replace").strip().lstrip("?!")


# what documented_types says a function returns when it returns an object literal of its own
# (see OWN_MEMBERS)
OWN_RETURNED = "{}"
_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})
_CASTS = frozenset({"as_expression", "satisfies_expression"})


def _returns_own_object(node: Any, source: bytes) -> bool:
    """Whether a function's body ends returning an object literal, written there or held by
    a variable its body declares so (`const api = {..}; ..; return api;`): a factory, whose
    result has the object's methods (defined in the function, see OWN_MEMBERS)."""
    holder = FUNCTION_HOLDERS.get(node.type)
    function = node.child_by_field_name(holder) if holder is not None else node
    body = function.child_by_field_name("body") if function is not None else None
    if body is None or body.type != "statement_block" or not body.named_child_count:
        return False
    last = body.named_child(body.named_child_count - 1)
    if last.type != "return_statement" or not last.named_child_count:
        return False
    returned = last.named_child(0)
    if returned.type in _CASTS and returned.named_child_count:  # `return {..} as const`
        returned = returned.named_child(0)
    if returned.type == "object":
        return True
    if returned.type != "identifier":
        return False
    name = node_text(source, returned)
    for statement in body.named_children:
        if statement.type in _DECLARATIONS:
            for declarator in statement.named_children:
                bound = declarator.child_by_field_name("name")
                value = declarator.child_by_field_name("value")
                if bound is not None and node_text(source, bound) == name:
                    return value is not None and value.type == "object"
    return False


def documented_types(node: Any, source: bytes) -> tuple[str, list[tuple[str, str]]]:
    """What a JavaScript function's JSDoc comment declares, the types TypeScript reads for a
    .js file: the return type (`@return {T}`, "" for none) and (name, type as written) of each
    parameter it types (`@param {T} name`). Only parameters the function has, written without
    a type of their own (TypeScript's annotated ones are read from their annotations)."""
    comment = jsdoc_comment(node, source)
    if comment is None:
        return (OWN_RETURNED if _returns_own_object(node, source) else ""), []
    start, end = comment.start_byte, comment.end_byte
    declared = _JSDOC_RETURN.search(source, start, end)
    returned = jsdoc_type(declared.group(1)) if declared else ""
    if not returned and _returns_own_object(node, source):
        returned = OWN_RETURNED
    if source.find(b"@param", start, end) < 0:
        return returned, []
    holder = FUNCTION_HOLDERS.get(node.type)
    function = node.child_by_field_name(holder) if holder is not None else node
    listed = function.child_by_field_name("parameters") if function is not None else None
    if listed is None:
        return returned, []
    names = set()
    for parameter in listed.named_children:
        if parameter.type == "assignment_pattern":
            parameter = parameter.child_by_field_name("left")
        if parameter is not None and parameter.type == "identifier":
            names.add(node_text(source, parameter))
    typed: list[tuple[str, str]] = []
    for param in _JSDOC_PARAM.finditer(source, start, end):
        name = param.group(2).decode("utf-8", "replace")
        if name in names:
            typed.append((name, jsdoc_type(param.group(1))))
    return returned, typed
