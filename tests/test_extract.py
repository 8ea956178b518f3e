"""Per-file extraction is a pure function: facts from source, checked on small inputs."""

from __future__ import annotations

import pytest

from knoxidx.languages.registry import LANGUAGES, query_source
from knoxidx.parse.extract import extract
from knoxidx.parse.name_paths import name_path, type_path


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a.b.c", ("a", "b", "c")),
        ("Engine().run", ("Engine()", "run")),
        ("super().f", ("super", "f")),
        ("super(Foo, self).f", ("super", "f")),
        ("foo(a.b).c", ("foo()", "c")),
        ("a[0].b", ("?", "b")),
        ("Vec::<i32>::new", ("Vec", "new")),
        ("this.a?.b", ("this", "a", "b")),
        ("crate::a::f", ("crate", "a", "f")),
        ("x", ("x",)),
        ("(a).b", ("?", "b")),
        ("a[0]", ()),
    ],
)
def test_name_path(text: str, expected: tuple[str, ...]) -> None:
    assert name_path(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("*Server", ("Server",)),
        ("(*T, error)", ("T",)),
        ("Option<Foo>", ("Foo",)),
        ("Result<Arc<Self>, E>", ("Self",)),
        ("&'a mut Bar", ("Bar",)),
        ("Promise<pkg.Foo>", ("pkg", "Foo")),
        ("Optional[Foo]", ("Foo",)),
        ("List[int]", ()),
        # type arguments with parentheses: the type they are given to
        ("oneshot::Sender<()>", ("oneshot", "Sender")),
        ("Option<Sender<(), u8>>", ("Sender",)),
        ("Box<Handler<dyn Fn() -> u8>>", ("Handler",)),
    ],
)
def test_type_path(text: str, expected: tuple[str, ...]) -> None:
    assert type_path(text) == expected


@pytest.mark.parametrize("spec", LANGUAGES, ids=lambda s: s.name)
def test_every_query_compiles(spec) -> None:
    source = query_source(spec.name)
    assert "@definition." in source and "@reference." in source
    extract("empty" + spec.extensions[0], b"", spec.name)  # compiles the query


def test_python_facts() -> None:
    src = b'''
from .util import parse as p
import os.path

LIMIT = 3

class Base:
    """Base doc."""
    def run(self) -> "Result":
        return self.step()

class Child(Base):
    def step(self):
        self.helper = Helper()
        super().run()
        return p(os.path.join("a", "b"))
'''
    facts = extract("pkg/mod.py", src, "python")
    kinds = {(d.qualname, d.kind) for d in facts.defs}
    assert kinds >= {("LIMIT", "Constant"), ("Base", "Class"), ("Base.run", "Function"),
                     ("Child", "Class"), ("Child.step", "Function")}
    base = next(d for d in facts.defs if d.name == "Base")
    assert base.doc == "Base doc."
    assert base.signature == "class Base"
    calls = {r.path for r in facts.refs if r.kind == "call"}
    assert {("self", "step"), ("Helper",), ("super", "run"), ("p",),
            ("os", "path", "join")} <= calls
    assert ("Base",) in {r.path for r in facts.refs if r.kind == "extends"}
    assert {(i.module, i.name, i.alias) for i in facts.imports} >= {
        (".util", "parse", "p"), ("os", "", "os"), ("os.path", "", "")}
    assert any(b.name == "self.helper" and b.type_path == ("Helper",) for b in facts.bindings)


def test_syntax_error_still_yields_what_parses() -> None:
    src = b"def ok():\n    return 1\n\ndef broken(:\n    pass\n\nclass Fine:\n    pass\n"
    facts = extract("x.py", src, "python")
    assert facts.error_nodes >= 1
    names = {d.name for d in facts.defs}
    assert {"ok", "Fine"} <= names


def test_go_methods_attach_to_receiver_type() -> None:
    src = b"package srv\n\ntype Server struct{}\n\nfunc (s *Server) Start() error { return s.run() }\n"
    facts = extract("srv/server.go", src, "go")
    start = next(d for d in facts.defs if d.name == "Start")
    assert start.owner == "Server"
    assert start.qualname == "Server.Start"
    assert facts.package == "srv"


def test_go_declarations_of_several_names_and_var_blocks() -> None:
    """`var a, b int` defines a and b side by side (b was read as a's child, qualified `a.b`,
    and a struct's `u, v float64` gave `P.u.v`); `const x, y = 1, 2` defines y too (the
    const_spec's name field spans the commas, and the pattern matched x alone); the specs of a
    `var ( ... )` block are definitions (they sit in a var_spec_list the pattern missed), each
    with its own doc comment or else the block's."""
    src = (b"package main\n\nvar a, b int\n\nconst x, y = 1, 2\n\n// Errors.\nvar (\n"
           b"\t// ErrA is a.\n\tErrA = New(\"a\")\n\tp, q *T\n)\n\n"
           b"type P struct {\n\tu, v float64\n}\n\nfunc f() {\n\tvar m, n = g()\n}\n")
    facts = extract("main.go", src, "go")
    defs = {d.qualname: d for d in facts.defs}
    assert set(defs) == {"a", "b", "x", "y", "ErrA", "p", "q", "P", "P.u", "P.v", "f"}
    assert defs["b"].parent == -1 and defs["b"].type_hint == ("int",)
    assert facts.defs[defs["P.v"].parent].name == "P"
    assert (defs["ErrA"].doc, defs["q"].doc) == ("ErrA is a.", "Errors.")
    assert defs["q"].type_hint == ("T",)
    bound = {(b.name, b.type_path, b.is_call) for b in facts.bindings}
    assert {("p", ("T",), False), ("q", ("T",), False), ("ErrA", ("New",), True),
            ("m", ("g",), True), ("n", ("g", "#1"), True)} <= bound


def test_java_fields_declared_together_are_siblings() -> None:
    """`int a, b;` declares two fields of the class: b was read as a child of a (`A.a.b`), as
    both definitions span the one field_declaration (the same rule as Go's `var a, b int`)."""
    facts = extract("A.java", b"class A { int a, b; static final int X = 1, Y = 2; }", "java")
    assert [(d.qualname, d.parent) for d in facts.defs] == [
        ("A", -1), ("A.a", 0), ("A.b", 0), ("A.X", 0), ("A.Y", 0)]


def test_rust_impl_methods_and_traits() -> None:
    src = b"struct S;\ntrait T { fn t(&self); }\nimpl T for S { fn t(&self) { self.u(); } }\n"
    facts = extract("src/lib.rs", src, "rust")
    method = next(d for d in facts.defs if d.name == "t" and d.owner)
    assert method.owner == "S"
    assert facts.impls[0].type_path == ("S",)
    assert facts.impls[0].trait_path == ("T",)


def test_java_receiver_calls_keep_receiver_path() -> None:
    src = b"package a;\nclass C { void m() { this.svc.go(); helper(); } }\n"
    facts = extract("a/C.java", src, "java")
    calls = {r.path for r in facts.refs if r.kind == "call"}
    assert ("this", "svc", "go") in calls and ("helper",) in calls


def test_typescript_exports_and_imports() -> None:
    src = b"import def, { a as b } from './util';\nexport * from './w';\nexport default class Foo {}\n"
    facts = extract("src/m.ts", src, "typescript")
    got = {(i.module, i.name, i.alias, i.reexport) for i in facts.imports}
    assert ("./util", "default", "def", False) in got
    assert ("./util", "a", "b", False) in got
    assert ("./w", "*", "", True) in got
    assert ("", "Foo", "default", True) in got


def test_java_var_declaration_takes_the_constructed_type() -> None:
    src = b"package a;\nclass C { void m() { var s = new Service(); s.go(); } }\n"
    facts = extract("a/C.java", src, "java")
    assert [(b.name, b.type_path) for b in facts.bindings] == [("s", ("Service",))]


@pytest.mark.parametrize("language", ["typescript", "tsx"])
def test_destructured_parameters_typed_inline_bind_each_name_to_its_own_type(
    language: str,
) -> None:
    """React's props, `function App({ board, other }: { board: Board; other: Foo<X> })`: each
    name takes the type of its own property, never a neighbour's."""
    src = (b"function App({ board, other }: { board: Board; other: Foo<X> }, { third }: Props)"
           b" { board.pending(); other.go(); third.run(); }\n")
    facts = extract("a.tsx" if language == "tsx" else "a.ts", src, language)
    # typed by a named type, a name is bound to that type's member (resolved to its type)
    assert sorted((b.name, b.type_path) for b in facts.bindings) == [
        ("board", ("Board",)), ("other", ("Foo",)), ("third", ("Props", "third"))]


def test_interface_fingerprint_depends_on_content_not_on_shared_objects() -> None:
    """Equal facts give equal fingerprints however their strings are shared (a top-level
    definition's name and qualified name are one object; a copy from another process is not)."""
    from knoxidx.parse.reader import interface_fingerprint

    facts = extract("m.py", b"def fetch(x: Foo) -> Bar:\n    pass\n\nclass C(Base):\n    pass\n",
                    "python")
    assert facts.defs[0].name is facts.defs[0].qualname

    def fresh(value):
        if isinstance(value, str):
            return "".join(list(value))
        if isinstance(value, tuple) and type(value) is tuple:
            return tuple(fresh(v) for v in value)
        return value

    copied = facts._replace(defs=tuple(d._replace(**{k: fresh(v) for k, v in d._asdict().items()})
                                       for d in facts.defs))
    assert copied.defs[0].name is not copied.defs[0].qualname
    assert interface_fingerprint(copied) == interface_fingerprint(facts)
    renamed = facts._replace(defs=(facts.defs[0]._replace(name="grab", qualname="grab"),
                                   *facts.defs[1:]))
    assert interface_fingerprint(renamed) != interface_fingerprint(facts)


def test_interface_and_type_alias_properties_are_fields_inline_object_types_are_not() -> None:
    src = (b"interface Opts { logger: Logger; retries?: number }\n"
           b"type Shape = { width: Size };\n"
           b"function run(opts: Opts, { board }: { board: Board }) { const x: { y: Z } = f(); }\n")
    facts = extract("a.ts", src, "typescript")
    fields = sorted((d.qualname, d.kind, d.type_hint) for d in facts.defs if d.kind == "Variable")
    assert fields == [("Opts.logger", "Variable", ("Logger",)),
                      ("Opts.retries", "Variable", ("number",)),
                      ("Shape.width", "Variable", ("Size",))]


def test_a_signature_over_several_lines_is_one_line_with_single_spaces() -> None:
    src = (b"def load(\n    path:\tstr,\n    *,\xc2\xa0strict: bool = False,\n) -> Config:\n"
           b"    return Config()\n"
           b"class  Config :\n    pass\n")
    facts = extract("cfg.py", src, "python")
    signatures = {d.name: d.signature for d in facts.defs}
    assert signatures["load"] == "def load( path: str, *, strict: bool = False, ) -> Config"
    assert signatures["Config"] == "class Config"


def test_extraction_reads_node_texts_from_the_source_not_through_node_text() -> None:
    """``node.text`` reads a parsed file back through the parse's read callback, a Python
    call per 256 bytes (131,434 texts of the benchmark corpus cost 0.2 CPU-s that way; a
    docstring of a few KB is a dozen calls): the extraction hooks slice ``source`` instead
    (``definitions.node_text``). Checked on the code, since both read the same text."""
    import ast
    from pathlib import Path

    import knoxidx
    from knoxidx.languages.registry import LANGUAGES

    # (by module name: a compiled module's __file__ is its extension, not its source)
    sources = Path(knoxidx.__file__).parent.parent
    # each family's hooks and the modules beside them that they read
    families = sorted({spec.hooks.rpartition(".")[0] for spec in LANGUAGES})
    modules = [sources / (name.replace(".", "/") + ".py")
               for name in ("knoxidx.parse.extract", "knoxidx.parse.compiled_queries",
                            "knoxidx.parse.captures", "knoxidx.parse.block_variables",
                            "knoxidx.parse.binding_types", "knoxidx.parse.references",
                            "knoxidx.parse.definitions", "knoxidx.languages.common")]
    modules += [path for family in families
                for path in sorted((sources / family.replace(".", "/")).glob("*.py"))]
    readers = [
        f"{path.relative_to(sources)}:{node.lineno}"
        for path in modules
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr == "text"
    ]
    assert len(modules) >= 13
    assert readers == []


def test_python_names_in_list_tuple_and_set_displays_are_values_read() -> None:
    # (the pattern once read `([(list) (tuple) (set)] [...])`: two sibling patterns, which
    # matched the `k` of `[1] and k` and none of these)
    src = b"HANDLERS = [on_start, hooks.on_stop]\nPAIR = (first, second)\nSEEN = {alpha}\n"
    facts = extract("m.py", src, "python")
    values = {r.path for r in facts.refs if r.kind == "value"}
    assert {("on_start",), ("hooks", "on_stop"), ("first",), ("second",), ("alpha",)} <= values


def test_go_embedded_pointer_fields_are_extends() -> None:
    src = b"package p\ntype A struct {\n\t*Base\n\t*other.Thing\n\tx int\n}\n"
    facts = extract("a.go", src, "go")
    assert {("Base",), ("other", "Thing")} <= {r.path for r in facts.refs if r.kind == "extends"}


def test_rust_mut_parameters_and_lets_are_locals() -> None:
    src = (b"const LIMIT: i32 = 10;\nfn helper() -> i32 { 1 }\n"
           b"fn f(mut helper: i32) -> i32 { let mut LIMIT = 3; use_it(LIMIT); use_it(helper) }\n")
    facts = extract("src/lib.rs", src, "rust")
    values = {r.path for r in facts.refs if r.kind == "value"}
    assert ("LIMIT",) not in values and ("helper",) not in values


def test_python_names_assigned_in_top_level_blocks_are_module_variables() -> None:
    src = b"""import json
LIMIT = 1
try:
    import docutils
except ImportError:
    docutils_is_available = False
    json = None
else:
    docutils_is_available = True
if LIMIT:
    LIMIT = 2
    lib_path: str = "a"
    def helper():
        inner = 3
        return inner
for item in range(3):
    total = item
class Holder:
    if LIMIT:
        field = 1
"""
    facts = extract("m.py", src, "python")
    defs = [(d.kind, d.qualname, d.start_line) for d in facts.defs]
    # each name once, at its first assignment; not one the top level defines or imports, nor a
    # name bound inside a function or a class
    assert [d for d in defs if d[0] in ("Variable", "Constant")] == [
        ("Constant", "LIMIT", 2), ("Variable", "docutils_is_available", 6),
        ("Variable", "lib_path", 12), ("Variable", "total", 17)]
    lib_path = next(d for d in facts.defs if d.name == "lib_path")
    assert lib_path.signature == 'lib_path: str = "a"' and lib_path.type_hint == ("str",)


def test_python_chained_assignments_define_each_name_side_by_side() -> None:
    src = b"from x import gettext\nclass A:\n    pass\nnoop = lazy = _ = gettext\n"
    facts = extract("m.py", src, "python")
    assert [(d.qualname, d.parent, d.signature) for d in facts.defs if d.kind == "Variable"] == [
        ("noop", -1, "noop = lazy = _ = gettext"), ("lazy", -1, "noop = lazy = _ = gettext"),
        ("_", -1, "noop = lazy = _ = gettext")]


DOCS_WHEREVER_THEY_END = {
    "java": ("A.java", "class A {\n  /** Doc a. */ @Override public void a() {}\n  // note;\n"
             "  void b() {}\n  int x; void c() {}\n  /* block */ void d() {}\n"
             "  void e() {} // trailing }\n  void f() {}\n}\n",
             [("A", ""), ("a", "Doc a."), ("b", "note;"), ("x", ""), ("c", ""), ("d", "block"),
              ("e", ""), ("f", "trailing }")]),
    "go": ("a.go", "package a\n\n// F does;\nfunc F() {}\nfunc G() {}\n/* H block */ func H() {}\n"
           "var (\n\tx = 1 // x is one }\n\ty = 2\n)\n// T type\ntype T struct{}\n",
           [("F", "F does;"), ("G", ""), ("H", "H block"), ("x", ""), ("y", "x is one }"),
            ("T", "T type")]),
}


@pytest.mark.parametrize("language", sorted(DOCS_WHEREVER_THEY_END))
def test_doc_comments_are_found_wherever_they_end(language: str) -> None:
    # whatever ends just before the definition: a comment line ending in `;` or `}`, a block
    # comment on the definition's line, a comment after a statement
    path, source, expected = DOCS_WHEREVER_THEY_END[language]
    facts = extract(path, source.encode(), language)
    assert [(d.name, d.doc) for d in facts.defs] == expected


def test_a_comment_before_the_body_is_not_part_of_the_signature() -> None:
    """Python's comments between the header's colon and the first statement were read as
    the signature's end (`def f(a) -> int: # explains the body # more`)."""
    from knoxidx.parse.extract import extract

    source = (b"def f(a: int) -> int:\n    # explains the body\n    return a\n\n\n"
              b"class C:  # a note\n    def m(self):  # why\n        pass\n")
    assert [d.signature for d in extract("m.py", source, "python").defs] == [
        "def f(a: int) -> int", "class C", "def m(self)"]
    js = b"function g(a, b) // note\n{\n  return a;\n}\n"
    assert [d.signature for d in extract("m.js", js, "javascript").defs] == ["function g(a, b)"]
