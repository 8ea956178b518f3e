"""A Java anonymous class (`new T() {..}`, an enum constant's body) is a class of its own,
named as javac names it (`Outer$1`), whose base is the type its `new` (or its enum) names: a
method of it sees that base's members first (`scan(..)`, `this.scan(..)`, `super.scan(..)`),
then the enclosing scopes (javac's `TreeScanner` visitors lost ~250 calls without)."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from knoxidx.parse.extract import extract
from tests.helpers import build

SCANNER = """\
package p;

public class Scanner {
    public void scan(Object tree) {}
    public void visitIdent(Object tree) {}
}
"""

USER = """\
package p;

class User {
    void scan(String s) {}
    void helper() {}
    int count;

    void run(Object root) {
        int local = 1;
        new Scanner() {
            @Override
            public void visitIdent(Object tree) {
                scan(tree);
                this.scan(tree);
                super.visitIdent(tree);
                helper();
            }
        }.scan(root);
    }

    enum Kind {
        PLAIN,
        FANCY {
            @Override
            String describe() { return super.describe() + "!"; }
        };

        String describe() { return name(); }
    }
}
"""


def _calls(root) -> set[tuple[int, str, str, str]]:
    """(site line, caller, target's file, target's name) of every Calls edge."""
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(e["line"], nodes[e["source"]]["name"], nodes[e["target"]]["path"],
                 nodes[e["target"]]["name"])
                for e in export.edges(idx.q) if e["type"] == "Calls"}


def test_an_anonymous_class_is_named_as_javac_names_it_and_based_on_its_new() -> None:
    defs = extract("p/User.java", USER.encode(), "java").defs
    anonymous = [(d.name, d.qualname, d.type_hint, d.signature) for d in defs
                 if "$" in d.name]
    assert anonymous == [
        ("User$1", "User.run.User$1", ("Scanner",), "new Scanner()"),
        ("Kind$1", "User.Kind.FANCY.Kind$1", ("Kind",), "FANCY"),
    ]
    visit = next(d for d in defs if d.name == "visitIdent")
    assert defs[visit.parent].name == "User$1"


def test_a_method_of_an_anonymous_class_calls_its_bases_members_first(repo) -> None:
    root = repo({"p/Scanner.java": SCANNER, "p/User.java": USER})
    build(root)
    calls = _calls(root)
    scanner = "p/Scanner.java"
    assert (13, "visitIdent", scanner, "scan") in calls  # not User.scan(String)
    assert (14, "visitIdent", scanner, "scan") in calls  # `this` is the anonymous class
    assert (15, "visitIdent", scanner, "visitIdent") in calls
    assert (16, "visitIdent", "p/User.java", "helper") in calls  # then the enclosing class
    assert (10, "run", scanner, "Scanner") in calls  # the `new`: the enclosing method's call
    assert not {c for c in calls if c[3] == "scan" and c[2] == "p/User.java"}


def test_super_in_an_enum_constants_body_is_the_enum(repo) -> None:
    root = repo({"p/User.java": USER})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        targets = {(e["line"], nodes[e["target"]]["name"], nodes[e["target"]]["start_line"])
                   for e in export.edges(idx.q) if e["type"] == "Calls"}
    assert (25, "describe", 28) in targets  # not itself (line 25)


OUTER = """\
package p;

class Outer {
    void helper() {}

    void run() {
        new Scanner() {
            @Override
            public void visitIdent(Object tree) {
                Outer.this.helper();
            }
        }.scan(null);
        new Scanner() {
            @Override
            public void scan(Object tree) {}
        }.scan(null);
    }
}
"""


def test_outer_this_and_a_member_of_an_anonymous_creation_resolve(repo) -> None:
    root = repo({"p/Scanner.java": SCANNER, "p/Outer.java": OUTER})
    build(root)
    calls = {(c[0], c[2], c[3]) for c in _calls(root)}
    assert (10, "p/Outer.java", "helper") in calls  # `Outer.this`: Outer's instance
    assert (12, "p/Scanner.java", "scan") in calls  # `new Scanner() {..}.scan(..)`
    assert (16, "p/Outer.java", "scan") in calls  # the anonymous class's own override
    assert not {c for c in calls if c[0] == 16 and c[1] == "p/Scanner.java"}


UNTYPED = """\
package p;

class Untyped {
    void run(external.Visitor v) {
        v.visitIdent(null);
    }
}
"""


def test_a_method_of_an_anonymous_class_is_never_a_guess_for_an_unknown_receiver(repo) -> None:
    # only its base's declaration names it: a call through a receiver of unknown type calls
    # some other type's method (javac's `v.visitNoType(..)` on a library's visitor)
    root = repo({"p/Outer.java": OUTER.replace("Scanner", "external.Scanner"),
                 "p/Untyped.java": UNTYPED})
    build(root)
    assert not {c for c in _calls(root) if c[3] == "visitIdent"}


LISTENER = """\
package p;

public interface Listener {
    void fired();
}
"""

OWNER = """\
package p;

public class Owner {
    public class Inner {}
}
"""

MAKER = """\
package p;

class Maker {
    Owner owner;

    void run() {
        Listener l = new Listener() {
            public void fired() {}
        };
        Object inner = owner.new Inner();
    }
}
"""


def test_new_of_an_interface_and_of_an_inner_class_of_another_are_calls(repo) -> None:
    # javac's attribution calls `new I() {..}` a call of I; `owner.new Inner()` is Owner's
    # Inner, which no name in Maker's scope denotes
    root = repo({"p/Listener.java": LISTENER, "p/Owner.java": OWNER, "p/Maker.java": MAKER})
    build(root)
    calls = _calls(root)
    assert (7, "run", "p/Listener.java", "Listener") in calls
    assert (10, "run", "p/Owner.java", "Inner") in calls
