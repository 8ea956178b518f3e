"""A Python local bound to values of different types (`field = Cast(field)` on one branch, then
`field = field.asc()`) holds, at a call, the type of the bindings that may reach it: the last
one before it, the ones before that in branches it may skip, and the later ones in a loop
around it; where those disagree, each of theirs (see tests/test_type_unions.py). A local whose
bindings all agree keeps its type."""

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
    # `field` holds an item or a Cast at asc() (the item's type is not known: the Cast's asc),
    # then asc()'s result, an Ordered (what its `return` makes): no edge to Cast.copy (line
    # 10), only to the copy Ordered inherits (line 5)
    assert {c for c in calls if c[0] == "ordering" and c[1] in ("copy", "asc")} == {
        ("ordering", "asc", 2), ("ordering", "copy", 5)}
    assert ("ordering", "Cast", 9) in calls
    # one binding, or bindings that agree: the type stands
    assert ("once", "copy", 10) in calls
    assert ("twice", "copy", 10) in calls


# Where the bindings are placed (Binding.at): which of them reaches a call is read from where
# each takes effect, the blocks holding them and the loops around them.
PLACED = """\
class Expression:
    def asc(self) -> "Ordered":
        return Ordered(self)

    def copy(self):
        return self


class Cast(Expression):
    def copy(self):
        return self


class Ordered(Expression):
    def copy(self):
        return self


def straight():
    value = Cast(1)
    value.copy()  # a Cast
    value = value.asc()  # the Cast's asc
    value.copy()  # an Ordered


def looped(items):
    value = Cast(1)
    for item in items:
        value.copy()  # a Cast, or an Ordered on the next turn
        value = Ordered(item)


def declared(flag):
    value: Expression
    if flag:
        value = Cast(1)
    else:
        value = Ordered(2)
    value.copy()  # declared an Expression


def killed(items):
    value = Cast(1)
    value.copy()  # a Cast still
    for value in items:
        value.copy()  # an item
    value = Cast(2)
"""


def _line(text: str) -> int:
    """The line of PLACED that ``text`` ends."""
    return next(i for i, line in enumerate(PLACED.splitlines(), 1) if line.endswith(text))


def _calls_at(root) -> set[tuple[str, int, str, int]]:
    """(calling function, line of the call, called definition, its line) of every Calls edge."""
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(nodes[e["source"]]["name"], e["line"], nodes[e["target"]]["name"],
                 nodes[e["target"]]["start_line"])
                for e in export.edges(idx.q) if e["type"] == "Calls"}


def test_a_local_bound_twice_has_the_type_of_the_binding_that_reaches_the_call(repo) -> None:
    root = repo({"m.py": PLACED})
    build(root)
    calls = {c for c in _calls_at(root) if c[2] in ("copy", "asc")}
    assert {c for c in calls if c[0] == "straight"} == {
        ("straight", _line("# a Cast"), "copy", 10),
        ("straight", _line("# the Cast's asc"), "asc", 2),
        ("straight", _line("# an Ordered"), "copy", 15),
    }
    # a later binding in the loop reaches the call on the next turn: either type's copy
    assert {c for c in calls if c[0] == "looped"} == {
        ("looped", _line("# a Cast, or an Ordered on the next turn"), "copy", 10),
        ("looped", _line("# a Cast, or an Ordered on the next turn"), "copy", 15)}
    # a statement declaring its type names it wherever the local is read
    assert {c for c in calls if c[0] == "declared"} == {
        ("declared", _line("# declared an Expression"), "copy", 5)}
    # `for value in items` binds a value of no type known: the Cast reaches no call past it
    assert {c for c in calls if c[0] == "killed"} == {
        ("killed", _line("# a Cast still"), "copy", 10)}
