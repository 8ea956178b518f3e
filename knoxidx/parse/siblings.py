"""A node's named siblings, listed once per parent where extraction walks back over several.

tree-sitter answers ``prev_named_sibling`` by descending from the root to the node's parent
and passing over the children before the node, each level's. One such step is cheap enough;
but extraction walks back over runs (a `///` or `//` comment a line at a time, then a Rust
function's attributes past the same comments again), each step a descent. Where a walk goes
past the first step, the parent's named children are listed once, and every later question
about a node under that parent (the next definition's doc comment, its attributes) is
answered from the list. Listing costs more than one step (a node object and its id for each
child): a walk that stops at the first step never lists.

The lists are kept for one source at a time, with their nodes, so a node id (the address of
its slot in its parent's children) stays unique while it is kept. (Not per thread: a thread
that extracts another file drops the other's lists, and each looks only at the lists it finds
kept for its own source.)
"""

from __future__ import annotations

from typing import Any

# the source the lists are of, and node id -> (its parent's named children, its index there)
_kept: tuple[bytes | None, dict[int, tuple[list[Any], int]]] = (None, {})


def previous_named(node: Any, source: bytes) -> Any:
    """``node.prev_named_sibling``: from its parent's list where one is kept. ``source`` is
    the text ``node``'s tree was parsed from (when it changes, what was kept is dropped)."""
    kept_source, places = _kept
    place = places.get(node.id) if kept_source is source else None
    if place is None:
        return node.prev_named_sibling
    siblings, i = place
    return siblings[i - 1] if i else None


def named_before(node: Any, source: bytes) -> tuple[list[Any], int]:
    """``node``'s parent's named children, and how many of them come before ``node`` (so
    ``siblings[count - 1]`` is its ``prev_named_sibling``); ([], 0) for the root. Lists the
    parent's children where they are not kept yet: for a walk of more than one step."""
    global _kept
    kept_source, places = _kept
    if kept_source is not source:
        places = {}
        _kept = (source, places)
    place = places.get(node.id)
    if place is None:
        parent = node.parent
        if parent is None:
            return [], 0
        children = parent.named_children
        for i, child in enumerate(children):
            places[child.id] = (children, i)
        place = places.get(node.id)
        if place is None:  # an anonymous node, not among them: it follows its previous one
            previous = node.prev_named_sibling
            if previous is None:
                return [], 0
            siblings, i = named_before(previous, source)
            return siblings, i + 1
    return place
