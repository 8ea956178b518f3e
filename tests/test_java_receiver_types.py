"""Java receivers typed where the code says the type: an enum constant is of its enum, a cast
heading a chain is of the cast's type, and a pattern variable (`x instanceof T t`) is a T. Each
call once went unresolved or to a guess by the method's name alone."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from knoxidx.parse.name_paths import name_path
from tests.helpers import build

FIELD = """\
package q;

public enum Field {
    YEAR,
    MONTH {
        int extra() { return 1; }
    };
    public long check(long v) { return v; }
}
"""

RANGE = """\
package q;

public class Range {
    public long check(long v) { return v; }
    public int getPort() { return 1; }
}
"""

DATE = """\
package p;

import static q.Field.YEAR;
import q.Field;
import q.Range;

class Date {
    long of(long y, Object o) {
        Field.MONTH.check(y);
        long a = ((Range) o).getPort();
        if (!(o instanceof Range range))
            return YEAR.check(y);
        return range.getPort() + a;
    }
}
"""


def _calls(root) -> set[tuple[int, str, str]]:
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(e["line"], nodes[e["target"]]["qualified_name"], e["confidence"])
                for e in export.edges(idx.q) if e["type"] == "Calls" and e["path"] == "p/Date.java"}


def test_enum_constants_casts_and_pattern_variables_type_their_calls(repo) -> None:
    root = repo({"q/Field.java": FIELD, "q/Range.java": RANGE, "p/Date.java": DATE})
    build(root)
    assert _calls(root) == {
        (9, "q.Field.check", "inferred"),  # an enum constant, through its enum's name
        (10, "q.Range.getPort", "inferred"),  # a cast
        (12, "q.Field.check", "inferred"),  # an enum constant imported statically
        (13, "q.Range.getPort", "inferred"),  # a pattern variable
    }


def test_a_cast_heading_a_chain_is_an_instance_of_its_type() -> None:
    assert name_path("((Range) o).getPort") == ("Range()", "getPort")
    assert name_path("((Impl<?>) object).write") == ("Impl()", "write")
    assert name_path("((Attribute.Class) l.head).getValue") == ("Attribute", "Class()", "getValue")
    assert name_path("((a) => b).call") == ("?", "call")  # an arrow function is no cast
    assert name_path("(x).g") == ("?", "g")


BLOCKS = """\
package p;

class Body { void close() {} }

class Head { void close() {} }

class Reader {
    void read(boolean chunked) {
        if (chunked) {
            Body part = new Body();
            part.close();
        } else {
            Head part = new Head();
            part.close();
        }
    }
}
"""


def test_same_named_locals_of_two_blocks_each_type_the_calls_in_their_block(repo) -> None:
    root = repo({"p/Body.java": BLOCKS})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        closes = {(e["line"], nodes[e["target"]]["start_line"]) for e in export.edges(idx.q)
                  if e["type"] == "Calls" and nodes[e["target"]]["name"] == "close"}
    assert closes == {(11, 3), (14, 5)}


FAILURE = """\
package q;

public class Failure extends RuntimeException {
    public String getDiagnostic() { return ""; }

    public static class Lookup extends RuntimeException {
        public String getDiagnostic() { return ""; }
    }
}
"""

CATCHER = """\
package q;

class Catcher {
    String run(Runnable r) {
        try {
            r.run();
        } catch (Failure.Lookup ex) {
            return ex.getDiagnostic();
        }
        return "";
    }
}
"""


def test_a_caught_exception_is_of_its_catch_clauses_type(repo) -> None:
    root = repo({"q/Failure.java": FAILURE, "q/Catcher.java": CATCHER})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        calls = {(e["line"], nodes[e["target"]]["qualified_name"])
                 for e in export.edges(idx.q) if e["type"] == "Calls"
                 and e["path"] == "q/Catcher.java"}
    assert {name for line, name in calls if line == 8} == {"q.Failure.Lookup.getDiagnostic"}


ADDRESSES = """\
package q;

class Addresses {
    Range[] ranges;

    long run(Range[] given, int i) {
        given[i].getPort();
        return this.ranges[0].check(1) + ranges[i + 1].check(2);
    }
}
"""


def test_an_element_of_an_array_is_of_the_arrays_element_type(repo) -> None:
    # (`given[i].getPort()` was read on an unknown receiver)
    root = repo({"q/Range.java": RANGE, "q/Field.java": FIELD, "q/Addresses.java": ADDRESSES})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        calls = {(e["line"], nodes[e["target"]]["qualified_name"])
                 for e in export.edges(idx.q) if e["type"] == "Calls"
                 and e["path"] == "q/Addresses.java"}
    assert calls == {(7, "q.Range.getPort"), (8, "q.Range.check")}


SYNTAX = """\
package q;

public class SyntaxError extends Exception {
    public String getMessage() { return ""; }
}
"""

WRAPPER = """\
package q;

import java.io.IOException;

class Wrapper {
    String wrap(IOException e, SyntaxError s) {
        return e.getMessage() + s.getMessage();
    }
}
"""


def test_no_method_of_the_index_is_guessed_on_a_receiver_of_a_type_outside_it(repo) -> None:
    # (the one getMessage of the index was guessed for an IOException's)
    root = repo({"q/SyntaxError.java": SYNTAX, "q/Wrapper.java": WRAPPER})
    build(root)
    with Index.open(root) as idx:
        calls = [e for e in export.edges(idx.q)
                 if e["type"] == "Calls" and e["path"] == "q/Wrapper.java"]
    assert [(e["line"], e["confidence"]) for e in calls] == [(7, "inferred")]
