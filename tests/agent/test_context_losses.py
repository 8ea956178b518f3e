"""The benchmark's account of a gold definition the context never gathered."""

from __future__ import annotations

from bench.context_eval.losses import not_gathered
from bench.context_eval.mining import Definition
from knoxidx.answers.context import Candidate


def _hit(path: str, rank: int) -> Candidate:
    return Candidate(key=f"range:{path}:{rank}", path=path, start=1, end=2, kind="code",
                     name=path, hit_rank=rank)


def test_a_miss_is_told_by_where_search_put_its_file() -> None:
    # hits in search's order a.py, b.py, a.py, c.py ... h.py: a.py is the first file, h.py the 7th
    ranked = [_hit(p, n) for n, p in enumerate(
        ["a.py", "b.py", "a.py", "c.py", "d.py", "e.py", "f.py", "h.py"])]
    ranked.append(Candidate(key="node:1", path="z.py", start=1, end=9, kind="Function",
                            name="z", relation="callee"))  # a neighbour's file is no hit's
    assert not_gathered(Definition("a.py", "f", 10, 20), ranked[::-1]) \
        == "not gathered: its file is among search's first 5"
    assert not_gathered(Definition("e.py", "f", 10, 20), ranked) \
        == "not gathered: its file is among search's first 5"
    assert not_gathered(Definition("h.py", "f", 10, 20), ranked) \
        == "not gathered: its file is search's 6th or lower"
    assert not_gathered(Definition("z.py", "f", 10, 20), ranked) \
        == "not gathered: no hit in its file"
