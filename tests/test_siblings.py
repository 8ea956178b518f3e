"""The sibling lists extraction walks back over (doc comments, attributes, decorators): each
answer the same as tree-sitter's ``prev_named_sibling``, whatever was listed before, for every
node of real files of each grammar, and for a source whose lists were dropped for another's."""

from __future__ import annotations

from typing import Any

import pytest

from knoxidx.parse.compiled_queries import compiled_query
from knoxidx.parse.siblings import named_before, previous_named
from knoxidx.parse.tree_parse import parse_tree

SOURCES = {
    "rust": b"""\
//! crate doc
use std::io;

/// One line.
/// Two lines.
#[derive(Debug)]
// between
#[cfg(test)]
pub struct S { a: u8, b: u8 }

impl S {
    /// doc
    #[inline]
    fn f(&self) -> u8 { self.a }
    // not a doc: a blank line follows

    fn g(&self) { println!("{}", 1); }
}
""",
    "java": b"""\
package p;
import a.B;
/** Doc. */
public class C {
    // one
    // two
    int x, y;
    /** m */
    @Override
    public void m(int a) { call(a, 1); }
}
""",
    "javascript": b"""\
/** @param {A} a */
export function f(a) { return a; }
// run
// of comments
const g = () => 1;
class K { /** m */ m() {} }
""",
}


def _all_nodes(root: Any) -> list[Any]:
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(node.children)  # anonymous nodes too
    return found


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_previous_named_is_tree_sitters_whatever_was_listed(language: str) -> None:
    source = SOURCES[language]
    tree = parse_tree(compiled_query(language).parser, source)
    nodes = _all_nodes(tree.root_node)
    # asked before any list is kept, then after every parent was listed (in reverse order,
    # so that a later node's parent is listed before an earlier one's question)
    for listed in (False, True):
        for node in nodes:
            expected = node.prev_named_sibling
            got = previous_named(node, source)
            assert (got.id if got is not None else None) == (
                expected.id if expected is not None else None), (language, node.type, listed)
            siblings, count = named_before(node, source)
            before = siblings[count - 1] if count else None
            assert (before.id if before is not None else None) == (
                expected.id if expected is not None else None), (language, node.type, listed)
        nodes.reverse()


def test_another_source_drops_the_lists() -> None:
    """Lists kept for one source never answer for another's tree, even one of the same text
    (a second parse: its nodes are other nodes)."""
    source = SOURCES["rust"]
    parser = compiled_query("rust").parser
    first = parse_tree(parser, source)
    other_source = bytes(bytearray(source))  # the same text, another object
    assert other_source is not source
    second = parse_tree(parser, other_source)
    for node in _all_nodes(first.root_node):
        named_before(node, source)
    for node in _all_nodes(second.root_node):
        expected = node.prev_named_sibling
        got = previous_named(node, other_source)
        assert (got.id if got is not None else None) == (
            expected.id if expected is not None else None)
        siblings, count = named_before(node, other_source)
        assert (siblings[count - 1].id if count else None) == (
            expected.id if expected is not None else None)
