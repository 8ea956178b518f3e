"""The items in macro calls (languages/rust/item_macros.py): the blanked file's tree is parsed
incrementally from the first one, and must be the tree a fresh parse of it gives."""

from __future__ import annotations

from typing import Any

from knoxidx.languages.rust.item_macros import unwrap_item_macros
from knoxidx.parse.compiled_queries import compiled_query
from knoxidx.parse.tree_parse import parse_tree

SOURCE = b"""\
use std::io;

cfg_rt! {
    pub use task::spawn;
    cfg_rt! {
        pub fn nested() -> u8 { 1 }
    }
}

impl<R> Reader<R> {
    cfg_io! { pub fn get_ref(&self) -> &R { &self.inner } }
    pub fn is_ready(&self) -> bool { self.get_ref(); true }
}

bitflags! { pub struct Flags: u32 { const A = 1; } }

pub fn run() { spawn(); }
"""


def _shape(node: Any) -> list[tuple[str, int, int, tuple[int, int], tuple[int, int]]]:
    """Every node of the tree under ``node``: kind, bytes and points."""
    out = [(node.type, node.start_byte, node.end_byte, tuple(node.start_point),
            tuple(node.end_point))]
    for child in node.children:
        out.extend(_shape(child))
    return out


def test_the_incremental_reparse_gives_a_fresh_parse_s_tree() -> None:
    parser = compiled_query("rust").parser
    unwrapped = unwrap_item_macros(parse_tree(parser, SOURCE), SOURCE, parser)
    assert unwrapped is not None
    blanked, tree = unwrapped
    assert len(blanked) == len(SOURCE) and blanked.count(b"\n") == SOURCE.count(b"\n")
    assert b"cfg_rt!" not in blanked and b"cfg_io!" not in blanked
    assert b"bitflags! {" in blanked  # its body is no item list
    assert _shape(tree.root_node) == _shape(parse_tree(parser, blanked).root_node)
    kinds = {node[0] for node in _shape(tree.root_node)}
    assert "macro_invocation" in kinds and "function_item" in kinds


def test_a_file_without_item_macros_is_not_parsed_again() -> None:
    parser = compiled_query("rust").parser
    source = b"fn main() { println!(\"{}\", 1); }\nbitflags! { struct F: u8 { const A = 1; } }\n"
    assert unwrap_item_macros(parse_tree(parser, source), source, parser) is None


def test_a_body_is_judged_as_its_own_parse_judges_it() -> None:
    parser = compiled_query("rust").parser
    # in an impl's body `foo!(x);` reads as a macro call among items, but on its own (the
    # file's top level) as an expression statement: no item list, so `m!` stays a call
    source = (b"impl A {\n    m! { foo!(x); }\n    k! { fn a() {} }\n}\n"
              b"n! { let x = 1; }\nj! { fn b() {} }\n")
    unwrapped = unwrap_item_macros(parse_tree(parser, source), source, parser)
    assert unwrapped is not None
    blanked, tree = unwrapped
    assert b"m! { foo!(x); }" in blanked and b"n! { let x = 1; }" in blanked
    assert b"k!" not in blanked and b"j!" not in blanked
    assert _shape(tree.root_node) == _shape(parse_tree(parser, blanked).root_node)


def test_a_body_beside_a_broken_one_is_judged_on_its_own() -> None:
    parser = compiled_query("rust").parser
    # blanked side by side, `m!`'s broken body spills its error over `k!`'s items: the
    # blanked file's tree cannot tell, so `k!`'s body is parsed on its own
    source = b"m! { pub fn } k! { fn a() {} }\nn! { fn b() {} fn } j! { fn c() {} }\n"
    unwrapped = unwrap_item_macros(parse_tree(parser, source), source, parser)
    assert unwrapped is not None
    blanked, tree = unwrapped
    assert b"m! { pub fn }" in blanked and b"n! { fn b() {} fn }" in blanked
    assert b"k!" not in blanked and b"j!" not in blanked
    assert _shape(tree.root_node) == _shape(parse_tree(parser, blanked).root_node)


def test_the_caller_s_tree_is_left_as_it_was() -> None:
    parser = compiled_query("rust").parser
    tree = parse_tree(parser, SOURCE)
    before = _shape(tree.root_node)
    assert unwrap_item_macros(tree, SOURCE, parser) is not None
    assert not tree.root_node.has_changes and _shape(tree.root_node) == before
