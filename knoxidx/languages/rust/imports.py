"""Rust: what a `use` tree, a `mod foo;` (its `#[path]` and `#[macro_use]`) and an `extern
crate` import, as the index's imports."""

from __future__ import annotations

import re
from typing import Any

from knoxidx.core.facts import Import
from knoxidx.languages.rust.crates import PATH_MODULE
from knoxidx.languages.rust.macro_scope import macro_use
from knoxidx.languages.rust.signatures import ATTRIBUTES, COMMENTS
from knoxidx.parse import signatures as sig
from knoxidx.parse.definitions import node_text


def decode_import(node: Any, scope: int, source: bytes) -> list[Import]:
    line = node.start_point[0] + 1
    if node.type == "mod_item":  # `mod foo;` loads foo.rs / foo/mod.rs
        name = node_text(source, node.child_by_field_name("name"))
        attributes = [node_text(source, a)
                      for a in sig.preceding(node, ATTRIBUTES, COMMENTS, source)]
        module = "self::" + name
        for attribute in attributes:
            written = _PATH_ATTRIBUTE.match(attribute)
            if written:  # `#[path = "../gen_helper.rs"] mod helper;` loads that file
                module = PATH_MODULE + written.group(1)
        return [Import(module, "", name, line, scope),
                *macro_use(module, attributes, line, scope)]
    if node.type == "extern_crate_declaration":
        name_node = node.child_by_field_name("name")
        alias_node = node.child_by_field_name("alias")
        if name_node is None:
            return []
        name = node_text(source, name_node)
        alias = node_text(source, alias_node) if alias_node else name
        attributes = [node_text(source, a)
                      for a in sig.preceding(node, ATTRIBUTES, COMMENTS, source)]
        return [Import(name, "", alias, line, scope), *macro_use(name, attributes, line, scope)]
    argument = node.child_by_field_name("argument")
    out: list[Import] = []
    if argument is not None:
        _use_tree(argument, "", line, scope, out, source)
    return out


_PATH_ATTRIBUTE = re.compile(r'#\[\s*path\s*=\s*"([^"\\]+)"\s*\]\Z')


def _join(prefix: str, part: str) -> str:
    return f"{prefix}::{part}" if prefix else part


def _use_tree(root: Any, prefix: str, line: int, scope: int, out: list[Import],
              source: bytes) -> None:
    """The imports of a `use` tree, in source order. Walked with a stack, not recursion: a
    `use a::{a::{...}}` nested a few hundred deep ran into Python's recursion limit (inside
    py-tree-sitter's ``node.text`` when the text was read through it: py-tree-sitter 0.26
    crashes on an exception there, SIGSEGV, instead of raising it)."""
    stack = [(root, prefix)]
    while stack:
        node, prefix = stack.pop()
        kind = node.type
        if kind in ("identifier", "crate", "self", "super", "scoped_identifier"):
            full = _join(prefix, node_text(source, node).replace(" ", ""))
            module, _, name = full.rpartition("::")
            if name == "self":  # `use a::b::{self}` binds b
                module, _, name = module.rpartition("::")
                out.append(Import(_join(module, name) if module else name, "", name, line, scope))
            elif name in ("crate", "super"):
                out.append(Import(full, "", "", line, scope))
            else:
                out.append(Import(module, name, name, line, scope))
        elif kind == "use_as_clause":
            path = node.child_by_field_name("path")
            alias = node.child_by_field_name("alias")
            full = _join(prefix, node_text(source, path).replace(" ", ""))
            module, _, name = full.rpartition("::")
            bound = node_text(source, alias) if alias else name
            out.append(Import(module, name, bound, line, scope))
        elif kind == "use_wildcard":
            inner = node.named_children[0] if node.named_children else None
            module = (_join(prefix, node_text(source, inner).replace(" ", ""))
                      if inner is not None else prefix)
            out.append(Import(module, "*", "", line, scope))
        elif kind == "scoped_use_list":
            path = node.child_by_field_name("path")
            new_prefix = (_join(prefix, node_text(source, path).replace(" ", ""))
                          if path is not None else prefix)
            use_list = node.child_by_field_name("list")
            if use_list is not None:
                stack.extend((child, new_prefix) for child in reversed(use_list.named_children))
        elif kind == "use_list":
            stack.extend((child, prefix) for child in reversed(node.named_children))
