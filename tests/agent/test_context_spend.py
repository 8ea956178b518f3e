"""The benchmark's account of where a gold definition stood in context's ranking."""

from __future__ import annotations

from bench.context_eval.mining import Definition
from bench.context_eval.spend import band, placed_by, where
from knoxidx.answers.context import Candidate
from knoxidx.answers.packing import FILE_KIND


def _function(n: int, path: str, start: int, end: int, **kw: object) -> Candidate:
    return Candidate(key=f"node:{n}", path=path, start=start, end=end, kind="Function",
                     name=f"f{n}", node_id=n, **kw)  # type: ignore[arg-type]


def test_a_gold_function_stands_where_the_first_candidate_holding_it_is_ranked() -> None:
    top = _function(1, "a.py", 1, 9, hit_rank=0)
    whole_file = Candidate(key="file:a.py", path="a.py", start=1, end=90, kind=FILE_KIND,
                           name="a.py")
    klass = Candidate(key="node:2", path="b.py", start=1, end=80, kind="Class", name="K",
                      node_id=2, relation="enclosing")
    method = _function(3, "b.py", 20, 30, relation="caller")
    hits = [_function(10 + n, "c.py", n * 10, n * 10 + 5, hit_rank=n) for n in range(1, 31)]
    ranked = [top, whole_file, *hits[:12], klass, *hits[12:], method]
    assert where(Definition("a.py", "f1", 1, 9), ranked, ranked) == "place 1"
    # shown first inside its class (15th), long before the method itself (34th)
    assert where(Definition("b.py", "f3", 20, 30), ranked, ranked) == "place 6-15"
    # the top hit's whole file holds it, and no candidate of its own
    assert where(Definition("a.py", "g", 40, 50), ranked, ranked) == \
        "only in the top hit's file"
    wider = [*ranked, _function(4, "d.py", 1, 20, relation="sibling")]
    assert where(Definition("d.py", "h", 5, 9), ranked, wider) == \
        "only in the tuner's wider gathering"
    assert where(Definition("e.py", "i", 5, 9), ranked, wider) == "never gathered"


def test_a_block_is_told_by_what_placed_it() -> None:
    assert [band(n) for n in (1, 2, 5, 6, 15, 16, 30, 31)] == \
        ["1", "2-5", "2-5", "6-15", "6-15", "16-30", "16-30", "31+"]
    assert placed_by(_function(1, "a.py", 1, 9, hit_rank=6), "elided") == "hit 6-15 elided"
    assert placed_by(_function(2, "a.py", 1, 9, relation="callee"), "full") == "callee full"
    assert placed_by(Candidate(key="file:a.py", path="a.py", start=1, end=90, kind=FILE_KIND,
                               name="a.py"), "full") == "top file full"
