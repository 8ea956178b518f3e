"""A Java interface's or annotation type's fields (`interface Limits { int MAX = 8; }`) are
public static final without saying so: constants held by their type, as a class's `static
final` fields are. Before, they were no definitions at all: `show Limits.MAX` found nothing,
and neither `Limits.MAX` nor an implementing class's bare `MAX` had anything to resolve to."""

from __future__ import annotations

from knoxidx.index import Index
from knoxidx.parse.extract import extract
from tests.helpers import build

LIMITS = """\
package p;

interface Limits {
    int MAX = 8;
    String[] NAMES = {}, ALIASES = {};
    Unit UNIT = Unit.BYTES;
}
"""

MARKER = """\
package p;

@interface Marker {
    int LEVEL = 2;
    String value() default "";
}
"""

USER = """\
package p;

class Buffer implements Limits {
    static final int MIN = 1;

    int size(int asked) {
        return asked > MAX ? MIN : asked;
    }

    int level() {
        return Marker.LEVEL + Limits.MAX;
    }
}
"""


def test_the_fields_are_constants_of_their_type() -> None:
    limits = extract("p/Limits.java", LIMITS.encode(), "java")
    assert [(d.kind, d.qualname, d.signature, d.type_hint) for d in limits.defs[1:]] == [
        ("Constant", "Limits.MAX", "int MAX = 8;", ("int",)),
        ("Constant", "Limits.NAMES", "String[] NAMES = {}, ALIASES = {};", ()),
        ("Constant", "Limits.ALIASES", "String[] NAMES = {}, ALIASES = {};", ()),
        ("Constant", "Limits.UNIT", "Unit UNIT = Unit.BYTES;", ("Unit",)),
    ]
    assert all(d.parent == 0 for d in limits.defs[1:])
    assert ("type", ("Unit",), 6) in {(r.kind, r.path, r.line) for r in limits.refs}
    marker = extract("p/Marker.java", MARKER.encode(), "java")
    assert [(d.kind, d.qualname) for d in marker.defs] == [
        ("Interface", "Marker"), ("Constant", "Marker.LEVEL"), ("Function", "Marker.value")]
    # the same kind a class's constant gets
    buffer = extract("p/Buffer.java", USER.encode(), "java")
    assert ("Constant", "Buffer.MIN") in {(d.kind, d.qualname) for d in buffer.defs}


def test_show_finds_a_constant_and_who_reads_it(repo) -> None:
    root = repo({"p/Limits.java": LIMITS, "p/Marker.java": MARKER, "p/Buffer.java": USER,
                 "p/Unit.java": "package p;\nenum Unit { BYTES }\n",
                 # the same name elsewhere: the bare `MAX` is the implemented interface's, not a guess
                 "p/Sizes.java": "package p;\ninterface Sizes { int MAX = 9; }\n"})
    build(root)
    with Index.open(root) as idx:
        limit = idx.describe("Limits.MAX")
        level = idx.describe("Marker.LEVEL")
        minimum = idx.describe("Buffer.MIN")
        other = idx.describe("Sizes.MAX")
    assert (limit["kind"], limit["qualified_name"]) == ("Constant", "p.Limits.MAX")
    assert limit["enclosing"]["qualified_name"] == "p.Limits"
    # the bare name in the implementing class and the qualified one, as a class constant's
    assert [(r["qualified_name"], r["site"]["line"]) for r in limit["used_by"]] == [
        ("p.Buffer.size", 7), ("p.Buffer.level", 11)]
    assert [(r["qualified_name"], r["site"]["line"]) for r in minimum["used_by"]] == [
        ("p.Buffer.size", 7)]
    assert other["used_by"] == []
    assert (level["kind"], level["enclosing"]["qualified_name"]) == ("Constant", "p.Marker")
    assert [(r["qualified_name"], r["site"]["line"]) for r in level["used_by"]] == [
        ("p.Buffer.level", 11)]
