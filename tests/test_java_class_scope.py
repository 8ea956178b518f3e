"""Inside a Java class its own name is the class, not its constructor: a nested class that
extends its enclosing one (`class Attribute { static class Constant extends Attribute }`,
javac's own code) and `new Attribute()` in a field initialiser both mean the class."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

ATTRIBUTE = """\
package p;

public abstract class Attribute {
    static final Attribute NONE = new Attribute(0) { };

    Attribute(int kind) {}

    public static class Constant extends Attribute {
        Constant() { super(1); }
    }
}
"""


def test_a_nested_class_extends_its_enclosing_class_not_the_constructor(repo) -> None:
    root = repo({"p/Attribute.java": ATTRIBUTE})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        links = {(e["type"], e["line"], nodes[e["target"]]["kind"], nodes[e["target"]]["name"])
                 for e in export.edges(idx.q) if e["type"] in ("Extends", "Calls")}
    assert ("Extends", 8, "Class", "Attribute") in links
    assert ("Calls", 4, "Class", "Attribute") in links  # `new Attribute(0) { }`
    assert ("Calls", 9, "Class", "Attribute") in links  # `super(1)`: the base class
    # the constructor only as what `super(1)` calls besides its class, never for the name
    assert {link for link in links if link[2] == "Function"} == {
        ("Calls", 9, "Function", "Attribute")}
