"""Inputs that once made extraction take minutes (each found by ``bench/fuzz.py`` or by the
pathological-file checks): every one now finishes within a CPU bound, with what it could index
and a note on what it left out."""

from __future__ import annotations

import gc
import os
import time
from types import SimpleNamespace

import pytest

from knoxidx.parse.compiled_queries import compiled_query
from knoxidx.parse.discovery import SourceFile
from knoxidx.parse.extract import (
    MAX_QUERY_DEPTH,
    ParseTimeoutError,
    extract,
    extract_with_notes,
)
from knoxidx.parse.name_paths import name_path
from knoxidx.parse.reader import read_and_extract
from knoxidx.parse.tree_parse import parse_tree

N = 10_000
# 10,000-deep nesting in each language, in the shapes whose queries were quadratic in depth.
DEEP = {
    "python": "x = " + "[" * N + "]" * N + "\n",
    "typescript": "let x: " + "Array<" * N + "number" + ">" * N + " = 1;\n",
    "tsx": "const x = " + "<div>" * N + "</div>" * N + ";\n",
    "javascript": "a" + "(b" * N + ")" * N + ";\n",
    "go": "package p\nfunc f() {\n" + "{" * N + "}" * N + "\n}\n",
    "rust": "fn f() { let x = " + "(" * N + "1" + ")" * N + "; }\n",
    "java": "class A {" * N + "}" * N + "\n",
}


def cpu_seconds(fn, *args):
    start = time.thread_time()
    result = fn(*args)
    return result, time.thread_time() - start


@pytest.mark.parametrize("language", sorted(DEEP))
def test_deep_nesting_is_bounded(language: str) -> None:
    # Before: TypeScript generics 10,000 deep took 12 s (queries keep a state per ancestor),
    # 10,000 nested Java classes 4 s (a doc-comment lookup per class walks from the root).
    (facts, notes), seconds = cpu_seconds(extract_with_notes, "deep", DEEP[language].encode(),
                                          language)
    assert seconds < 3.0, seconds
    assert any(f"deeper than {MAX_QUERY_DEPTH}" in n for n in notes), notes


def test_a_deep_stretch_among_ordinary_code_still_gets_its_note() -> None:
    """A tree without syntax errors is sampled at 16 nodes for its depth: a deep stretch that
    holds a third of the nodes is found, wherever in the file it lies."""
    ordinary = "".join(f"def f{i}(a, b):\n    return g(a + b, {i})\n" for i in range(800))
    deep = "x = " + "[" * 3000 + "]" * 3000 + "\n"
    for source in (ordinary + deep, deep + ordinary):
        facts, notes = extract_with_notes("mixed.py", source.encode(), "python")
        assert not facts.error_nodes and len(facts.defs) >= 800
        assert any(f"deeper than {MAX_QUERY_DEPTH}" in n for n in notes), notes


def test_shallow_code_is_unaffected_by_the_depth_bound() -> None:
    source = b"class A:\n    def f(self):\n        return [[[g(x) for x in y]]]\n"
    facts, notes = extract_with_notes("a.py", source, "python")
    assert notes == [] and [d.name for d in facts.defs] == ["A", "f"]
    assert any(r.path == ("g",) for r in facts.refs)


def test_a_parse_that_runs_away_is_cancelled_by_cpu_deadline() -> None:
    # 74 KB of unterminated doc comments: tree-sitter-java took 43 s to parse it; files under
    # 256 KiB had no deadline at all.
    source = b"package p;\n" + b"\n/** It\xe2" * 8300
    with pytest.raises(ParseTimeoutError, match="CPU"):
        cpu = time.thread_time()
        try:
            extract("A.java", source, "java")
        finally:
            assert time.thread_time() - cpu < 5.0


def test_the_reader_counts_a_timeout_with_a_clear_reason(tmp_path) -> None:
    (tmp_path / "A.java").write_bytes(b"package p;\n" + b"\n/** It\xe2" * 8300)
    result = read_and_extract((str(tmp_path), SourceFile("A.java", 1, 0, "java"), None, None, True))
    assert result.status == "timeout" and "CPU" in result.message


def _system_error_from_memory() -> SystemError:
    # what CPython makes of a C function that fails while a MemoryError is set
    error = SystemError("<built-in function thread_time> returned a result with an "
                        "exception set")
    error.__cause__ = MemoryError()
    return error


@pytest.mark.parametrize("failure", [MemoryError, _system_error_from_memory])
def test_the_reader_says_a_file_ran_out_of_memory(tmp_path, monkeypatch, failure) -> None:
    # A real failed allocation depends on where the worker's cap falls (tree-sitter aborts
    # the worker when its own allocation fails first: parse_pool's "worker died" path), so the
    # extraction here raises what Python raised in bench.fuzz's workers (seed 1501).
    import knoxidx.parse.reader as reader

    def fail(*_args: object) -> None:
        raise failure()

    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    monkeypatch.setattr(reader, "extract_rows", fail)
    result = read_and_extract((str(tmp_path), SourceFile("a.py", 1, 0, "python"), None, None, True))
    assert result.status == "error"
    assert result.message == reader.OUT_OF_MEMORY and "KNOXIDX_WORKER_MEMORY_MB" in result.message
    assert result.hash  # an unchanged file is not tried again by the next update


@pytest.mark.parametrize("language,source", [
    # every declarator is a definition on one shared declaration node; classify() listed that
    # node's children once per declarator: 5,000 declarators took 46-70 s
    ("javascript", "const " + ", ".join(f"a{i} = 1" for i in range(5000)) + ";\n"),
    ("typescript", "export let " + ", ".join(f"a{i}: number = 1" for i in range(5000)) + ";\n"),
    ("java", "class A { public static final int "
     + ", ".join(f"a{i} = 1" for i in range(5000)) + "; }\n"),
])
def test_many_declarators_in_one_statement(language: str, source: str) -> None:
    facts, seconds = cpu_seconds(extract, "many", source.encode(), language)
    assert len(facts.defs) >= 5000 and seconds < 5.0, seconds
    kinds = {d.kind for d in facts.defs if d.name.startswith("a")}
    assert kinds == ({"Variable"} if language == "typescript" else {"Constant"})


def test_node_text_stays_cheap_on_a_deadline_parse() -> None:
    # Parsing through a read callback (needed for the deadline) makes each node's text a call
    # back into Python; 64 KiB reads made 12,000 identifiers' texts cost 10 s.
    source = ("class A {\n" + "".join(f"    int f{i}() {{ return g{i}(x{i}); }}\n"
                                      for i in range(6000)) + "}\n").encode()
    facts, seconds = cpu_seconds(extract, "A.java", source, "java")
    assert len(facts.defs) == 6001 and seconds < 4.0, seconds


def test_a_very_long_call_chain_keeps_only_the_last_name() -> None:
    source = ("x" + ".f()" * 20_000 + ";\n").encode()
    facts, seconds = cpu_seconds(extract, "chain.js", source, "javascript")
    assert seconds < 4.0, seconds
    assert all(r.path[-1] == "f" for r in facts.refs if r.kind == "call")


def test_resolver_memo_merges_keys_in_place() -> None:
    """A file's lookup keys grow with every name it misses (80,000 in a 1 MB minified line):
    a memoised lookup must add its keys to the set, not copy the set, or resolving that file
    is quadratic (53 s for the 1 MB line before; 1.7 s after)."""
    from knoxidx.graph.resolve import Resolver

    resolver = Resolver(SimpleNamespace(layout=None))  # memo() reads no workspace
    resolver.keys = {"file:a"}
    keys = resolver.keys

    def compute() -> int:
        resolver.keys.add("name:x")
        return 1

    assert resolver.memo(("k",), compute) == 1 and resolver.memo(("k",), compute) == 1
    assert resolver.keys is keys and keys == {"file:a", "name:x"}


def test_a_memo_hit_replays_its_keys_into_every_new_key_set() -> None:
    """A memo hit replays its keys once per key set: never zero times in a set that has not
    seen them (the next file's, or an enclosing computation's), or a change would miss the
    file that depends on it."""
    from knoxidx.graph.resolve import Resolver

    resolver = Resolver(SimpleNamespace(layout=None))

    def compute() -> int:
        resolver.keys.add("name:x")
        return 1

    resolver.memo(("k",), compute)
    resolver.keys = next_file = set()
    assert resolver.memo(("k",), compute) == 1 and next_file == {"name:x"}
    outer = resolver.keys
    assert resolver.memo(("outer",), lambda: resolver.memo(("k",), compute) + 1) == 2
    assert resolver.keys is outer and resolver._memo[("outer",)][1] == {"name:x"}


def test_a_syntax_error_thousands_of_tokens_wide_is_skipped_not_queried_for_seconds() -> None:
    """Found by ``bench.fuzz``: 69,264 `(` as Python parse in 0.06 s into one ERROR node with
    as many children, and tree-sitter's query cursor is quadratic in those (6 s per query,
    two queries per file); a list literal as wide is linear and stays indexed."""
    with pytest.raises(ParseTimeoutError, match="69,264 tokens side by side"):
        cpu = time.thread_time()
        try:
            extract("wide.py", b"(" * 69_264, "python")
        finally:
            assert time.thread_time() - cpu < 2.0
    wide_list = b"T = [" + b",".join(str(i).encode() for i in range(40_000)) + b"]\n"
    assert [d.name for d in extract("table.py", wide_list, "python").defs] == ["T"]
    facts = extract("few.py", b"def f():\n    return 1\n" + b"(" * 2_000, "python")
    assert [d.name for d in facts.defs] == ["f"]


def test_a_rust_use_tree_nested_thousands_deep_is_read_not_a_crash(tmp_path) -> None:
    """`use a::{a::{...}}` 3,000 deep: the recursive walk of the use tree hit Python's
    recursion limit inside py-tree-sitter's node.text, which crashed the parse worker (SIGSEGV;
    found by bench.fuzz on a mangled file). The walk keeps a stack now; the update is the
    real one, so before the fix the file was "the parse worker died"."""
    from tests.helpers import build

    depth = 3000
    (tmp_path / "deep.rs").write_text(
        "use " + "a::{" * depth + "b, c as d" + "}" * depth + ";\n"
        "use std::{io::{self, Read}, fs::File as F, collections::*};\nfn main() {}\n")
    report = build(tmp_path)
    assert not report.errors, report.errors
    facts = extract("deep.rs", (tmp_path / "deep.rs").read_bytes(), "rust")
    module = "::".join(["a"] * depth)
    assert [(i.module, i.name, i.alias) for i in facts.imports] == [
        (module, "b", "b"), (module, "c", "d"),
        ("std::io", "", "io"), ("std::io", "Read", "Read"), ("std::fs", "File", "F"),
        ("std::collections", "*", ""),
    ]


def test_go_declarations_of_thousands_of_names_take_linear_time() -> None:
    """`var a0, a1, ... int` and a struct field list of thousands of names (a mangled struct
    swallowing the file, found by bench.fuzz): a query pattern holding the names and the type
    made tree-sitter's query cursor cubic in the names (1,000 in a `var`: 6.4 s; 2,000 names
    in the mangled struct: 25 s). The type is now read from the node, and each name keeps it."""
    names = ", ".join(f"a{i}" for i in range(3000))
    source = f"package main\n\nvar {names} int\n\ntype P struct {{\n\t{names} float64\n}}\n"
    facts, seconds = cpu_seconds(extract, "many.go", source.encode(), "go")
    assert seconds < 3.0, seconds
    kinds = [(d.kind, d.type_hint) for d in facts.defs if d.name == "a2999"]
    assert kinds == [("Variable", ("int",)), ("Variable", ("float64",))], kinds
    mangled = ("package main\n\ntype A struct {\n\tf *int\n\tg intdyn string\n\nfunc x() {\n"
               "\tg, _ := " + ", _ := " * 3000 + "f\n}\n")
    facts, seconds = cpu_seconds(extract, "mangled.go", mangled.encode(), "go")
    assert seconds < 3.0, seconds
    assert [d.type_hint for d in facts.defs if d.name == "f"][0] == ("int",)


@pytest.mark.parametrize("form", ["func() {\n\tvar %s *T\n}", "func() {\n\tvar %s = f()\n}",
                                  "var %s int", "const %s = 1"])
def test_go_var_of_twenty_thousand_names_takes_linear_time(form: str) -> None:
    """`var a0, ..., a19999 *T` in a function, or `= f()`: the binding patterns held a name
    and the type or value, and tree-sitter's query cursor was quadratic in the names (8,000
    names: 1 s, the value pattern alone 0.8 s). At the top level each name was read as the
    previous one's child, so finding its scope walked the chain (8,000 names: 3.4 s). Both
    read the names from the node now, or anchor them at the first."""
    names = ", ".join(f"a{i}" for i in range(20_000))
    source = "package main\n\n" + ("func g" + form[4:] if form.startswith("func") else form)
    facts, seconds = cpu_seconds(extract, "many.go", (source % names).encode() + b"\n", "go")
    assert seconds < 3.0, seconds
    bound = [(b.name, b.type_path) for b in facts.bindings if b.name.startswith("a")]
    if form.startswith("func") and "*T" in form:
        assert len(bound) == 20_000
    elif form.startswith("func"):  # each name its result, whatever their number
        assert len(bound) == 20_000
        assert bound[:2] == [("a0", ("f",)), ("a1", ("f", "#1"))]
        assert bound[-1] == ("a19999", ("f", "#19999"))
    else:
        assert len([d for d in facts.defs if d.parent == -1]) == 20_000


def test_a_parse_stopped_by_an_exception_does_not_run_on_into_the_next_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An exception out of the parse's progress callback (a MemoryError near a worker's
    memory cap; found by bench.fuzz) stopped the parse half-way, and tree-sitter resumed the
    stopped parse on the next call: the worker's next file came out as the rest of this one
    (definitions named "he" and hundreds with no name). The parser is reset now."""
    big = b"function f() { return g(1); }\n" * 20_000
    real = time.thread_time
    calls = 0

    def failing() -> float:
        nonlocal calls
        calls += 1
        if calls == 50:  # well inside the parse: the callback reads the clock every 16th call
            raise MemoryError("simulated")
        return real()

    monkeypatch.setattr(time, "thread_time", failing)
    with pytest.raises((MemoryError, SystemError)):
        extract("big.js", big, "javascript")
    monkeypatch.setattr(time, "thread_time", real)
    facts = extract("small.js", b"function hello() { return world(); }\n", "javascript")
    assert [d.name for d in facts.defs] == ["hello"]
    assert [r.path for r in facts.refs] == [("world",)]


def test_a_go_parameter_swallowing_thousands_of_tokens_takes_linear_time() -> None:
    """`func f(r1 int, r2 int16,2 int16,2 ...)`: one parameter_declaration of 32,000 children
    (a mangled file, found by bench.fuzz: 9 s for 88 kB). The parameter binding patterns held
    the name and the type, quadratic in the children as `var`'s were; they read the names from
    the node now."""
    source = "package main\n\nfunc f(r1 int, r2 int16" + ",2 int16" * 8000 + ") {}\n"
    facts, seconds = cpu_seconds(extract, "mangled.go", source.encode(), "go")
    assert seconds < 2.0, seconds
    assert [(b.name, b.type_path) for b in facts.bindings][:2] == [("r1", ("int",)),
                                                                  ("r2", ("int16",))]


@pytest.mark.parametrize("form", ["function App({ %s }: Props) {}",
                                  "function App({ %s }: Props<T>) {}",
                                  "function App({ %s }: { a1: Board; a2: Map<K> }) {}",
                                  "function g(props: P) { const { %s } = props; }"])
def test_a_destructured_typescript_parameter_of_thousands_of_names_takes_linear_time(
    form: str,
) -> None:
    """`function App({ children, ldren, ldren, ... }: Props)`: an object pattern of 14,000
    names (a mangled file, found by bench.fuzz: 12 s for 80 kB). The binding patterns held
    each name and the type beside the pattern, quadratic in the names (5,000: 1.5 s; typed
    inline, where each name was paired with each property, 5.9 s). The names are read from the
    pattern now, and an inline type's properties looked up by name."""
    names = ", ".join(f"a{i}" for i in range(10_000))
    facts, seconds = cpu_seconds(extract, "App.tsx", (form % names).encode() + b"\n", "tsx")
    assert seconds < 2.0, seconds
    bound = {(b.name, b.type_path) for b in facts.bindings if b.name.startswith("a")}
    if "Board" in form:  # only the names the inline type gives a type to
        assert bound == {("a1", ("Board",)), ("a2", ("Map",))}
    else:
        assert len(bound) == 10_000 and ("a9999", ("props", "a9999")
                                         if "props" in form else ("Props", "a9999")) in bound


@pytest.mark.slow
def test_parsing_the_same_file_again_and_again_holds_no_more_memory() -> None:
    """py-tree-sitter 0.26 kept about the size of each file parsed through a read callback
    that returned 256 bytes at a time (8 kB a file on go-git, 64 kB here): for ever, in a
    parse worker that lives as long as a watcher. The parse reads through a fixed window now
    (tests/test_parse_window.py)."""
    source = ("def f%d(x):\n    return g(x) + %d\n\n" * 2000).replace("%d", "1").encode()
    assert len(source) > 60_000

    def resident_mib() -> float:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    parser = compiled_query("python").parser
    for _ in range(20):  # the allocator's own high-water mark first
        parse_tree(parser, source)
    before = resident_mib()
    for _ in range(200):  # 12.8 MB through the parser
        parse_tree(parser, source)
    assert resident_mib() - before < 4.0


# A member expression holding a 48,872-character run of whitespace (a TypeScript binding's
# call `z.preprocess(...).safeParseAsync`, 51 kB; found by bench.fuzz, seed 1502): the separator
# regex tried `\s*` at every space of a run not followed by a separator, 11 s of CPU for one
# file, within a second of the reader's CPU bound (which would have killed the worker).
@pytest.mark.parametrize("text,path", [
    ("make(" + " " * 40_000 + "x).run", ("make()", "run")),  # a run inside brackets
    ("a.b" + "\n" * 40_000 + "c", ()),  # a run not followed by a separator: no path
    ("self" + " " * 40_000 + "?.x", ("self", "x")),  # (a run before a separator was linear)
])
def test_a_name_path_split_is_linear_in_whitespace(text, path) -> None:
    cpu = time.thread_time()
    assert name_path(text) == path
    assert time.thread_time() - cpu < 1.0


def test_a_binding_over_a_long_run_of_whitespace_is_read_in_linear_time() -> None:
    # the binding's call is `<the preprocess call>.safeParse`: its text holds the run
    source = (b"const schema = z\n    .preprocess(async (data, ctx) => {" + b" " * 48_000
              + b"return data;\n    }, z.string())\n    .safeParse(1);\n"
              + b"export function check() { return schema.parse(1); }\n")
    cpu = time.thread_time()
    facts = extract("a.ts", source, "typescript")
    assert time.thread_time() - cpu < 2.0
    assert {d.name for d in facts.defs} >= {"schema", "check"}


# 30,000 line comments above a function (found by bench.long_runs): the walk up the
# comment run asked each comment for its previous sibling, which tree-sitter finds by passing
# over every sibling before it: 2.4-4.8 s for one file. The walk is a tree cursor's now.
COMMENT_RUNS = {
    "go": lambda n: b"package p\n// Check runs it.\n" + b"//\n" * n + b"func Check() {}\n",
    "java": lambda n: b"class A {\n// Checks it.\n" + b"//\n" * n + b"void check() {}\n}\n",
    "rust": lambda n: b"/// Checks it.\n" + b"///\n" * n + b"fn check() {}\n",
    "typescript": lambda n: b"// Checks it.\n" + b"//\n" * n + b"export function check() {}\n",
}


@pytest.mark.parametrize("language", sorted(COMMENT_RUNS))
def test_a_long_run_of_comment_lines_is_read_in_linear_time(language) -> None:
    # a ratio of two sizes measured alike, not a bound in seconds, which a loaded host broke
    # (1.1 s of CPU for 30,000 lines beside other builds): three times the lines cost about
    # three times the CPU when the walk is linear, nine times when it is quadratic
    run = COMMENT_RUNS[language]
    extract("a", run(10), language)  # the grammar and its queries load once, outside both

    def best_cpu(source: bytes) -> float:
        # the collector's full passes cost with the test process's heap, not with the file
        gc.collect()
        gc.disable()
        try:
            return min(cpu_seconds(extract, "a", source, language)[1] for _ in range(2))
        finally:
            gc.enable()

    small, large = best_cpu(run(10_000)), best_cpu(run(30_000))
    assert large < 5 * small + 0.05, (small, large)
    (check,) = [d for d in extract("a", run(30_000), language).defs if d.name.lower() == "check"]
    assert check.doc.endswith("it.")  # the run's first line, as before


def test_a_rust_doc_block_gives_its_first_line() -> None:
    # A Rust line comment holds its newline (it ends at column 0 of the next line), so the walk
    # up a `///` block stopped at once and the block's *last* line was the doc: "```", "the
    # first use." in tokio (found with the test above)
    source = b"/// Creates a buffer.\n///\n/// ```\n/// let b = Buf::new();\n/// ```\nfn new() {}\n"
    (new,) = extract("a.rs", source, "rust").defs
    assert new.doc == "Creates a buffer."


def test_a_rust_comment_a_blank_line_above_a_definition_is_not_its_doc() -> None:
    # the same newline (a Rust doc comment's) made one a blank line above look adjacent: a
    # file's `//!` head ("This module contains ...") was its first item's doc (3 of tokio's)
    source = b"//! This module holds the helpers.\n\nfn helper() {}\n"
    (helper,) = extract("a.rs", source, "rust").defs
    assert helper.doc == ""


@pytest.mark.parametrize(("language", "source", "name", "doc"), [
    ("rust", b"/// Doc.\n#[derive(Debug)]\nstruct S;\n", "S", "Doc."),
    ("rust", b"/// Doc.\n#[cfg_attr(\n    docsrs,\n    doc(cfg(feature = \"x\"))\n)]\npub struct S;\n",
     "S", "Doc."),
    ("typescript", b"/* Doc. */ export function f() {}\n", "f", "Doc."),
    ("java", b"class A {\n  // Doc.\n  @Override\n  public String toString() { return \"\"; }\n}\n",
     "toString", "Doc."),
    ("javascript", b"const a = 1;\n/**\n * Adds.\n */\nfunction add() {}\n", "add", "Adds."),
    ("java", b"class A {\n  int x;\n  void f() {}\n}\n", "f", ""),
    ("go", b"package p\n\n// Doc\n\nfunc f() {}\n", "f", ""),
])
def test_a_doc_comment_is_found_through_decorators_and_on_the_same_line(
        language: str, source: bytes, name: str, doc: str) -> None:
    # the comment above a definition, above its attributes or decorators (over several
    # lines, too: tokio's `#[cfg_attr(...)]`), or before it on its own line
    (found,) = [d for d in extract("a", source, language).defs if d.name == name]
    assert found.doc == doc


def test_the_name_path_caches_stay_bounded(monkeypatch) -> None:
    """The remembered splits are forgotten all at once past CACHED_NAMES (a long-lived parse
    worker or watcher meets ever new names), and a name looked up again after that is split
    afresh, to the same path."""
    from knoxidx.parse import name_paths

    monkeypatch.setattr(name_paths, "CACHED_NAMES", 8)
    for n in range(40):
        assert name_path(f"pkg.mod{n}.run") == ("pkg", f"mod{n}", "run")
        assert name_paths.short_reference(f"obj{n}.go".encode()) == ((f"obj{n}", "go"), False)
        assert name_paths.short_reference(f"obj{n}\n.go".encode()) == ((f"obj{n}", "go"), True)
        assert len(name_paths._PATHS) <= 8
        assert len(name_paths._BYTES_PATHS) <= 8
    assert name_path("pkg.mod0.run") == ("pkg", "mod0", "run")
