"""Items written inside a macro call: tokio declares much of its API in `cfg_rt! { ... }` and
syn its syntax types in `ast_struct! { ... }`, and tree-sitter reads a macro's body as tokens
only. Where a braced macro call stands among items and its body parses on its own as items,
the macro's name and braces are blanked out (spaces, so every byte and line keeps its place)
and the file is parsed again: the items are then extracted where they stand. A body that does
not parse as items (`bitflags! { struct F: u32 {..} }`, `lazy_static!`) is left as it was."""

from __future__ import annotations

from typing import Any

from knoxidx.parse.tree_parse import parse_tree

# what an item list holds: the file's top level, and `mod`, `impl` and `trait` bodies
_ITEM_LISTS = frozenset({"source_file", "declaration_list"})
_WITH_ITEM_LIST = frozenset({"mod_item", "impl_item", "trait_item"})
_ITEMS = frozenset({
    "function_item", "function_signature_item", "struct_item", "enum_item", "union_item",
    "trait_item", "impl_item", "type_item", "const_item", "static_item", "mod_item",
    "use_declaration", "extern_crate_declaration", "foreign_mod_item", "macro_invocation",
    "macro_definition", "attribute_item", "inner_attribute_item", "line_comment",
    "block_comment", "associated_type", "empty_statement",
})
# macro calls inside macro calls (`cfg_rt! { cfg_rt_multi_thread! { .. } }`): tokio nests two
MAX_NESTING = 4
_SPACE, _NEWLINE = ord(" "), ord("\n")


def unwrap_item_macros(tree: Any, source: bytes, parser: Any) -> tuple[bytes, Any] | None:
    """``source`` with the macro calls whose bodies are items blanked around those bodies, and
    its tree, or None where there is none. ``tree`` (``source``'s) is edited where the bytes
    were blanked and parsed again, so tree-sitter reuses all that lies outside the macro calls
    (a full parse of the blanked files took 2.5 times as long on tokio)."""
    wrappers: list[tuple[int, int, int]] = []  # (the call's start, its `{`, its `}`)
    _find(tree.root_node, source, 0, parser, wrappers, 0)
    if not wrappers:
        return None
    out = bytearray(source)
    for start, opening, closing in wrappers:
        for at in range(start, opening + 1):
            if out[at] != _NEWLINE:
                out[at] = _SPACE
        out[closing] = _SPACE
        _blanked(tree, source, start, opening + 1)
        _blanked(tree, source, closing, closing + 1)
    unwrapped = bytes(out)
    return unwrapped, parse_tree(parser, unwrapped, tree)


def _blanked(tree: Any, source: bytes, start: int, end: int) -> None:
    """Tells ``tree`` that the bytes from ``start`` to ``end`` became as many spaces (newlines
    kept: every point stays where it was)."""
    start_point = _point(source, start)
    end_point = _point(source, end)
    tree.edit(start, end, end, start_point, end_point, end_point)


def _point(source: bytes, at: int) -> tuple[int, int]:
    """(row, byte column) of byte ``at``, as tree-sitter counts them."""
    return source.count(b"\n", 0, at), at - (source.rfind(b"\n", 0, at) + 1)


def _find(node: Any, source: bytes, base: int, parser: Any,
          wrappers: list[tuple[int, int, int]], depth: int) -> None:
    """Adds the item macros among ``node``'s items (``source`` is the text ``node`` was parsed
    from, which starts at ``base`` of the file), and those nested in them, to ``wrappers``."""
    for child in node.children:
        kind = child.type
        if kind in _WITH_ITEM_LIST:
            body = child.child_by_field_name("body")
            if body is not None and body.type in _ITEM_LISTS:
                _find(body, source, base, parser, wrappers, depth)
        elif kind == "macro_invocation" and depth < MAX_NESTING:
            body = _items_body(child, source, parser)
            if body is not None:
                tokens, inner = body
                wrappers.append((base + child.start_byte, base + tokens.start_byte,
                                 base + tokens.end_byte - 1))
                _find(inner, source[tokens.start_byte + 1:tokens.end_byte - 1],
                      base + tokens.start_byte + 1, parser, wrappers, depth + 1)


def _items_body(call: Any, source: bytes, parser: Any) -> tuple[Any, Any] | None:
    """(the token tree, its body's own parse) of a `name! { items }` call, or None."""
    tokens = call.named_children[-1] if call.named_children else None
    if (tokens is None or tokens.type != "token_tree" or source[tokens.start_byte] != ord("{")
            or source[tokens.end_byte - 1] != ord("}")):
        return None
    inner = parse_tree(parser, source[tokens.start_byte + 1:tokens.end_byte - 1]).root_node
    if inner.has_error or not inner.named_children:
        return None
    if any(item.type not in _ITEMS for item in inner.named_children):
        return None  # statements or expressions: a macro of another kind
    return tokens, inner
