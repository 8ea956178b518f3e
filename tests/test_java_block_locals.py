"""A Java local declared in a block, a loop's header, a catch clause, a lambda's parameters or
a resource is that block's alone: a read of the same name outside it (before or after) is of
the field or the other local it names there, not of that declaration; and a declaration the
index reads no type of (`catch (A | B e)`, `var e = f()`) is a local all the same, no other
declaration of its name reaching into its block."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

CLASSES = {
    f"p/{name}.java": f"package p;\n\npublic class {name} {{\n"
                      f"    public void {name.lower()}() {{}}\n    public void report() {{}}\n}}\n"
    for name in ("A", "B", "C", "E1", "E2")
}
USER = """\
package p;

import java.util.List;

class User {
    A s;
    void loop(List<B> bs) {
        s.report();
        for (B s : bs) { s.report(); }
        s.report();
    }
    void counted() {
        for (int i = 0; i < 2; i++) { C s = null; s.report(); }
        s.report();
    }
    void lambda(List<B> bs) {
        bs.forEach(s -> s.report());
        s.report();
    }
    void block(Object o) {
        if (o instanceof C) { C s = (C) o; s.report(); }
        s.report();
    }
    void resource() {
        try (C s = open()) { s.report(); }
        s.report();
    }
    void caught() {
        try { open(); } catch (RuntimeException s) { s.getMessage(); }
        s.report();
    }
    C open() { return null; }
    void untyped(List<A> as) {
        for (A e : as) { e.report(); }
        try { open(); } catch (E1 | E2 e) { e.report(); }
        var e = open();
        e.report();
    }
    void header() {
        for (B s : s.report()) { s.report(); }
    }
}
"""


def _calls(root) -> set[tuple[int, str]]:
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(e["line"], nodes[e["target"]]["qualified_name"])
                for e in export.edges(idx.q)
                if e["type"] == "Calls" and e["path"] == "p/User.java"
                and nodes[e["target"]]["name"] != "open"}


def test_a_block_local_is_no_name_outside_its_block(repo) -> None:
    root = repo({**CLASSES, "p/User.java": USER})
    build(root)
    # the field `A s` read around each block that declares another `s`, and each of those
    assert _calls(root) >= {
        (8, "p.A.report"), (9, "p.B.report"), (10, "p.A.report"),  # a loop's element
        (13, "p.C.report"), (14, "p.A.report"),  # a local in a counted loop's body
        (17, "p.B.report"), (18, "p.A.report"),  # a lambda's parameter
        (21, "p.C.report"), (22, "p.A.report"),  # a local in an `if`'s block
        (25, "p.C.report"), (26, "p.A.report"),  # a resource
        (30, "p.A.report"),  # a caught exception (of a type outside the index)
        (40, "p.A.report"), (40, "p.B.report"),  # the field in the loop's header, then the local
    }
    assert {line for line, target in _calls(root) if line < 31} == {
        8, 9, 10, 13, 14, 17, 18, 21, 22, 25, 26, 30}
    assert len({(line, target) for line, target in _calls(root) if line < 31}) == 12


def test_an_untyped_declaration_hides_an_earlier_typed_one_of_its_name(repo) -> None:
    root = repo({**CLASSES, "p/User.java": USER})
    build(root)
    reports = {line for line, target in _calls(root) if target == "p.A.report"}
    assert reports & {34, 35, 37} == {34}
