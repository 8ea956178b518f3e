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


ENTITY = """\
package p;

class Base {
    static String base(String s) { return s; }
}

class Entity extends Base {
    static final String FIRST = make("a");
    static final String BOTH = make("a", "b");
    static {
        put("x", 'y');
        put("z", '1', '2');
        base("w");
    }

    private static void put(String name, char c) {}
    private static void put(String name, char c1, char c2) {}
    private static String make(String s) { return s; }
    private static String make(String s, String t) { return s + t; }
}
"""


def test_a_class_bodys_own_code_sees_every_overload_and_the_inherited_methods(repo) -> None:
    # a static block or a field's initializer once looked a called name up in the class's
    # own scope, which kept only the last overload (javac's `Entity` lost 1,899 calls)
    root = repo({"p/Entity.java": ENTITY})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        calls = {(e["line"], nodes[e["target"]]["name"], nodes[e["target"]]["start_line"])
                 for e in export.edges(idx.q) if e["type"] == "Calls"}
    assert calls == {(8, "make", 18), (9, "make", 19), (11, "put", 16), (12, "put", 17),
                     (13, "base", 4)}


TASK = """\
package p;

abstract class Task {
    Task() {}
}

class BasicTask extends Task {
    static final Task NONE = null;

    Task self(Task other) {
        Task mine = this;
        return mine;
    }

    static class Nested extends Task {}
}
"""


def test_a_base_class_named_in_a_subclass_is_the_class_not_its_constructor(repo) -> None:
    # a Java constructor is named as its class but is no member a subclass inherits: the
    # subclass's `Task` once found the base's constructor (javac: 421 Uses edges)
    root = repo({"p/Task.java": TASK})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        links = {(e["type"], e["line"], nodes[e["target"]]["kind"])
                 for e in export.edges(idx.q)
                 if e["type"] in ("Uses", "Extends") and nodes[e["target"]]["name"] == "Task"}
    assert links == {("Extends", 7, "Class"), ("Uses", 8, "Class"), ("Uses", 10, "Class"),
                     ("Uses", 11, "Class"), ("Extends", 15, "Class")}


def test_an_imported_base_class_named_in_a_subclass_method_is_the_class(repo) -> None:
    root = repo({"q/Base.java": "package q;\n\npublic abstract class Base {\n"
                                "    protected Base() {}\n}\n",
                 "p/Sub.java": "package p;\n\nimport q.Base;\n\nclass Sub extends Base {\n"
                               "    static Base make() {\n        return null;\n    }\n}\n"})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        links = {(e["type"], e["line"], nodes[e["target"]]["kind"]) for e in export.edges(idx.q)
                 if nodes[e["target"]]["name"] == "Base" and e["path"] == "p/Sub.java"}
    assert links == {("ImportsSymbol", 3, "Class"), ("Extends", 5, "Class"),
                     ("Uses", 6, "Class")}  # the return type: once the base's constructor


PROPS = """\
package p;

import q.Diag.Error;

public class Props {
    public static class Errors {
        public static final Error Error = new Error("e");
        public static Error make() {
            Error local = new Error("m");
            return local;
        }
    }
}
"""


def test_a_field_named_as_a_type_does_not_hide_the_type_where_a_type_is_written(repo) -> None:
    # javac's `static final Error Error = new Error(..)`: in `new Error(..)` and a declared
    # type the name is the imported class, not the field (783 of javac's calls were lost)
    root = repo({"q/Diag.java": "package q;\n\npublic class Diag {\n"
                                "    public static final class Error {\n"
                                "        public Error(String a) {}\n    }\n}\n",
                 "p/Props.java": PROPS})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        links = {(e["type"], e["line"], nodes[e["target"]]["qualified_name"])
                 for e in export.edges(idx.q)
                 if e["path"] == "p/Props.java" and e["type"] in ("Calls", "Uses")}
    assert links == {("Calls", 7, "q.Diag.Error"), ("Uses", 7, "q.Diag.Error"),
                     ("Uses", 8, "q.Diag.Error"), ("Calls", 9, "q.Diag.Error"),
                     ("Uses", 9, "q.Diag.Error")}
