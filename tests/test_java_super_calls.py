"""`super.m()` in Java calls the superclass's method: never a default method of an interface
the class implements (the superclass's overrides it; `I.super.m()` is how one is named)."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

DATES = """\
package p;

interface ChronoDate {
    default ChronoDate plus(long amount) { return this; }
    default ChronoDate minus(long amount) { return this; }
}

abstract class DateImpl implements ChronoDate {
    public ChronoDate plus(long amount) { return ChronoDate.super.plus(amount); }
}

final class HijrahDate extends DateImpl implements ChronoDate {
    public ChronoDate plus(long amount) { return super.plus(amount); }
    public ChronoDate minus(long amount) { return super.minus(amount); }
}
"""


def test_super_is_the_superclass_not_an_implemented_interface(repo) -> None:
    root = repo({"p/Dates.java": DATES})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        calls = {(e["line"], nodes[e["target"]]["qualified_name"], e["confidence"])
                 for e in export.edges(idx.q) if e["type"] == "Calls"}
    assert calls == {
        (9, "p.ChronoDate.plus", "exact"),
        (13, "p.DateImpl.plus", "inferred"),
        (14, "p.ChronoDate.minus", "inferred"),  # the superclass inherits it
    }
