"""Java types outside the index that a file names without importing them one by one: a class
of java.lang (`Math`, `Character`), or one a wildcard import of a package outside the index
brings (`javax.lang.model.element.*`'s `TypeElement`). A method called on one is the JDK's,
never a method of the index guessed by its name alone."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

STATES = """\
package q;

public class States {
    public static int max(int a, int b) { return a; }
    public boolean isWhitespace(char c) { return false; }
    public String getSuperclass() { return ""; }
}
"""

PRINTER = """\
package p;

import javax.lang.model.element.*;
import q.States;

class Printer {
    int widest(int a, int b, char c) {
        if (Character.isWhitespace(c))
            return Math.max(a, b);
        return States.max(a, b);
    }
    String describe(TypeElement e, Local l) {
        e.getSuperclass();
        return l.getSuperclass();
    }
}

class Local { String getSuperclass() { return ""; } }
"""


def _calls(root) -> set[tuple[int, str, str]]:
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(e["line"], nodes[e["target"]]["qualified_name"], e["confidence"])
                for e in export.edges(idx.q) if e["type"] == "Calls" and e["path"] == "p/Printer.java"}


def test_methods_of_java_lang_and_wildcard_imported_outside_types_are_not_guessed(repo) -> None:
    root = repo({"q/States.java": STATES, "p/Printer.java": PRINTER})
    build(root)
    assert _calls(root) == {
        (10, "q.States.max", "exact"),  # the index's class, imported: still its method
        (14, "p.Local.getSuperclass", "inferred"),  # a class of the package, not imported
    }


ELEMENTS = """\
package q;

public class Els {
    public String getAllAnnotationMirrors(Object e) { return ""; }
    public void putAll(Object o) {}
}
"""

ENV = """\
package p;

import javax.lang.model.util.Elements;
import java.util.Map;

class Env {
    private final Elements eltUtils;
    Map<String, String> values;
    Env(Elements e) { eltUtils = e; }
    void copy(Object x, Env other) {
        eltUtils.getAllAnnotationMirrors(x);
        this.eltUtils.getAllAnnotationMirrors(x);
        values.putAll(other.values);
        other.values.putAll(values);
    }
}
"""


def test_methods_on_fields_declared_of_outside_types_are_not_guessed(repo) -> None:
    root = repo({"q/Els.java": ELEMENTS, "p/Env.java": ENV})
    build(root)
    with Index.open(root) as idx:
        assert [e for e in export.edges(idx.q) if e["type"] == "Calls"] == []


FAILURES = {
    "p/ClientException.java": """\
package p;

public class ClientException extends RuntimeException {}
""",
    "p/Wrapped.java": """\
package p;

public class Wrapped extends ClientException {}
""",
    "p/Propagated.java": """\
package p;

public class Propagated extends RuntimeException {
    public RuntimeException getCause() { return null; }
}
""",
    "p/Task.java": """\
package p;

class Task {
    private Wrapped last;

    void run() {
        try {
            run();
        } catch (ClientException e) {
            throw new RuntimeException(e.getCause());
        }
        last.getCause();
    }
}
""",
}


def test_a_method_a_class_may_inherit_from_outside_the_index_is_not_guessed(repo) -> None:
    # (a ClientException's getCause() is Throwable's, never Propagated's, the one of its name)
    root = repo(FAILURES)
    build(root)
    with Index.open(root) as idx:
        assert not idx.callers("Propagated.getCause")["callers"]


REASONS = {
    "p/Els.java": """\
package p;

import java.util.ArrayList;

class Els extends ArrayList<String> {
    Els mine() { return this; }
}
""",
    "p/Failure.java": """\
package p;

import java.io.IOException;

class Failure extends IOException {
    Failure(String m) { super(m); }
}
""",
    "p/UsesTest.java": """\
package p;

import static org.junit.Assert.*;
import java.util.List;

class Box { int size() { return 0; } }

public class UsesTest {
    void run(final StringBuilder sb, Els els, Box box, List<String> list) {
        assertEquals(1, 1);
        sb.append("x");
        els.get(0);
        els.mine().isEmpty();
        box.equals(box);
        box.missing();
        list.get(0).length();
        getClass();
        helper(1, 2);
        new Runnable() { public void run() { sb.reverse(); } };
    }
    void helper(int a) {}
    Box held;
    void later(List<List<String>> all) {
        held.clear();
        for (List<String> held : all) { held.clear(); }
    }
}
""",
}


def test_calls_outside_the_index_are_said_external_not_unknown(repo) -> None:
    """A static wildcard import's method, a method of a receiver declared of a JDK type, one a
    class of the index inherits from a JDK base (on a value or on what a method returns),
    Object's, and `super(..)` of a JDK base: "external". A method the index's own class lacks,
    one called on what a JDK method returns, and an index method of another arity stay
    "unknown"."""
    root = repo(REASONS)
    build(root)
    with Index.open(root) as idx:
        rows = idx.store.conn.execute(
            "SELECT name, line, reason FROM unresolved WHERE kind = 'call'").fetchall()
    reasons = {name: reason for name, _, reason in rows}
    # the field (of the index's type: a miss), then the loop's List (a JDK type)
    assert {(line, reason) for name, line, reason in rows if name == "held.clear"} == {
        (24, "unknown"), (25, "external")}
    del reasons["held.clear"]
    assert reasons == {
        "super": "external",  # IOException's constructor
        "assertEquals": "external",  # import static org.junit.Assert.*
        "sb.append": "external",  # a parameter of a JDK type
        "els.get": "external",  # inherited from ArrayList
        "els.mine().isEmpty": "external",  # ... by what a method of the index returns
        "box.equals": "external",  # Object's
        "box.missing": "unknown",  # the index's own class: a miss, no library's
        "list.get": "external",
        "list.get().length": "unknown",  # what a JDK method returns may be of any type
        "getClass": "external",
        "helper": "unknown",  # the index's helper, of another arity
        "sb.reverse": "external",  # the method's local, read in an anonymous class
    }
