"""A Python local bound to values of different types (`field = Cast(field)` on one branch, then
`field = field.asc()`) holds no type the resolver can name at a call: the index reads bindings
without their order, so it leaves such a call unresolved rather than guessing from the first
binding. A local whose bindings all agree keeps its type."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

SOURCE = """\
class Expression:
    def asc(self):
        return Ordered(self)

    def copy(self):
        return self


class Cast(Expression):
    def copy(self):
        return self


class Ordered(Expression):
    pass


def ordering(items, flag):
    for field in items:
        if flag:
            field = Cast(field)
        field = field.asc()
        field.copy()


def once():
    value = Cast(1)
    value.copy()


def twice(flag):
    value = Cast(1)
    if flag:
        value = Cast(2)
    value.copy()
"""


def _calls(root) -> set[tuple[str, str, int]]:
    """(calling function, called definition, its line) of every Calls edge."""
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(nodes[e["source"]]["name"], nodes[e["target"]]["name"],
                 nodes[e["target"]]["start_line"])
                for e in export.edges(idx.q) if e["type"] == "Calls"}


def test_a_local_rebound_to_another_type_gives_no_member_call(repo) -> None:
    root = repo({"m.py": SOURCE})
    build(root)
    calls = _calls(root)
    # `field` holds a Cast or asc()'s result: no edge to Cast.copy (line 10), nor any copy
    assert not {c for c in calls if c[0] == "ordering" and c[1] in ("copy", "asc")}
    assert ("ordering", "Cast", 9) in calls
    # one binding, or bindings that agree: the type stands
    assert ("once", "copy", 10) in calls
    assert ("twice", "copy", 10) in calls
