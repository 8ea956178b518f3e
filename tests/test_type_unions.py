"""A local whose bindings that may reach a use disagree on its type (`x = Cast()` on one branch,
`x = Ordered()` on another; JavaScript's `let x;` bound on two branches) holds either: a member
read on it is each type's, as a type checker's union has it. The same member (an inherited
one) is one edge; each type's own is an inferred edge each; a type without the member, or
more types than a few, leave the call unresolved rather than half-guessed."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

PYTHON = """\
class Expression:
    def copy(self):
        return self

    def render(self):
        return ""


class Cast(Expression):
    def render(self):
        return "cast"

    def cast_only(self):
        return 1


class Ordered(Expression):
    def render(self):
        return "ordered"


class A(Expression):
    pass


class B(Expression):
    pass


def branches(flag):
    if flag:
        field = Cast()
    else:
        field = Ordered()
    field.copy()  # inherited
    field.render()  # each its own
    field.cast_only()  # not every type's


def four(n):
    if n == 1:
        value = Cast()
    elif n == 2:
        value = Ordered()
    elif n == 3:
        value = A()
    else:
        value = B()
    value.render()  # too many types
"""

JAVASCRIPT = """\
class Shape { describe() { return ""; } }
class Circle extends Shape { area() { return 1; } }
class Square extends Shape { area() { return 2; } }
class Line extends Shape {}

export function measure(round) {
  const shape = round ? new Circle() : new Square();
  shape.describe();  // inherited
  shape.area();  // each its own
}

export function pick(a) {
  let x;
  if (a) x = new Circle(); else x = new Line();
  x.area();  // not every type's
}
"""


def _calls_at(root, source: str) -> set[tuple[int, str, int, str]]:
    """(line of the call, called definition, its line, confidence) of every Calls edge to a
    method."""
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(e["line"], nodes[e["target"]]["name"], nodes[e["target"]]["start_line"],
                 e["confidence"])
                for e in export.edges(idx.q) if e["type"] == "Calls"
                and nodes[e["target"]]["kind"] == "Function"}


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if line.endswith(text))


def test_a_python_local_of_two_types_calls_each_types_member(repo) -> None:
    root = repo({"m.py": PYTHON})
    build(root)
    calls = _calls_at(root, PYTHON)
    at = {line: {c[1:] for c in calls if c[0] == line} for line in {c[0] for c in calls}}
    assert at[_line(PYTHON, "# inherited")] == {("copy", 2, "inferred")}
    assert at[_line(PYTHON, "# each its own")] == {("render", 10, "inferred"),
                                                   ("render", 18, "inferred")}
    assert _line(PYTHON, "# not every type's") not in at
    assert _line(PYTHON, "# too many types") not in at


def test_a_javascript_local_bound_two_ways_calls_each_types_member(repo) -> None:
    root = repo({"m.js": JAVASCRIPT})
    build(root)
    calls = _calls_at(root, JAVASCRIPT)
    at = {line: {c[1:] for c in calls if c[0] == line} for line in {c[0] for c in calls}}
    assert at[_line(JAVASCRIPT, "// inherited")] == {("describe", 1, "inferred")}
    assert at[_line(JAVASCRIPT, "// each its own")] == {("area", 2, "inferred"),
                                                        ("area", 3, "inferred")}
    assert _line(JAVASCRIPT, "// not every type's") not in at
