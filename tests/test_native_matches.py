"""The native query matches (``knoxidx/parse/_matches.c``, built with the compiled build):
extraction's facts with them equal its facts from py-tree-sitter's matches, on every fixture
and on bad input; their text predicates filter as py-tree-sitter's do; a query they cannot
run, or a py-tree-sitter they were not built for, falls back to py-tree-sitter's matches."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from knoxidx.languages.registry import BY_NAME
from knoxidx.parse import compiled_queries, extract
from knoxidx.parse.discovery import discover
from tests.helpers import COMPILED

ROOT = Path(__file__).resolve().parent.parent
native = pytest.importorskip("knoxidx.parse._matches",
                             reason="the native query matches are built by the compiled build")


@pytest.fixture
def both_ways(monkeypatch) -> Iterator[dict[str, dict[str, object]]]:
    """Each language compiled twice: with the native matches' plan and without."""
    tables: dict[str, dict[str, object]] = {"native": {}, "python": {}}
    for switch, table in (("1", tables["native"]), ("0", tables["python"])):
        monkeypatch.setenv("KNOXIDX_NATIVE", switch)
        compiled_queries._NATIVE_LOADED = False
        for language in BY_NAME:
            table[language] = compiled_queries._compile(language)
    monkeypatch.setenv("KNOXIDX_NATIVE", "1")
    compiled_queries._NATIVE_LOADED = False
    saved = dict(extract.COMPILED)
    yield tables
    extract.COMPILED.clear()
    extract.COMPILED.update(saved)
    compiled_queries._NATIVE_LOADED = False


def _facts(tables: dict[str, object], path: str, source: bytes, language: str) -> object:
    extract.COMPILED.clear()
    extract.COMPILED.update(tables)  # type: ignore[arg-type]
    try:
        return extract.extract_rows(path, source, language)
    except Exception as exc:  # noqa: BLE001 - both ways must fail alike
        return repr(exc)


def test_every_language_has_a_plan_and_python_has_none(both_ways) -> None:
    assert extract.native_matches() is native
    for language in BY_NAME:
        assert both_ways["native"][language].plan is not None, language
        assert both_ways["python"][language].plan is None, language


def test_facts_equal_py_tree_sitters_on_every_fixture(both_ways) -> None:
    compared = 0
    for root in sorted((ROOT / "fixtures").iterdir()):
        for f in discover(root).files:
            source = (root / f.path).read_bytes()
            expected = _facts(both_ways["python"], f.path, source, f.language)
            assert _facts(both_ways["native"], f.path, source, f.language) == expected, f.path
            compared += 1
    assert compared >= 40


BAD = {
    "python": b"def f(:\n  x = = 1\nclass A(B:\n    def g(self): return self.h(\n",
    "javascript": b"const a = require('x'; module.exports = {f(}; foo.bar(1,\n",
    "typescript": b"class A<T extends { implements I { m(): T { return this.x.y(; }\n",
    "rust": b"impl<T> Foo for Bar<T { fn new() -> Self { Self::make(::x) }\n",
    "go": b"package p\nfunc (s *S) M( { s.x.Y() }\n",
    "java": b"class A extends { void m() { var x = new B(; x.c().d(); }\n",
}


@pytest.mark.parametrize("language", sorted(BAD))
def test_facts_equal_on_syntax_errors_and_odd_bytes(both_ways, language) -> None:
    for source in (BAD[language], BAD[language] * 50, b"\xff\xfe" + BAD[language],
                   b"", b"\x00" * 10, ("é" * 30 + "(").encode() * 20):
        expected = _facts(both_ways["python"], "f", source, language)
        assert _facts(both_ways["native"], "f", source, language) == expected


def test_deep_nesting_past_the_query_depth_is_cut_alike(both_ways) -> None:
    source = b"x = " + b"[" * 1500 + b"y" + b"]" * 1500 + b"\nf(z)\n"
    expected = _facts(both_ways["python"], "deep.py", source, "python")
    got = _facts(both_ways["native"], "deep.py", source, "python")
    assert got == expected
    assert "not indexed" in " ".join(got[1])  # type: ignore[index]


def test_text_predicates_filter_natively(both_ways) -> None:
    # `#eq? @_require "require"`: a require() is an import, another call with a string is not;
    # `#match? @_exports "^(module\\.)?exports$"` names what CommonJS exports
    source = (b"const a = require('./a');\nconst b = load('./b');\n"
              b"module.exports.run = function run() {};\nother.exports2.x = function x() {};\n")
    facts, _ = _facts(both_ways["native"], "m.js", source, "javascript")  # type: ignore[misc]
    assert facts == _facts(both_ways["python"], "m.js", source, "javascript")[0]  # type: ignore[index]
    assert [i.module for i in facts.imports] == ["./a"]
    names = {d.name for d in facts.defs}
    assert "run" in names and "x" not in names


def test_a_predicate_it_cannot_evaluate_leaves_the_query_to_py_tree_sitter() -> None:
    from tree_sitter import Query

    from knoxidx.languages.registry import ts_language

    query = Query(ts_language("python"),
                  '((identifier) @reference.value (#any-of? @reference.value "a" "b"))')
    roles: dict[int, tuple[str, str, str, int]] = {}
    assert compiled_queries._plan(native, query, roles) is None
    assert roles == {}  # the Python path works its roles out from the matches, as before
    with pytest.raises(ValueError, match="any-of"):
        native.plan(query, b"\x01", b"\x00", (0,), (-1,), ("value",))


def test_it_runs_only_under_the_tree_sitter_it_was_built_for(monkeypatch) -> None:
    import tree_sitter

    assert native.TREE_SITTER_VERSION == tree_sitter.__version__
    monkeypatch.setattr(native, "TREE_SITTER_VERSION", "0.0.0")
    compiled_queries._NATIVE_LOADED = False
    try:
        assert extract.native_matches() is None
    finally:
        monkeypatch.undo()
        compiled_queries._NATIVE_LOADED = False
    assert extract.native_matches() is native
    monkeypatch.setenv("KNOXIDX_NATIVE", "0")
    compiled_queries._NATIVE_LOADED = False
    try:
        assert extract.native_matches() is None
    finally:
        monkeypatch.delenv("KNOXIDX_NATIVE")
        compiled_queries._NATIVE_LOADED = False


def test_bad_arguments_are_type_errors_not_crashes() -> None:
    from tree_sitter import Parser

    from knoxidx.languages.registry import ts_language

    with pytest.raises(TypeError):
        native.pattern_captures(object())
    with pytest.raises(TypeError):
        native.plan(object(), b"", b"", (), (), ())
    plan = compiled_queries.compiled_query("python").plan
    with pytest.raises(TypeError):
        native.matches(plan, object(), b"", 10)
    with pytest.raises((TypeError, ValueError)):  # not a plan
        native.matches(object(), Parser(ts_language("python")).parse(b"x").root_node, b"x", 10)


def test_the_build_compiles_it_with_the_engine() -> None:
    # the stamp vouches for the C source as for the compiled Python (engine.check_compiled)
    stamp = ROOT / "knoxidx" / "compiled.json"
    if stamp.exists():
        assert "knoxidx/parse/_matches.c" in stamp.read_text()
    assert os.path.basename(native.__file__).startswith("_matches")


# Fails the Python allocations of one call one at a time (CPython's _testcapi.set_nomemory),
# each in turn, until the call needs no more: each must raise MemoryError or return what it
# returns with memory to spare. Run in a child: a crash is its exit by a signal.
FAILED_ALLOCATIONS = r"""
import sys
import _testcapi
from knoxidx.parse import compiled_queries, extract

native = extract.native_matches()

def outcomes(call):
    seen, start, clean_since = {}, 1, 0
    while clean_since < 50:
        _testcapi.set_nomemory(start, start + 1)
        try:
            try:
                result = ("ok", call())
            finally:
                _testcapi.remove_mem_hooks()
        except MemoryError:
            result = ("MemoryError", None)
        except Exception as exc:
            result = (f"{type(exc).__name__}: {exc}", None)
        clean_since = clean_since + 1 if result[0] == "ok" else 0
        seen.setdefault(result[0], set()).add(repr(result[1]) if result[0] == "ok" else "")
        start += 1
    return seen

SOURCES = {
    # a local's span past the small integers Python keeps, last of the matches
    "python": b"#" * 300 + b"\nclass A(B):\n    def f(self, a):\n        self.g(a).h()\n        x = 1\n",
    "java": b"class A extends B { void m(int a) { var x = new B(a); x.c().d(a); } }\n",
    # regex predicates run Python (`#match?` on CommonJS exports)
    "javascript": b"const a = require('./a');\nmodule.exports.run = function run() { a.b(); };\n",
}
for language, source in SOURCES.items():
    compiled = compiled_queries.compiled_query(language)
    plans = outcomes(lambda: compiled_queries._plan(native, compiled.query, {}) is not None)
    root = compiled.parser.parse(source).root_node
    found = outcomes(lambda: native.matches(compiled.plan, root, source, extract.MAX_QUERY_DEPTH))
    for name, seen in (("plan", plans), ("matches", found)):
        if set(seen) != {"ok", "MemoryError"} or len(seen["ok"]) != 1:
            sys.exit(f"{language} {name}: {sorted(seen)}")
"""


@pytest.mark.skipif(COMPILED, reason="mypyc's runtime aborts on a failed allocation of its own "
                    "('fatal: out of memory') before the matches see one; their C is the same")
def test_a_failed_allocation_raises_memory_error_and_the_result_is_whole() -> None:
    """A parse worker near its memory cap: the plan (made in the worker that first extracts a
    language) crashed (SIGSEGV) when its last array could not be allocated. (A span whose
    integer could not be made was listed with a hole in it, its MemoryError left pending.)"""
    import subprocess
    import sys

    pytest.importorskip("_testcapi", reason="CPython's test C API is not installed")
    done = subprocess.run([sys.executable, "-c", FAILED_ALLOCATIONS], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
