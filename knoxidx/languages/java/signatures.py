"""A Java declaration as extraction reads it: its modifiers, and a method's or constructor's
signature."""

from __future__ import annotations

from typing import Any

from knoxidx.languages.common import field_ids
from knoxidx.parse import signatures as sig


def declaration_modifiers(node: Any) -> Any:
    """A declaration's modifiers, always its first child. Not a scan of ``node.children``:
    every declarator of `int a, b, c, ...;` is a definition on that same node (10,000
    declarators: minutes)."""
    first = node.child(0)
    return first if first is not None and first.type == "modifiers" else None


_ANNOTATIONS = frozenset({"marker_annotation", "annotation"})


def signature_of(node: Any, source: bytes) -> sig.SignatureData:
    """A method's or constructor's parameters (`String... rest` variadic of String, `Foo
    this` its receiver, `byte b[]` of byte[]), return type (none for a constructor), type
    parameters and annotations."""
    (name_field, type_field, parameters_field, type_parameters_field,
     dimensions_field) = signature_fields()
    written = sig.written
    params: list[sig.Parameter] = []
    listed = node.child_by_field_id(parameters_field)
    for child in listed.named_children if listed is not None else ():
        kind = child.type
        if kind == "formal_parameter":
            name = child.child_by_field_id(name_field)
            declared = child.child_by_field_id(type_field)
            params.append((None if name is None else written(source, name),
                           _typed(source, declared, child.child_by_field_id(dimensions_field)),
                           None, sig.POSITIONAL))
        elif kind == "spread_parameter":
            typed = [c for c in child.named_children
                     if c.type not in ("modifiers", "variable_declarator")]
            declarator = [c for c in child.named_children if c.type == "variable_declarator"]
            params.append((sig.field_text(source, declarator[0], "name") if declarator else None,
                           written(source, typed[0]) if typed else None, None,
                           sig.VARIADIC))
        elif kind == "receiver_parameter":
            typed = [c for c in child.named_children if c.type not in _ANNOTATIONS]
            params.append(("this", written(source, typed[0]) if typed else None, None,
                           sig.RECEIVER))
    modifiers = declaration_modifiers(node)
    annotations = [c for c in modifiers.named_children
                   if c.type in _ANNOTATIONS] if modifiers is not None else []
    type_parameters = node.child_by_field_id(type_parameters_field)
    returned = node.child_by_field_id(type_field)
    return (tuple(params),
            _typed(source, returned, node.child_by_field_id(dimensions_field)),
            tuple([written(source, t) for t in type_parameters.named_children
                   if t.type not in ("line_comment", "block_comment")])
            if type_parameters is not None else (),
            sig.decorator_names(annotations, source, "@") if annotations else ())


def _typed(source: bytes, declared: Any, dimensions: Any) -> str | None:
    """A declared type as written, with the array dimensions written after the name or the
    parameter list (`byte b[]`, `int m()[]`: byte[], int[]), as javac has it."""
    if declared is None:
        return None
    if dimensions is None:
        return sig.written(source, declared)
    return sig.cut(sig.written(source, declared) + sig.written(source, dimensions))


def signature_fields() -> tuple[int, ...]:
    return field_ids("java", ("name", "type", "parameters", "type_parameters", "dimensions"))
