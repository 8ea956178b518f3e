"""A Java annotation type's elements (`@interface DefinedBy { Api value(); String name()
default ""; }`) are methods of it without a body, with their signature (a default
included), and `@DefinedBy(value = X)` reads the element it names. Before, javac's
`DefinedBy.value()` was the one method javac's parser lists that knoxidx had no definition
for (bench.signatures): `show DefinedBy.value` found nothing, nor who used it."""

from __future__ import annotations

from knoxidx.index import Index
from knoxidx.parse.extract import extract
from tests.helpers import build

DEFINED_BY = """\
package p;

@interface DefinedBy {
    Api value();
    String name() default "";
    int[] lines()[] default {};
    int LIMIT = 3;
}
"""

USER = """\
package p;

class User {
    @DefinedBy(value = Api.COMPILER, name = "x")
    void run() {}
}
"""


def test_the_elements_are_methods_of_their_annotation_type() -> None:
    facts = extract("p/DefinedBy.java", DEFINED_BY.encode(), "java")
    elements = [(d.kind, d.qualname, d.signature, d.signature_data, d.cyclomatic)
                for d in facts.defs if d.kind == "Function"]
    assert elements == [
        ("Function", "DefinedBy.value", "Api value();", ((), "Api", (), ()), 1),
        ("Function", "DefinedBy.name", 'String name() default "";', ((), "String", (), ()), 1),
        # dimensions after the parameter list are the return type's, as javac has them
        ("Function", "DefinedBy.lines", "int[] lines()[] default {};",
         ((), "int[][]", (), ()), 1),
    ]
    assert ("type", ("Api",), 4) in {(r.kind, r.path, r.line) for r in facts.refs}


def test_show_finds_an_element_and_who_names_it(repo) -> None:
    root = repo({"p/DefinedBy.java": DEFINED_BY, "p/User.java": USER,
                 "p/Api.java": "package p;\nenum Api { COMPILER }\n"})
    build(root)
    with Index.open(root) as idx:
        value = idx.describe("DefinedBy.value")
        name = idx.describe("DefinedBy.name")
    assert (value["kind"], value["qualified_name"], value["returns"]) == (
        "Function", "p.DefinedBy.value", "Api")
    assert value["enclosing"]["qualified_name"] == "p.DefinedBy"
    assert [u["qualified_name"] for u in value["uses"]] == ["p.Api"]
    for element in (value, name):
        assert [(r["qualified_name"], r["site"]["line"]) for r in element["referenced_by"]] == [
            ("p.User.run", 4)]
    assert name["signature"] == 'String name() default "";'
