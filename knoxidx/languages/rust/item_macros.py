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
_OPEN, _CLOSE = ord("{"), ord("}")

# (the call's start, its `{`, its `}`, whether it stands at the file's top level)
_Wrapper = tuple[int, int, int, bool]


def unwrap_item_macros(tree: Any, source: bytes, parser: Any) -> tuple[bytes, Any] | None:
    """``source`` with the macro calls whose bodies are items blanked around those bodies, and
    its tree, or None where there is none. A copy of ``tree`` is edited where the bytes were
    blanked and parsed again, so tree-sitter reuses all that lies outside the macro calls (a
    full parse of the blanked files took 2.5 times as long on tokio).

    A body at the file's top level is judged where it stands, blanked: the file's top level is
    what a body parsed on its own is, so the blanked file's tree shows whether it holds items
    without parsing it twice. Only where that tree says no (an error beside it may spill
    over) is the body parsed on its own. A body in a `mod`, `impl` or `trait` is always
    parsed on its own first: there `foo!(x);` reads as an item, on its own as a statement."""
    calls: list[tuple[Any, bool]] = []
    _find(tree.root_node, None, calls)
    if not calls:
        return None
    out = bytearray(source)
    text, current = source, tree.copy()
    for _ in range(MAX_NESTING):
        judged: list[_Wrapper] = []
        for call, top in calls:
            braces = _braces(call, text)
            if braces is not None and (top or _parses_as_items(source, braces, parser)):
                judged.append((call.start_byte, *braces, top))
        if not judged:
            break
        for start, opening, closing, _top in judged:
            for at in range(start, opening + 1):
                if out[at] != _NEWLINE:
                    out[at] = _SPACE
            out[closing] = _SPACE
        _edited(current, source, judged)
        text = bytes(out)
        current = parse_tree(parser, text, current)
        calls = []
        regions: list[tuple[int, int]] = []  # unwrapped where the blanked tree cannot show
        rejected: list[_Wrapper] = []
        root = current.root_node
        cursor = current.walk()
        for wrapper in judged:
            _start, opening, closing, top = wrapper
            items = _items_between(cursor, root, opening, closing) if top else None
            if items is not None:  # the macro calls among them are the next level's
                for item in items:
                    _add_call(item, True, calls)
            elif top and not _parses_as_items(source, (opening, closing), parser):
                rejected.append(wrapper)
            else:
                regions.append((opening, closing))
        if rejected:
            for start, opening, closing, _top in rejected:
                out[start:opening + 1] = source[start:opening + 1]
                out[closing] = source[closing]
            _edited(current, source, rejected)
            text = bytes(out)
            current = parse_tree(parser, text, current)
        if regions:
            _find(current.root_node, regions, calls)
    return (text, current) if text != source else None


def _edited(tree: Any, source: bytes, wrappers: list[_Wrapper]) -> None:
    """Tells ``tree`` that each wrapper's name and braces changed, as many bytes as before
    (newlines kept: every point stays where it was)."""
    changed = sorted([(start, opening + 1) for start, opening, _closing, _top in wrappers]
                     + [(closing, closing + 1) for _start, _opening, closing, _top in wrappers])
    row = counted = 0  # the rows counted on from the last change, not each from the start
    for start, end in changed:
        row += source.count(b"\n", counted, start)
        end_row = row + source.count(b"\n", start, end)
        counted = start
        start_point = (row, start - (source.rfind(b"\n", 0, start) + 1))
        end_point = (end_row, end - (source.rfind(b"\n", 0, end) + 1))
        tree.edit(start, end, end, start_point, end_point, end_point)


def _find(node: Any, regions: list[tuple[int, int]] | None,
          calls: list[tuple[Any, bool]]) -> None:
    """Adds the macro calls among ``node``'s items (and its `mod`, `impl` and `trait` bodies'),
    those inside one of ``regions`` (bodies just unwrapped; None: all), to ``calls``, each
    with whether it stands at the file's top level."""
    top = node.type == "source_file"
    for child in node.children:
        if regions is None or any(
                child.start_byte < end and child.end_byte > start for start, end in regions):
            _add_call(child, top, calls)


def _add_call(item: Any, top: bool, calls: list[tuple[Any, bool]]) -> None:
    """Adds ``item`` to ``calls`` where it is a macro call, or the macro calls among its items
    where it is a `mod`, `impl` or `trait`."""
    kind = item.type
    if kind == "macro_invocation":
        calls.append((item, top))
    elif kind in _WITH_ITEM_LIST:
        body = item.child_by_field_name("body")
        if body is not None and body.type in _ITEM_LISTS:
            _find(body, None, calls)


def _braces(call: Any, text: bytes) -> tuple[int, int] | None:
    """The bytes of a `name! { .. }` call's braces, or None for another kind of call."""
    tokens = call.named_children[-1] if call.named_children else None
    if (tokens is None or tokens.type != "token_tree" or text[tokens.start_byte] != _OPEN
            or text[tokens.end_byte - 1] != _CLOSE):
        return None
    return tokens.start_byte, tokens.end_byte - 1


def _parses_as_items(source: bytes, braces: tuple[int, int], parser: Any) -> bool:
    """Whether the text between ``braces``, parsed on its own, is items and nothing else."""
    inner = parse_tree(parser, source[braces[0] + 1:braces[1]]).root_node
    if inner.has_error or not inner.named_children:
        return False
    # statements or expressions: a macro of another kind
    return all(item.type in _ITEMS for item in inner.named_children)


def _items_between(cursor: Any, root: Any, opening: int, closing: int) -> list[Any] | None:
    """The top-level nodes between a blanked call's braces where they are items and nothing
    else, none of them reaching past the braces; None otherwise."""
    cursor.reset(root)
    if cursor.goto_first_child_for_byte(opening + 1) is None:
        return None
    items: list[Any] = []
    while True:
        child = cursor.node
        if child.start_byte >= closing:
            break
        if child.start_byte <= opening or child.end_byte > closing or child.has_error:
            return None
        if child.is_named:
            if child.type not in _ITEMS:
                return None
            items.append(child)
        if not cursor.goto_next_sibling():
            break
    return items or None
