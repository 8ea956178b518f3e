"""End-to-end checks of the oracles on tiny corpora, plus their shared plumbing.

The jedi test needs ``jedi`` (skipped otherwise); the TypeScript test needs
node and the pinned typescript already installed in bench/.cache/ts-oracle
(``python bench/oracles/ts_oracle.py`` installs it; the test never does).
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Any

import common
import pytest


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setattr(common, "CACHE_ROOT", cache)
    return cache


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


def links(rows: list[dict[str, Any]], kind: str) -> set[tuple[str, int, str, str, int, str]]:
    return {(r["path"], r["line"], r["name"], r["target_path"], r["target_line"], r["target_name"])
            for r in rows if r["kind"] == kind}


def test_select_subset_is_deterministic() -> None:
    paths = [f"f{i:02d}.py" for i in range(10)]
    assert common.select_subset(paths, 3) == ["f00.py", "f04.py", "f08.py"]
    assert common.select_subset(paths, 3, "first") == ["f00.py", "f01.py", "f02.py"]
    assert common.select_subset(paths, None) == paths
    assert common.select_subset(paths, 50) == paths


def test_corpus_key_changes_when_any_file_changes(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "x = 1\n", "b.py": "y = 2\n"})
    before = common.corpus_key(tmp_path, ["a.py", "b.py"], ["v1"])
    assert common.corpus_key(tmp_path, ["b.py", "a.py"], ["v1"]) == before
    assert common.corpus_key(tmp_path, ["a.py", "b.py"], ["v2"]) != before
    (tmp_path / "b.py").write_text("y = 3\n")
    assert common.corpus_key(tmp_path, ["a.py", "b.py"], ["v1"]) != before


PY_CORPUS = {
    "__init__.py": "",
    "a.py": """\
        from .b import helper, Base as B
        from pkg import b


        class Child(B):
            def go(self):
                return self.step()

            def step(self):
                return helper() + len([])


        def main():
            Child().go()
            b.helper()
        """,
    "b.py": """\
        def helper():
            return 1


        class Base:
            pass
        """,
}


@pytest.mark.heavy
def test_jedi_oracle_rows(tmp_path: Path) -> None:
    pytest.importorskip("jedi")
    import python_jedi

    corpus = write(tmp_path / "pkg", PY_CORPUS)  # the corpus *is* package `pkg`
    out = tmp_path / "out.jsonl"
    stats = python_jedi.run_oracle(corpus, out, jobs=1)
    rows = list(common.read_jsonl(out))

    assert links(rows, "call") == {
        ("a.py", 7, "step", "a.py", 9, "step"),          # self.step()
        ("a.py", 10, "helper", "b.py", 1, "helper"),     # len() is a builtin: no row
        ("a.py", 14, "Child", "a.py", 5, "Child"),       # constructor call -> the class
        ("a.py", 14, "go", "a.py", 6, "go"),
        ("a.py", 15, "helper", "b.py", 1, "helper"),     # absolute import of the corpus package
    }
    assert links(rows, "extends") == {("a.py", 5, "B", "b.py", 5, "Base")}  # alias: target_name differs
    defs = {(r["path"], r["name"], r["def_type"]) for r in rows if r["kind"] == "def"}
    assert defs == {("a.py", "Child", "class"), ("a.py", "go", "function"), ("a.py", "step", "function"),
                    ("a.py", "main", "function"), ("b.py", "helper", "function"), ("b.py", "Base", "class")}
    assert [r["path"] for r in rows if r["kind"] == "file"] == ["__init__.py", "a.py", "b.py"]
    assert stats["computed"] == 3

    again = python_jedi.run_oracle(corpus, out, jobs=1)  # cached
    assert again["computed"] == 0 and list(common.read_jsonl(out)) == rows
    quick = python_jedi.run_oracle(corpus, tmp_path / "quick.jsonl", max_files=1, subset="first", jobs=1)
    assert quick["files"] == 1 and quick["computed"] == 0


@pytest.mark.heavy
def test_jedi_oracle_answers_every_site_of_a_long_function(tmp_path: Path) -> None:
    # jedi budgets 300 inferences per function; asked site after site on one Script, the
    # budget ran out at the 300th `self.` call and the rest of the method went unanswered
    pytest.importorskip("jedi")
    import python_jedi

    calls = "\n".join("        self.step()" for _ in range(320))
    source = f"class Long:\n    def run(self):\n{calls}\n        self.last()\n\n" \
             "    def step(self):\n        pass\n\n    def last(self):\n        pass\n"
    corpus = write(tmp_path / "pkg", {"__init__.py": "", "long.py": source})
    out = tmp_path / "out.jsonl"
    python_jedi.run_oracle(corpus, out, jobs=1)
    rows = list(common.read_jsonl(out))

    file_row = next(r for r in rows if r["kind"] == "file" and r["path"] == "long.py")
    assert (file_row["sites"], file_row["resolved"]) == (321, 321)
    assert ("long.py", 323, "last", "long.py", 328, "last") in links(rows, "call")


@pytest.mark.heavy
def test_jedi_oracle_answers_every_pytest_fixture_parameter_of_a_file(tmp_path: Path) -> None:
    # jedi's pytest plugin memoized a generator of the modules fixtures come from: asked site
    # after site on one Script, only the first fixture parameter of a file was answered
    pytest.importorskip("jedi")
    import python_jedi

    corpus = write(tmp_path / "proj", {
        "app.py": """\
            class Runner:
                def invoke(self):
                    pass
            """,
        "tests/conftest.py": """\
            import pytest
            from app import Runner


            @pytest.fixture
            def runner():
                return Runner()
            """,
        "tests/test_app.py": """\
            def test_one(runner):
                runner.invoke()


            def test_two(runner):
                runner.invoke()
            """,
    })
    out = tmp_path / "out.jsonl"
    python_jedi.run_oracle(corpus, out, jobs=1)

    called = {(r[1], r[3]) for r in links(common.read_jsonl(out), "call") if r[0] == "tests/test_app.py"}
    assert called == {(2, "app.py"), (6, "app.py")}


@pytest.mark.heavy
def test_jedi_oracle_reads_a_django_corpus_not_the_django_stubs_it_ships(tmp_path: Path) -> None:
    # jedi answered an inherited method's call in a package named django from its bundled
    # django-stubs, outside the corpus: the site went unanswered
    pytest.importorskip("jedi")
    import python_jedi

    corpus = write(tmp_path / "django", {
        "__init__.py": "",
        "template/__init__.py": "",
        "template/backends/__init__.py": "",
        "template/backends/base.py": """\
            class BaseEngine:
                def iter_template_filenames(self, template_name):
                    return [template_name]
            """,
        "template/backends/dummy.py": """\
            from .base import BaseEngine


            class TemplateStrings(BaseEngine):
                def get_template(self, template_name):
                    return self.iter_template_filenames(template_name)
            """,
    })
    out = tmp_path / "out.jsonl"
    python_jedi.run_oracle(corpus, out, jobs=1)

    assert ("template/backends/dummy.py", 6, "iter_template_filenames", "template/backends/base.py", 2,
            "iter_template_filenames") in links(common.read_jsonl(out), "call")


TS_CORPUS = {
    "a.ts": """\
        import { helper, Widget as W } from "./sub/b.js";
        export function over(x: string): string;
        export function over(x: number): number;
        export function over(x: any): any { return x; }
        class Base { constructor(public n: number) {} greet() { return 1; } }
        class Child extends Base {
          constructor() { super(1); }
          run() { this.greet(); over(1); helper(); new W(); [1].map((x) => x); }
        }
        export const arrow = () => 1;
        arrow();
        """,
    "sub/b.ts": """\
        export function helper() { return 1; }
        export class Widget {}
        """,
}


def test_ts_oracle_rows(tmp_path: Path) -> None:
    import ts_oracle

    if shutil.which("node") is None or ts_oracle.installed_typescript() != ts_oracle.pinned_typescript():
        pytest.skip("node or the pinned typescript is not installed in bench/.cache/ts-oracle")
    corpus = write(tmp_path / "corpus", TS_CORPUS)
    out = tmp_path / "out.jsonl"
    ts_oracle.run_oracle(corpus, out, jobs=1)
    rows = list(common.read_jsonl(out))

    assert links(rows, "call") == {
        ("a.ts", 7, "super", "a.ts", 5, "Base"),         # constructor -> its class
        ("a.ts", 8, "greet", "a.ts", 5, "greet"),
        ("a.ts", 8, "over", "a.ts", 4, "over"),          # overload signature -> implementation
        ("a.ts", 8, "helper", "sub/b.ts", 1, "helper"),  # `./sub/b.js` resolves to b.ts
        ("a.ts", 8, "W", "sub/b.ts", 2, "Widget"),       # new W() through an import alias
        ("a.ts", 11, "arrow", "a.ts", 10, "arrow"),      # function-valued const; [].map is lib: no row
    }
    assert links(rows, "extends") == {("a.ts", 6, "Base", "a.ts", 5, "Base")}
    defs = {(r["path"], r["name"], r["def_type"]) for r in rows if r["kind"] == "def"}
    assert defs == {("a.ts", "over", "function"), ("a.ts", "Base", "class"), ("a.ts", "greet", "method"),
                    ("a.ts", "Child", "class"), ("a.ts", "run", "method"), ("a.ts", "arrow", "function"),
                    ("sub/b.ts", "helper", "function"), ("sub/b.ts", "Widget", "class")}
    assert [r["path"] for r in rows if r["kind"] == "file"] == ["a.ts", "sub/b.ts"]


def test_parse_rows_drops_a_file_cut_off_before_its_file_row() -> None:
    text = "\n".join([
        '{"kind":"call","path":"a.java","line":3}',
        '{"kind":"file","path":"a.java","sites":1}',
        '{"kind":"call","path":"b.java","line":1}',
        '{"kind":"fi',  # the process was killed mid-row
    ])
    assert common.parse_rows(text) == {"a.java": [{"kind": "file", "path": "a.java", "sites": 1},
                                                  {"kind": "call", "path": "a.java", "line": 3}]}


JAVA_CORPUS = {
    "p/Base.java": """\
        package p;
        public class Base {
            public Base(int x) {}
            public void greet() {}
            public void over(int a) {}
            public void over(String a) {}
        }
        """,
    "p/Shape.java": """\
        package p;
        public interface Shape { double area(); }
        enum Kind { ROUND, FLAT(1); Kind() {} Kind(int n) {} }
        """,
    "q/Child.java": """\
        package q;
        import p.Base;
        import p.Shape;
        import org.missing.Lib;
        public class Child extends Base implements Shape {
            Child() { super(1); }
            public double area() {
                greet();
                over("s");
                Shape s = new Shape() { public double area() { return 0; } };
                Lib.call();
                return s.area() + "x".length();
            }
        }
        """,
}


@pytest.mark.slow
def test_java_oracle_rows(tmp_path: Path) -> None:
    import java_oracle

    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("no JDK installed")
    corpus = write(tmp_path / "corpus", JAVA_CORPUS)
    out = tmp_path / "out.jsonl"
    stats = java_oracle.run_oracle(corpus, out)
    rows = list(common.read_jsonl(out))

    assert links(rows, "call") == {
        ("q/Child.java", 6, "super", "p/Base.java", 2, "Base"),     # a constructor -> its class
        ("q/Child.java", 8, "greet", "p/Base.java", 4, "greet"),    # inherited
        ("q/Child.java", 9, "over", "p/Base.java", 6, "over"),      # the overload javac chose
        ("q/Child.java", 10, "Shape", "p/Shape.java", 2, "Shape"),  # anonymous: its interface
        ("q/Child.java", 12, "area", "p/Shape.java", 2, "area"),    # through the interface
    }                                                               # "x".length(): the JDK's
    assert {(r["line"], r["name"]) for r in rows if r["kind"] == "unresolved"} == {(11, "call")}
    relations = {(r["name"], r["relation"]) for r in rows if r["kind"] == "extends"}
    assert relations == {("Base", "extends"), ("Shape", "implements")}  # none for `new Shape() {..}`
    assert stats["external"] == 1 and stats["errors"] >= 1


GO_CORPUS = {
    "go.mod": "module example.com/m\n\ngo 1.18\n",
    "base/base.go": """\
        package base

        type Base struct{}

        func (Base) Greet() {}

        type Shape interface{ Area() float64 }

        func Map[T any](x T) T { return x }

        func Twice() {}

        type Kind int
        """,
    "base/twice.go": """\
        package base

        func Twice() {}

        type Kind interface{ K() }

        type Holder struct{ Kind }
        """,
    "child.go": """\
        package m

        import (
            "strings"

            "example.com/m/base"
            "example.org/missing"
        )

        type Child struct{ base.Base }

        type Celsius float64

        func run(s base.Shape, f func()) {
            Child{}.Greet()
            s.Area()
            base.Map[int](1)
            f()
            _ = Celsius(1)
            strings.ToUpper("x")
            missing.Call()
            base.Twice()
        }
        """,
}


@pytest.mark.slow
def test_go_oracle_rows(tmp_path: Path) -> None:
    import go_oracle

    if shutil.which("go") is None:
        pytest.skip("no Go toolchain installed")
    corpus = write(tmp_path / "corpus", GO_CORPUS)
    out = tmp_path / "out.jsonl"
    stats = go_oracle.run_oracle(corpus, out)
    rows = list(common.read_jsonl(out))

    assert links(rows, "call") == {
        ("child.go", 15, "Greet", "base/base.go", 5, "Greet"),  # promoted through embedding
        ("child.go", 16, "Area", "base/base.go", 7, "Area"),    # the interface's method
        ("child.go", 15, "Child", "child.go", 10, "Child"),     # a struct literal constructs
        ("child.go", 17, "Map", "base/base.go", 9, "Map"),      # a generic's instance
    }
    unresolved = {(r["path"], r["line"], r["name"], r["reason"]) for r in rows
                  if r["kind"] == "unresolved"}
    assert unresolved == {("child.go", 19, "Celsius", "conversion"),
                          ("child.go", 21, "Call", "unattributed"),
                          # which one is meant, the checker cannot say: not even where the
                          # declaration it kept (`type Kind int`) is no struct or interface
                          ("child.go", 22, "Twice", "redeclared"),
                          ("base/twice.go", 7, "Kind", "redeclared")}
    assert links(rows, "extends") == {("child.go", 10, "Base", "base/base.go", 3, "Base")}
    assert stats["dynamic"] == 1 and stats["external"] == 1  # f(); strings.ToUpper


SIGNATURE_FILES = {
    "p.go": """\
        package p

        func (s *S) F(a, b int, rest ...string) (n int, err error) { return }
        func G[K comparable, V any](m map[K]V, _ int) error { return nil }
        type I interface{ M(int) error }
        """,
    "A.java": """\
        class A {
          @Override public <T> java.util.List<T> m(A this, final int a, String... rest) { return null; }
          A(byte b[]) {}
        }
        """,
    "Broken.java": "class Broken { void f( }\n",
}


@pytest.mark.slow
@pytest.mark.parametrize(("language", "functions"), [("go", 3), ("java", 2)])
def test_signature_oracles_read_what_knoxidx_reads(tmp_path: Path, language: str,
                                                   functions: int) -> None:
    from bench import signatures

    if shutil.which(language if language == "go" else "javac") is None:
        pytest.skip(f"no {language} toolchain installed")
    write(tmp_path, SIGNATURE_FILES)
    tally = signatures.Tally()
    signatures.run_compiled(tmp_path, 1, language, tally)
    assert (tally.files, tally.ours, tally.matched, tally.exact) == (1, *[functions] * 3)
    assert tally.oracle_failed == (1 if language == "java" else 0)  # Broken.java
    assert tally.oracle_only == []

    # a signature that differs is told apart, part by part
    ours = next(row for row in signatures._compiled_oracle().go_functions([tmp_path / "p.go"])[
        str(tmp_path / "p.go")] if row["name"] == "F")
    knoxidx_f = ((("s", "*S", None, "receiver"), ("a", "int", None, "positional"),
                  ("b", "int", None, "positional"), ("rest", "string", None, "variadic")),
                 "(n int, err error)", (), ())
    assert signatures.compare_go(knoxidx_f, ours) == []
    wrong = ((knoxidx_f[0][0], knoxidx_f[0][1], knoxidx_f[0][2],
              ("rest", "...string", None, "positional")), "(int, error)", (), ())
    assert signatures.compare_go(wrong, ours) == ["kind", "returns", "type"]
