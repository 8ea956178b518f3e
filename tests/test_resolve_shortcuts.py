"""The resolver's shortcuts change nothing it answers: a bare name nothing inside a definition
binds goes straight to the module scope (no walk of the enclosing scopes), an edge's target
node and a module's member are remembered for the resolver's life, and the facts it loads are
settled out of the collector's sight. Each fixture project, and a repository made of the cases
a shortcut could get wrong (shadowing at every level, re-exports that go round), is resolved
with and without them: the edges, the unresolved references and the lookup keys (which drive
incremental invalidation) must be equal, file by file."""

from __future__ import annotations

import gc
import shutil
from pathlib import Path
from typing import Any

import pytest

from knoxidx.core import heap
from knoxidx.graph import lookups, resolve
from knoxidx.graph.layout import build_layout
from knoxidx.graph.store import SQLiteStore
from knoxidx.graph.workspace import StoreWorkspace
from knoxidx.parse.discovery import discover
from tests.helpers import COMPILED, build, resolve_every_file, write_tree

# The shortcuts are taken away by replacing methods, which a compiled resolver (setup.py)
# never looks up: these run on the pure-Python build (the README's editable install).
pytestmark = pytest.mark.skipif(COMPILED, reason="the resolver is compiled: no method patching")

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

SHADOWING = {
    # Python: a local def, a local import, a parameter and a class attribute named like
    # module-level functions; a name bound in one function and read in another
    "py/pkg/__init__.py": "",
    "py/pkg/other.py": "def util():\n    return 1\n\ndef later():\n    return 2\n",
    "py/pkg/mod.py": """\
        from pkg.other import util

        def helper():
            return 0

        def outer():
            def helper():
                return 1
            def inner():
                return helper() + util()
            return inner() + helper()

        def local_import():
            from pkg.other import later as util
            return util()

        def parameter(helper):
            return helper()

        def binds():
            value = helper()
            return value

        def reads():
            return value + len(later)

        class Box:
            made = helper()
            size = len(made)
            util = util

            def method(self):
                return util() + helper()
        """,
    # Java: an enclosing class lends its members (and its own name) to nested code
    "java/src/a/Outer.java": """\
        package a;

        public class Outer {
            static int helper() { return 1; }
            int field = helper();

            class Inner {
                int go() { return helper() + field; }
                Outer self() { return new Outer(); }
            }

            static class Nested {
                int go() { return helper(); }
            }
        }
        """,
    "java/src/a/Base.java": "package a;\n\npublic class Base {\n    int helper() { return 3; }\n}\n",
    "java/src/a/Other.java": """\
        package a;

        public class Other extends Base {
            int helper() { return 2; }
            int go() { Outer o = new Outer(); return helper() + o.field; }
        }
        """,
    # Java: a name read in a method is resolved as from its class unless a function on the
    # way binds it (a parameter, a local, a local class) or the class sits in a function
    "java/src/a/Shadow.java": """\
        package a;

        public class Shadow extends Base {
            int field = 1;
            static int helper() { return 4; }
            int count(int field) { int helper = 2; return field + helper + helper(); }
            int local() {
                Outer field = new Outer();
                class Local extends Base {
                    int go() { return helper() + field.field + count(1); }
                }
                return new Local().go() + this.field + helper();
            }
            int anon() {
                Runnable r = new Runnable() { public void run() { helper(); count(2); } };
                return field + count(3);
            }
            Other make(Other other) { Other made = other; made.go(); return made; }
        }
        """,
    # Java: files of one package with different wildcard imports read the same names
    "java/src/b/One.java": ("package b;\n\nimport a.*;\n\npublic class One {\n"
                            "    int f() { return new Outer().field + new Base().helper(); }\n}\n"),
    "java/src/b/Two.java": ("package b;\n\npublic class Two {\n"
                            "    int f() { return new Outer().field + new Base().helper(); }\n}\n"),
    # TypeScript: `this`, a local function shadowing an import, a nested arrow
    "ts/lib.ts": "export function util(): number { return 1 }\nexport class K { go() { return 1 } }\n",
    "ts/main.ts": """\
        import { util, K } from "./lib";

        export function f(): number {
          const util = () => 2;
          return util();
        }

        export function g(): number {
          const k = new K();
          return util() + k.go();
        }

        export class C {
          run(): number { return this.run() + util(); }
        }
        """,
    # a typed value of one module read by two others, twice each: its type (worked out in
    # its own module, through an import) is asked four times
    "py/typed/__init__.py": "",
    "py/typed/thing.py": "class Thing:\n    def make(self):\n        return 1\n",
    "py/typed/made.py": "from typed.thing import Thing\n\nmaker = Thing()\n",
    "py/typed/use_a.py": ("from typed.made import maker\n\n"
                          "def a():\n    return maker.make() + maker.make().real\n"),
    "py/typed/use_b.py": ("from typed.made import maker\n\n"
                          "def b():\n    return maker.make() + maker.make().real\n"),
    # re-exports, some of them going round, read from several files
    "py/cyc/__init__.py": "from cyc.a import *\nfrom cyc.b import *\n",
    "py/cyc/a.py": "from cyc import b_value\n\ndef a_value():\n    return b_value()\n",
    "py/cyc/b.py": "from cyc import a_value\n\ndef b_value():\n    return a_value()\n",
    "py/use1.py": "from cyc import a_value, missing\n\ndef f():\n    return a_value() + missing()\n",
    "py/use2.py": "import cyc\n\ndef g():\n    return cyc.b_value() + cyc.missing()\n",
    "ts/barrel/index.ts": 'export * from "./x";\nexport * from "./y";\nexport { util as u } from "../lib";\n',
    "ts/barrel/x.ts": 'export * from "./index";\nexport function fx(): number { return 1 }\n',
    "ts/barrel/y.ts": 'export { fx as fy } from "./index";\n',
    "ts/use.ts": ('import { fx, fy, u, nothing } from "./barrel";\n\n'
                  "export function h(): number { return fx() + fy() + u() + nothing() }\n"),
    # Go: the package scope spans files; a local shadows a package-level function
    "go/go.mod": "module example.com/app\n",
    "go/lib/a.go": "package lib\n\nfunc A() int { return B() }\n\nfunc Shadow() int { B := func() int { return 0 }; return B() }\n",
    "go/lib/b.go": ("package lib\n\nfunc B() int { return 2 }\n\ntype S struct{}\n\n"
                    "func (s S) M() int { return B() }\n\nfunc Use() int { s := S{}; return s.M() }\n"),
    # Rust: `self`, `Self`, a local fn inside a fn, an inline module
    "rust/Cargo.toml": '[package]\nname = "app"\nversion = "0.1.0"\n',
    "rust/src/lib.rs": """\
        pub fn helper() -> i32 { 1 }

        pub struct S;

        impl S {
            pub fn new() -> Self { S }
            pub fn go(&self) -> i32 { self.other() + helper() }
            fn other(&self) -> i32 { fn helper() -> i32 { 3 } helper() }
        }

        mod inner {
            pub fn helper() -> i32 { 2 }
            pub fn call() -> i32 { helper() + super::helper() }
        }
        """,
}


def _plainly(monkeypatch: pytest.MonkeyPatch) -> None:
    """Take the shortcuts away: every lookup walks the scopes, every target is looked up
    afresh, every module member (and every answer shared by the files of a directory or
    package) is computed afresh for each file, nothing is settled."""
    monkeypatch.setattr(resolve.FileIndex, "walk_needed", lambda self, name, scope: True)
    monkeypatch.setattr(resolve.FileIndex, "class_entry", lambda self, name, scope: -1)
    monkeypatch.setattr(resolve.FileIndex, "outside_functions", lambda self, scope: False)

    def target(self: resolve.Resolver, symbol: Any) -> tuple[int, str]:
        fi = self.index(symbol[1])
        return fi.ids[symbol[2]], fi.facts.defs[symbol[2]].kind

    monkeypatch.setattr(resolve.Resolver, "_target", target)

    def module_member(self: resolve.Resolver, module: Any, name: str, depth: int,
                      compute: Any) -> list:
        with self.entering(("member", module, name)) as fresh:
            return compute() if fresh else []

    monkeypatch.setattr(resolve.Resolver, "module_member", module_member)
    memo = resolve.Resolver.memo

    def fresh_memo(self: resolve.Resolver, key: tuple, compute: Any, *args: Any) -> Any:
        # shared across files by what the answer depends on (or, a binding's type, across
        # the reads of a local): computed for each file and read instead (called directly,
        # compute records the same lookup keys a memo hit replays)
        if key[0] in ("js-module", "py-module", "java-fallback", "binding"):
            return compute(*args)
        return memo(self, key, compute, *args)

    monkeypatch.setattr(resolve.Resolver, "memo", fresh_memo)
    monkeypatch.setattr(lookups, "settle", lambda: None)


def _resolve_all(root: Path) -> dict[str, tuple]:
    """Every file's resolution, as comparable data, from a fresh resolver in path order."""
    return resolve_every_file(root)[0]


def _compare(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple]:
    build(root)
    quick = _resolve_all(root)
    with monkeypatch.context() as plain:
        _plainly(plain)
        slow = _resolve_all(root)
    assert quick.keys() == slow.keys()
    for path in quick:
        assert quick[path] == slow[path], path
    return quick


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir()))
def test_fixture_resolves_the_same_without_shortcuts(tmp_path, monkeypatch, fixture) -> None:
    root = tmp_path / fixture
    shutil.copytree(FIXTURES / fixture, root)
    resolved = _compare(root, monkeypatch)
    assert any(edges for edges, *_ in resolved.values())


def test_shadowing_resolves_the_same_without_shortcuts(tmp_path, monkeypatch) -> None:
    answers: set[tuple[str, bool]] = set()
    walk_needed = resolve.FileIndex.walk_needed

    def recorded(self: resolve.FileIndex, name: str, scope: int) -> bool:
        answer = walk_needed(self, name, scope)
        answers.add((self.family, answer))
        return answer

    monkeypatch.setattr(resolve.FileIndex, "walk_needed", recorded)
    entries: set[tuple[str, bool]] = set()
    class_entry = resolve.FileIndex.class_entry

    def entered(self: resolve.FileIndex, name: str, scope: int) -> int:
        answer = class_entry(self, name, scope)
        entries.add((name, answer >= 0))
        return answer

    monkeypatch.setattr(resolve.FileIndex, "class_entry", entered)
    resolved = _compare(write_tree(tmp_path, SHADOWING), monkeypatch)
    # Java's walk from a method is taken as from its class for some names, refused for a
    # name a function binds (a local: `made`) and for those read in a local class
    assert {("count", True), ("helper", True), ("helper", False), ("made", False)} <= entries
    assert len(resolved) == len([p for p in SHADOWING if not p.endswith((".mod", ".toml"))])
    # the cases are live: in every language the shortcut is taken for some names and
    # refused for others
    assert answers == {(family, answer) for family in ("python", "java", "js", "go", "rust")
                       for answer in (True, False)}


def test_the_shortcut_is_refused_where_a_scope_binds_the_name(tmp_path) -> None:
    root = write_tree(tmp_path, {k: v for k, v in SHADOWING.items() if k.startswith("py/")})
    build(root)
    store = SQLiteStore.open(root, readonly=True)
    try:
        fi = resolve.FileIndex(store.load_facts("py/pkg/mod.py"), "python",
                               lookups.family_plugin("python").RULES)
    finally:
        store.close()
    defs = fi.facts.defs
    inner = next(i for i, d in enumerate(defs) if d.name == "inner")
    reads = next(i for i, d in enumerate(defs) if d.name == "reads")
    assert fi.walk_needed("helper", inner)  # a local def in `outer`
    assert fi.walk_needed("util", inner)  # a local import in `local_import`
    assert fi.walk_needed("value", reads)  # bound in `binds`: a walk finds nothing, but it may
    assert fi.walk_needed("self", reads)  # the receiver
    assert not fi.walk_needed("later", reads)  # bound nowhere inside a definition
    assert not fi.walk_needed("len", -1)


def test_a_remembered_target_still_records_its_file(tmp_path) -> None:
    """An edge to a definition depends on the definition's file, every time: the node id
    and kind are remembered, the dependency is not."""
    root = write_tree(tmp_path, {k: v for k, v in SHADOWING.items() if k.startswith("go/")})
    build(root)
    found = discover(root, 1 << 20)
    store = SQLiteStore.open(root, readonly=True)
    try:
        layout = build_layout(root, [f.path for f in found.files], found.config_paths)
        resolver = resolve.Resolver(StoreWorkspace(store, layout, {}))
        fi = resolver.index("go/lib/b.go")
        method = ("d", "go/lib/b.go", next(i for i, d in enumerate(fi.facts.defs) if d.name == "M"))
        for _ in range(2):
            resolver.keys = set()
            assert resolver._target(method) == (fi.ids[method[2]], "Function")
            assert resolver.keys == {"file:go/lib/b.go"}
    finally:
        store.close()


def test_settle_freezes_only_inside_a_frozen_heap() -> None:
    assert gc.get_freeze_count() == 0
    outside = [object()]
    heap.settle()
    assert gc.get_freeze_count() == 0 and any(o is outside for o in gc.get_objects())
    with heap.frozen_heap():
        inside = [object()]
        assert any(o is inside for o in gc.get_objects())
        heap.settle()
        assert not any(o is inside for o in gc.get_objects())  # out of the collector's sight
    assert gc.get_freeze_count() == 0  # the block's exit returned it
    assert any(o is inside for o in gc.get_objects())


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir()))
def test_a_resolver_that_forgets_file_indexes_answers_the_same(
    tmp_path, monkeypatch, fixture,
) -> None:
    """The resolver keeps a bounded number of file indexes (INDEX_CACHE_FILES, 600 since the
    whole benchmark corpus peaked over 600 MB at 1,500) and forgets the older half, with its
    memo, when full: with room for two it forgets all the time, and answers the same."""
    root = tmp_path / fixture
    shutil.copytree(FIXTURES / fixture, root)
    build(root)
    kept = _resolve_all(root)
    monkeypatch.setattr(lookups, "INDEX_CACHE_FILES", 2)
    assert _resolve_all(root) == kept
