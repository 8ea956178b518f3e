from __future__ import annotations

import itertools
import pickle
import random
import time
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydefs import Def, python_definitions
from retrieval_support import SITE_PACKAGES

from knoxidx.retrieval.chunker import ChunkBudget, chunk_file, split_lines
from knoxidx.retrieval.tokens import default_counter


def line_count(source: bytes) -> int:
    return len(split_lines(source.decode("utf-8", "replace"))) if source else 0


def assert_covered(chunks, n_lines: int) -> None:
    covered = set()
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= n_lines
        covered.update(range(c.start_line, c.end_line + 1))
    assert covered == set(range(1, n_lines + 1))
    starts = [c.start_line for c in chunks]
    assert starts == sorted(starts)


def covered_python_chunks(name: str, source: bytes, budget: ChunkBudget) -> list:
    """``source`` chunked with its own definitions, every line checked to be covered."""
    chunks = chunk_file(name, source, "python", python_definitions(source), budget=budget)
    assert_covered(chunks, line_count(source))
    return chunks


def real_python_files(count: int, seed: int) -> list[Path]:
    files = sorted(SITE_PACKAGES.glob("*/**/*.py"))
    picked = random.Random(seed).sample(files, count)
    # and a couple of big ones, which must be split
    big = [p for p in files if 150_000 < p.stat().st_size < 300_000]
    return picked + random.Random(seed).sample(big, min(2, len(big)))


@pytest.mark.parametrize(
    ("budget", "seed"),
    [(ChunkBudget(), 4), (ChunkBudget(max_tokens=300, overlap_tokens=40, merge_tokens=150), 5)],
)
def test_every_line_of_real_files_is_covered(budget: ChunkBudget, seed: int) -> None:
    counter = default_counter()
    checked = 0
    for path in real_python_files(25, seed):
        source = path.read_bytes()
        try:
            defs = python_definitions(source)
        except (SyntaxError, ValueError):
            continue
        chunks = chunk_file(str(path), source, "python", defs, budget=budget)
        assert_covered(chunks, line_count(source))
        text = "".join(c.text for c in chunks)
        for c in chunks:
            assert c.token_count == counter.count(c.text)
            if c.token_count > budget.max_tokens:
                assert c.start_line == c.end_line, (
                    "only a single over-long line may exceed the budget"
                )
        if chunks:
            assert len(text) >= len(source.decode("utf-8", "replace"))
        checked += 1
    assert checked >= 20


def test_real_files_in_other_languages_are_covered_without_definitions() -> None:
    files = sorted(SITE_PACKAGES.glob("**/*.js"))[:5] + sorted(SITE_PACKAGES.glob("**/*.pyi"))[:5]
    for path in files:
        source = path.read_bytes()
        chunks = chunk_file(str(path), source, "javascript", [])
        assert_covered(chunks, line_count(source))


SMALL = b"""import os


def one():
    return 1


def two():
    return 2
"""


def test_small_neighbours_are_merged_and_symbols_recorded() -> None:
    chunks = chunk_file("m.py", SMALL, "python", python_definitions(SMALL))
    assert len(chunks) == 1
    (c,) = chunks
    assert (c.start_line, c.end_line) == (1, 9)
    assert c.symbols == ("one", "two")
    assert c.symbol == "one" and c.kind == "Function"
    assert c.text == SMALL.decode()
    assert c.header.startswith("m.py")
    assert len(c.content_hash) == 32


def test_chunks_and_budgets_pickle_whole() -> None:
    """Parse workers send their chunks to the writer and get the budget from the parent, both
    pickled; compiled by mypyc, a frozen class is unpickled through its ``__setattr__``, which
    refuses every field."""
    budget = ChunkBudget(max_tokens=300, overlap_tokens=40, merge_tokens=150)
    chunks = chunk_file("m.py", SMALL, "python", python_definitions(SMALL), budget=budget)
    assert chunks and chunks[0].symbol_kinds
    back = pickle.loads(pickle.dumps((budget, chunks)))
    assert back == (budget, chunks)
    assert [(c.symbol_kinds, c.symbol_signatures) for c in back[1]] == [
        (c.symbol_kinds, c.symbol_signatures) for c in chunks]


def big_class_source(methods: int = 12, body_lines: int = 30) -> bytes:
    out = ["import os", "", "", "class Big:", '    """A big class."""', ""]
    for m in range(methods):
        out += ["    @staticmethod", f"    def method_{m}(value):", f'        """Method {m}."""']
        out += [
            f"        value = value + {i} * os.sep.join(['alpha', 'beta', 'gamma'])"
            for i in range(body_lines)
        ]
        out += ["        return value", ""]
    out += ["", "def after():", "    return Big()", ""]
    return "\n".join(out).encode()


def test_oversized_class_is_split_at_its_methods() -> None:
    source = big_class_source()
    defs = python_definitions(source)
    budget = ChunkBudget(max_tokens=1000, overlap_tokens=100, merge_tokens=400)
    chunks = chunk_file("big.py", source, "python", defs, budget=budget)
    assert_covered(chunks, line_count(source))
    assert all(c.token_count <= 1000 for c in chunks)
    method_chunks = [c for c in chunks if any(s.startswith("Big.method_") for s in c.symbols)]
    assert len(method_chunks) >= 6
    for c in method_chunks:
        big_end = next(d.end_line for d in defs if d.qualname == "Big")
        if "Big" not in c.symbols and c.end_line <= big_end:  # the first one carries the header
            assert c.enclosing == ("Big",)
            assert "in Big" in c.header
            # whole methods, decorator included: splits fall on child boundaries
            assert c.text.splitlines()[0].strip() in ("@staticmethod", "")
        assert c.text.splitlines()[-1].strip() in ("return value", "", "return Big()")


def test_a_class_over_member_tokens_gives_each_method_its_own_chunk() -> None:
    # fits max_tokens whole: before member splitting it was one chunk speaking for 8 methods
    source = big_class_source(methods=8, body_lines=10)
    defs = python_definitions(source)
    whole = ChunkBudget(member_tokens=2048, definition_merge_tokens=512)
    assert sum("Big" in c.symbols for c in chunk_file("b.py", source, "python", defs,
                                                      budget=whole)) == 1
    chunks = chunk_file("b.py", source, "python", defs, budget=ChunkBudget())
    assert_covered(chunks, line_count(source))
    methods = [c for c in chunks if any(s.startswith("Big.method_") for s in c.symbols)]
    assert len(methods) == 8
    for c in methods:
        assert len([s for s in c.symbols if s.startswith("Big.method_")]) == 1
    for c in methods[1:-1]:  # the first shares the class line's chunk, the last the file's tail
        assert c.text.lstrip().startswith("@staticmethod")
        assert c.enclosing == ("Big",) and "in Big" in c.header


def test_small_definitions_merge_only_up_to_definition_merge_tokens() -> None:
    counter = default_counter()
    defs_source = "\n\n".join(
        f"def f{i}(a, b):\n    return alpha_{i}(a) + beta_{i}(b) * gamma_{i}(a, b)\n"
        for i in range(12)
    ).encode()
    budget = ChunkBudget(merge_tokens=512, definition_merge_tokens=100, min_tokens=4)
    chunks = covered_python_chunks("f.py", defs_source, budget)
    assert len(chunks) > 1
    assert all(c.token_count <= 100 for c in chunks)
    assert all(len(c.symbols) >= 1 for c in chunks)
    # code between definitions (no definition in it) still merges up to merge_tokens
    plain = "\n".join(f"VALUE_{i} = compute(alpha, beta, {i})" for i in range(40)).encode()
    assert counter.count(plain.decode()) <= 512
    assert len(chunk_file("p.py", plain, "python", [], budget=budget)) == 1


def test_nested_functions_stay_in_their_function() -> None:
    inner = "\n".join(f"        step_{i} = transform(value, {i})" for i in range(30))
    source = (
        "def outer(value):\n    def helper_one(value):\n" + inner + "\n        return value\n"
        "\n    def helper_two(value):\n" + inner + "\n        return value\n"
        "\n    return helper_two(helper_one(value))\n"
    ).encode()
    defs = python_definitions(source)
    chunks = chunk_file("n.py", source, "python", defs, budget=ChunkBudget())
    assert len(chunks) == 1 and chunks[0].symbols[0] == "outer"


def test_oversized_function_is_split_between_lines_with_overlap() -> None:
    body = [f"    total = total + compute_value(item_{i}, factor={i})" for i in range(400)]
    source = (
        "def huge(items):\n    total = 0\n" + "\n".join(body) + "\n    return total\n"
    ).encode()
    budget = ChunkBudget(max_tokens=500, overlap_tokens=60, merge_tokens=200)
    chunks = covered_python_chunks("huge.py", source, budget)
    assert len(chunks) > 3
    for first, second in itertools.pairwise(chunks):
        assert second.start_line <= first.end_line, "consecutive windows overlap"
        overlap = default_counter().count(
            "".join(split_lines(source.decode())[second.start_line - 1 : first.end_line])
        )
        assert 0 < overlap <= 60
    assert chunks[0].symbols == ("huge",)
    assert all(c.enclosing == ("huge",) and c.symbol == "huge" for c in chunks[1:])
    assert all(c.token_count <= 500 for c in chunks)


def test_a_line_over_the_budget_is_cut_within_the_line() -> None:
    """A line longer than ``max_tokens`` was one chunk over the budget (a 677 kB line of
    minified JavaScript: one chunk of 315,000 tokens). It is now cut within the line, at word
    boundaries, into chunks of that line within the budget that overlap and cover it; the
    definitions starting on the line are the first piece's."""
    source = (b"x = 1\n" + b"var data = [" + b", ".join(b"item%d" % i for i in range(3000))
              + b"];\ny = 2\n")
    budget = ChunkBudget(max_tokens=200, overlap_tokens=20, merge_tokens=100)
    defs = [Def("Variable", "data", "data", -1, 2, 2, 6, 6 + 12, "var data", "")]
    chunks = chunk_file("min.js", source, "javascript", defs, budget=budget)
    assert_covered(chunks, 3)
    counter = default_counter()
    pieces = [c for c in chunks if c.start_line == c.end_line == 2]
    assert len(pieces) > 20
    assert all(c.token_count <= 200 and c.token_count == counter.count(c.text) for c in pieces)
    line = source.decode().split("\n")[1] + "\n"
    assert line.startswith(pieces[0].text) and line.endswith(pieces[-1].text)
    at = 0
    for before, piece in itertools.pairwise(pieces):
        start = line.index(piece.text, at)  # in order, each overlapping the one before
        assert at < start < at + len(before.text)
        assert not (line[start - 1].isalnum() and piece.text[0].isalnum())  # not mid-word
        at = start
    assert pieces[0].symbols == ("data",) and all(p.symbols == () for p in pieces[1:])
    assert len({p.content_hash for p in pieces}) == len(pieces)


def test_cut_spans_cover_the_text_within_the_budget() -> None:
    counter = default_counter()
    text = " ".join(f"word{i} (x, y)" for i in range(500)) + " " + "z" * 3000
    spans = counter.cut(text, 100, 10)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (a, b), (c, d) in itertools.pairwise(spans):
        assert a < c < b <= d  # overlapping, moving on
    assert all(counter.count(text[a:b]) <= 100 for a, b in spans)
    assert counter.cut("short text", 100, 10) == [(0, 10)]


def test_a_long_run_of_blank_lines_is_split_in_a_few_windows() -> None:
    # 30,000 blank lines (no tokens) inside a doc comment, text beyond them: the overlap walked
    # back to each window's second line, so windows moved one line at a time, each re-read
    # whole (35 s for one Java file, ~30,000 chunks). The overlap now stops at a window's middle.
    source = (b"/**\n * Doc.\n" + b"\n" * 30_000
              + b"".join(b" * words %d and more words of the doc comment\n" % i for i in range(400))
              + b" */\npackage p;\n")
    cpu = time.thread_time()
    chunks = chunk_file("package-info.java", source, "java", [])
    assert time.thread_time() - cpu < 5.0  # (37 s before)
    assert_covered(chunks, line_count(source))
    assert len(chunks) < 40
    for first, second in itertools.pairwise(chunks):
        assert second.start_line > first.start_line and second.end_line > first.end_line


def test_edge_inputs() -> None:
    assert chunk_file("e.py", b"", "python", []) == []
    crlf = b"def f():\r\n    return 1\r\n\r\nx = 2"
    chunks = chunk_file(
        "c.py", crlf, "python", [Def("Function", "f", "f", -1, 1, 2, 0, 0, "def f():", "")]
    )
    assert_covered(chunks, 4)
    assert "".join(c.text for c in chunks) == crlf.decode()
    latin1 = b"# caf\xe9\nvalue = 1\n"
    assert_covered(chunk_file("l.py", latin1, "python", []), 2)


def test_bad_definitions_do_not_break_coverage() -> None:
    source = b"\n".join(f"line {i}".encode() for i in range(1, 51)) + b"\n"
    defs = [
        Def("Function", "a", "a", -1, 5, 20, 0, 0, "a", ""),
        Def("Function", "b", "b", -1, 10, 30, 0, 0, "b", ""),  # overlaps a
        Def("Function", "c", "a.c", 0, 15, 40, 0, 0, "c", ""),  # claims parent a, is not inside
        Def("Function", "d", "d", 7, 45, 49, 0, 0, "d", ""),  # parent out of range
        Def("Function", "e", "e", -1, 60, 70, 0, 0, "e", ""),  # past the end
        Def("Function", "f", "f", -1, 30, 25, 0, 0, "f", ""),  # end before start
    ]
    budget = ChunkBudget(max_tokens=40, overlap_tokens=5, merge_tokens=20, min_tokens=2)
    assert_covered(chunk_file("bad.py", source, "python", defs, budget=budget), 50)


class Node(NamedTuple):
    start: int
    end: int
    children: list


@st.composite
def files_with_definitions(draw):
    n_lines = draw(st.integers(1, 120))
    lines = [
        draw(
            st.sampled_from(
                ["", "x = 1", "    call(alpha, beta)", "# note", "def f(a, b):", "}", "word " * 40]
            )
        )
        for _ in range(n_lines)
    ]
    defs: list[Def] = []

    def make(lo: int, hi: int, parent: int, depth: int) -> None:
        cursor = lo
        while cursor <= hi and depth < 3 and draw(st.booleans()):
            start = draw(st.integers(cursor, hi))
            end = draw(st.integers(start, hi))
            defs.append(
                Def(
                    draw(st.sampled_from(["Function", "Class"])),
                    f"d{len(defs)}",
                    f"d{len(defs)}",
                    parent,
                    start,
                    end,
                    0,
                    0,
                    f"sig {len(defs)}",
                    "",
                )
            )
            make(start + 1, end, len(defs) - 1, depth + 1)
            cursor = end + 1

    make(1, n_lines, -1, 0)
    trailing = draw(st.booleans())
    return ("\n".join(lines) + ("\n" if trailing else "")).encode(), defs


@settings(max_examples=80, deadline=None)
@given(files_with_definitions(), st.integers(20, 200), st.integers(1, 250), st.integers(0, 120))
def test_property_every_line_covered_and_budget_kept(
    case, max_tokens, member_tokens, definition_merge_tokens
) -> None:
    source, defs = case
    budget = ChunkBudget(
        max_tokens=max_tokens,
        overlap_tokens=max_tokens // 4,
        merge_tokens=max_tokens // 2,
        min_tokens=4,
        member_tokens=member_tokens,
        definition_merge_tokens=definition_merge_tokens,
    )
    chunks = chunk_file("p.py", source, "python", defs, budget=budget)
    assert_covered(chunks, line_count(source))
    for c in chunks:
        assert c.token_count <= max_tokens


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def test_fixture_repos_chunk_fully_with_the_indexers_definitions() -> None:
    extract_module = pytest.importorskip("knoxidx.parse.extract")
    languages = pytest.importorskip("knoxidx.languages.registry")
    checked = 0
    for path in sorted(FIXTURES.rglob("*.*")):
        spec = languages.language_for_path(str(path))
        if spec is None:
            continue
        source = path.read_bytes()
        facts = extract_module.extract(str(path), source, spec.name)
        chunks = chunk_file(str(path), source, spec.name, facts.defs)
        assert_covered(chunks, line_count(source))
        named = {d.qualname for d in facts.defs if d.kind in ("Function", "Class", "Interface")}
        covered_symbols = {s for c in chunks for s in c.symbols}
        assert named <= covered_symbols
        checked += 1
    if checked == 0:
        pytest.skip("no fixture sources")
