"""Python: a ``def``'s signature as data."""

from __future__ import annotations

from typing import Any

from knoxidx.parse import signatures as sig


def signature_of(node: Any, source: bytes) -> sig.SignatureData:
    """A ``def``'s parameters, return type, type parameters (3.12's ``def f[T]``) and
    decorators. A method's first parameter is its ``self`` (``cls``), unless a
    ``@staticmethod``."""
    decorated = node.parent
    decorators = sig.decorator_names(
        [c for c in decorated.named_children if c.type == "decorator"], source, "@"
    ) if decorated is not None and decorated.type == "decorated_definition" else ()
    holder = decorated if decorators else node
    body = holder.parent if holder is not None else None
    takes_self = (body is not None and body.parent is not None
                  and body.parent.type == "class_definition" and "staticmethod" not in decorators)
    params: list[sig.Parameter] = []
    kind = sig.POSITIONAL
    listed = node.child_by_field_name("parameters")
    for child in listed.named_children if listed is not None else ():
        child_type = child.type
        if child_type == "keyword_separator":
            kind = sig.KEYWORD_ONLY
            continue
        if child_type == "positional_separator":
            params = [p if p[3] != sig.POSITIONAL else (p[0], p[1], p[2], sig.POSITIONAL_ONLY)
                      for p in params]
            continue
        if child_type == "comment":
            continue
        name_node = child.child_by_field_name("name")
        if name_node is None:  # `x`, `*args`, or typed_parameter's first child
            name_node = child if child_type != "typed_parameter" else child.named_child(0)
        param_kind = kind
        if name_node is not None and name_node.type == "list_splat_pattern":
            param_kind, kind = sig.VARIADIC, sig.KEYWORD_ONLY
        elif name_node is not None and name_node.type == "dictionary_splat_pattern":
            param_kind = sig.VARIADIC_KEYWORD
        elif takes_self and not params:
            param_kind = sig.SELF
        name = sig.written(source, name_node).lstrip("*") if name_node is not None else None
        params.append((name, sig.field_text(source, child, "type"),
                       sig.field_text(source, child, "value"), param_kind))
    type_parameters = node.child_by_field_name("type_parameters")
    return (tuple(params), sig.field_text(source, node, "return_type"),
            tuple([sig.written(source, t) for t in type_parameters.named_children])
            if type_parameters is not None else (), decorators)
