"""Rust: a function's signature as the index stores it (parameters, return type, generics,
attributes), and the nodes an item's attributes are read from."""

from __future__ import annotations

from typing import Any

from knoxidx.parse import signatures as sig

ATTRIBUTES = frozenset({"attribute_item"})
COMMENTS = frozenset({"line_comment", "block_comment"})


def signature_of(node: Any, source: bytes) -> sig.SignatureData | None:
    """A function's parameters (`self`, `&mut self` or `self: Box<Self>` its self; a pattern
    `(x, y)` named as written), return type, generics (lifetimes too) and attributes (the
    `#[...]` just before it). A macro has none of them."""
    if node.type not in ("function_item", "function_signature_item"):
        return None
    params: list[sig.Parameter] = []
    listed = node.child_by_field_name("parameters")
    for child in listed.named_children if listed is not None else ():
        if child.type == "self_parameter":
            params.append(("self", sig.written(source, child), None, sig.SELF))
        elif child.type == "parameter":
            pattern = child.child_by_field_name("pattern")
            name = sig.written(source, pattern) if pattern is not None else "_"
            params.append((name, sig.field_text(source, child, "type"), None,
                           sig.SELF if name == "self" else sig.POSITIONAL))
        elif child.type == "variadic_parameter":
            params.append((None, None, None, sig.VARIADIC))
    type_parameters = node.child_by_field_name("type_parameters")
    return (tuple(params), sig.field_text(source, node, "return_type"),
            tuple([sig.written(source, t) for t in type_parameters.named_children
                   if t.type not in COMMENTS]) if type_parameters is not None else (),
            tuple([sig.written(source, a)[2:-1].strip()
                   for a in sig.preceding(node, ATTRIBUTES, COMMENTS, source)]))
