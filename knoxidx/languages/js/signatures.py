"""A function's signature as extraction reads it (its parameters, return type, type
parameters and decorators), and what holds a function as its value (`const f = () => ..`)."""

from __future__ import annotations

from typing import Any

from knoxidx.parse import signatures as sig

# a function written as a value (`const f = () => ..`, `x = function () {..}`)
FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "generator_function"})
_DECORATORS = frozenset({"decorator"})
# what holds a function as its value, and in which field
FUNCTION_HOLDERS = {"variable_declarator": "value", "public_field_definition": "value",
                    "field_definition": "value", "assignment_expression": "right"}
_COMMENTS = frozenset({"comment"})


def signature_of(node: Any, source: bytes) -> sig.SignatureData | None:
    """A function's or method's parameters (TypeScript's `x?: T` optional, `this: T` its
    receiver, `...rest` variadic; a destructured one named by its pattern as written), return
    type, type parameters and decorators. ``node`` may be the declarator, class field or
    assignment whose value is the function (`const f = () => ...`, `static f = () => ...`)."""
    holder = FUNCTION_HOLDERS.get(node.type)
    function = node.child_by_field_name(holder) if holder is not None else node
    if function is None or (function is not node and function.type not in FUNCTION_VALUES):
        return None
    decorators = [c for c in function.named_children if c.type == "decorator"]
    if function.type == "method_definition" and not decorators:  # TypeScript's: before it
        decorators = sig.preceding(function, _DECORATORS, _COMMENTS, source)
    params: list[sig.Parameter] = []
    listed = function.child_by_field_name("parameters")
    for child in listed.named_children if listed is not None else ():
        if child.type in ("comment", "decorator"):
            continue
        params.append(_parameter(child, source))
    single = function.child_by_field_name("parameter")  # `x => x`
    if single is not None:
        params.append((sig.written(source, single), None, None, sig.POSITIONAL))
    type_parameters = function.child_by_field_name("type_parameters")
    return (tuple(params), _annotated(function, "return_type", source),
            tuple([sig.written(source, t) for t in type_parameters.named_children
                   if t.type != "comment"]) if type_parameters is not None else (),
            sig.decorator_names(decorators, source, "@"))


def _annotated(node: Any, field: str, source: bytes) -> str | None:
    """The type of ``node``'s annotation ``field`` (`: T`, `: x is T`, `: asserts x`) as
    written: its last named child, past the colon and any comment before it."""
    annotation = node.child_by_field_name(field)
    if annotation is None or not annotation.named_child_count:
        return None
    return sig.written(source, annotation.named_child(annotation.named_child_count - 1))


def _parameter(child: Any, source: bytes) -> sig.Parameter:
    """One parameter: TypeScript's required/optional_parameter, or JavaScript's pattern."""
    kind = sig.OPTIONAL if child.type == "optional_parameter" else sig.POSITIONAL
    if child.type in ("required_parameter", "optional_parameter"):
        pattern = child.child_by_field_name("pattern")
        type_text = _annotated(child, "type", source)
        default = sig.field_text(source, child, "value")
    elif child.type == "assignment_pattern":
        pattern, type_text = child.child_by_field_name("left"), None
        default = sig.field_text(source, child, "right")
    else:
        pattern, type_text, default = child, None, None
    if pattern is None:
        return (None, type_text, default, kind)
    if pattern.type == "rest_pattern":
        kind = sig.VARIADIC
    elif pattern.type == "this":
        kind = sig.RECEIVER
    return (sig.written(source, pattern).lstrip(".").lstrip(), type_text, default, kind)
