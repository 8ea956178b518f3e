"""Java `super(...)` calls the base class's constructor and `this(...)` another constructor of
the class, the overload picked by the arguments as any call's is; a class that declares no
constructor (its implicit one) gives no such edge."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

SHAPE = """\
package p;

public class Shape {
    public Shape(String name) {}
    public Shape(String name, int sides) {}
    public Shape(int sides) {}
}
"""

SQUARE = """\
package p;

public class Square extends Shape {
    public Square() {
        this(4);
    }

    public Square(int side) {
        super("square", 4);
    }

    public Square(String label) {
        super(label);
    }
}
"""

PLAIN = """\
package p;

public class Plain {}
"""

DERIVED = """\
package p;

public class Derived extends Plain {
    public Derived() {
        super();
    }
}
"""


def _constructor_calls(root) -> set[tuple[str, int, str, str]]:
    """(file, line, target signature, confidence) of every Calls edge to a constructor."""
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        out = set()
        for e in export.edges(idx.q):
            target = nodes[e["target"]]
            if e["type"] == "Calls" and target["kind"] == "Function" \
                    and target["signature"] and "void" not in target["signature"]:
                out.add((nodes[e["source"]]["path"], e["line"], target["signature"],
                         e["confidence"]))
        return out


def test_super_and_this_call_the_constructor_their_arguments_pick(repo) -> None:
    root = repo({"p/Shape.java": SHAPE, "p/Square.java": SQUARE})
    build(root)
    calls = {(line, signature, confidence)
             for path, line, signature, confidence in _constructor_calls(root)
             if path == "p/Square.java"}
    assert calls == {
        (5, "public Square(int side)", "inferred"),
        (9, "public Shape(String name, int sides)", "inferred"),
        (13, "public Shape(String name)", "inferred"),
    }


def test_super_of_a_class_without_constructors_calls_none(repo) -> None:
    root = repo({"p/Plain.java": PLAIN, "p/Derived.java": DERIVED})
    build(root)
    assert not {c for c in _constructor_calls(root) if c[0] == "p/Derived.java"}
