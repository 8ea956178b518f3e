"""``refs``: every site a rename of a symbol must reach, in five languages. Named imports
(through re-exports), uses qualified by the class (``Key.from_type_string()``), and apart, as
"possible", the calls whose receiver's type is unknown but whose member name matches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from knoxidx.cli import main
from tests.helpers import build, write_tree

FILES = {
    # Python: a class imported directly, through the package's re-export and under an alias
    "pkg/__init__.py": "from pkg.keys import Key\n",
    "pkg/keys.py": """\
        class Key:
            @classmethod
            def from_type_string(cls, kind):
                return cls()

            def sign(self):
                return 1


        class OtherKey:
            def sign(self):
                return 2
        """,
    "pkg/use.py": """\
        from pkg.keys import Key
        from pkg import Key as Alias
        import pkg.keys


        def load(kind):
            return Key.from_type_string(kind)


        def load_qualified(kind):
            return pkg.keys.Key.from_type_string(kind)


        def load_untyped(x):
            return x.from_type_string("a")


        def sign_untyped(x):
            return x.sign()


        def local_import():
            from pkg.keys import Key as Inner
            return Inner
        """,
    # TypeScript: a named import, an aliased import of a re-export, the re-export itself
    "web/shapes.ts": """\
        export class Shape {
          static create(): Shape { return new Shape(); }
        }
        """,
    "web/index.ts": 'export { Shape } from "./shapes";\n',
    "web/app.ts": """\
        import { Shape } from "./shapes";
        import { Shape as Figure } from "./index";
        export function make() { return Shape.create(); }
        """,
    # Java: a single-type import and a static factory through the class
    "src/main/java/com/x/model/Item.java": """\
        package com.x.model;
        public class Item {
            public static Item of(String s) { return new Item(); }
        }
        """,
    "src/main/java/com/x/App.java": """\
        package com.x;
        import com.x.model.Item;
        public class App {
            Item run() { return Item.of("a"); }
        }
        """,
    # Go: package-qualified uses
    "go.mod": "module example.com/m\n",
    "store/store.go": """\
        package store

        type Store struct{}

        func New() *Store { return &Store{} }
        """,
    "main.go": """\
        package main

        import "example.com/m/store"

        func main() {
        \t_ = store.New()
        }
        """,
    # Rust: `use a::X` and an associated function called through the type
    "Cargo.toml": '[package]\nname = "app"\n',
    "src/main.rs": """\
        mod config;
        use config::Config;

        fn main() {
            let c = Config::new();
        }
        """,
    "src/config.rs": """\
        pub struct Config;
        impl Config {
            pub fn new() -> Config { Config }
        }
        """,
}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("refs"), FILES)
    build(root)
    return root


def refs(root: Path, symbol: str) -> dict:
    result = CliRunner().invoke(main, ["refs", symbol, str(root), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def sites(answer: dict, via: str) -> set[str]:
    return {f"{h['site']['path']}:{h['site']['line']}" for h in answer["incoming"].get(via, [])}


def test_python_imports_qualified_uses_and_possible_calls(indexed: Path) -> None:
    answer = refs(indexed, "pkg.keys.Key")
    # direct, aliased through the package's re-export, the re-export itself, a local import
    assert sites(answer, "ImportedBy") == {
        "pkg/__init__.py:1", "pkg/use.py:1", "pkg/use.py:2", "pkg/use.py:23"}
    local = [h for h in answer["incoming"]["ImportedBy"] if h["site"]["line"] == 23]
    assert local[0]["qualified_name"] == "pkg.use.local_import"  # the import's own scope
    # `Key.from_type_string()` and `pkg.keys.Key.from_type_string()` name the class
    assert {"pkg/use.py:7", "pkg/use.py:11"} <= sites(answer, "ReferencedBy")
    # `x.sign()`: x has no known type, the call stays unresolved: possibly this one
    possible = {(h["site"]["path"], h["site"]["line"]): h for h in answer["possible"]}
    assert possible[("pkg/use.py", 15)]["called_as"] == "x.from_type_string"
    assert possible[("pkg/use.py", 19)]["called_as"] == "x.sign"
    assert possible[("pkg/use.py", 19)]["qualified_name"] == "pkg.use.sign_untyped"
    assert answer["possible_total"] == len(answer["possible"]) >= 1
    assert all(h["confidence"] == "possible" for h in answer["possible"])
    assert "possible" not in answer["incoming"]  # counted apart


def test_possible_calls_of_a_member_and_none_for_a_unique_resolution(indexed: Path) -> None:
    method = refs(indexed, "pkg.keys.Key.from_type_string")
    assert sites(method, "CalledBy") == {"pkg/use.py:7", "pkg/use.py:11"}
    assert [h["called_as"] for h in method["possible"]] == ["x.from_type_string"]
    sign = refs(indexed, "pkg.keys.Key.sign")
    assert [(h["site"]["line"], h["reason"]) for h in sign["possible"]] == [(19, "unknown")]
    made = refs(indexed, "web/shapes:Shape.create")
    assert made["possible_total"] == 0 and made["possible"] == []


def test_typescript_named_imports_and_reexports(indexed: Path) -> None:
    answer = refs(indexed, "web/shapes:Shape")
    assert sites(answer, "ImportedBy") == {"web/app.ts:1", "web/app.ts:2", "web/index.ts:1"}
    assert "web/app.ts:3" in sites(answer, "ReferencedBy")  # Shape.create()


def test_java_import_and_static_call_through_the_class(indexed: Path) -> None:
    answer = refs(indexed, "com.x.model.Item")
    assert sites(answer, "ImportedBy") == {"src/main/java/com/x/App.java:2"}
    assert "src/main/java/com/x/App.java:4" in sites(answer, "ReferencedBy")  # Item.of(...)


def test_go_package_qualified_use(indexed: Path) -> None:
    assert sites(refs(indexed, "store.New"), "CalledBy") == {"main.go:6"}


def test_rust_use_and_associated_function_through_the_type(indexed: Path) -> None:
    answer = refs(indexed, "app::config::Config")
    assert sites(answer, "ImportedBy") == {"src/main.rs:2"}
    assert "src/main.rs:5" in sites(answer, "ReferencedBy")  # Config::new()


def test_human_output_labels_the_possible_calls_apart(indexed: Path) -> None:
    out = CliRunner().invoke(main, ["refs", "pkg.keys.Key", str(indexed)]).output
    assert "  ImportedBy: 4\n" in out
    possible = out.split("possible, not counted above")[1]
    assert "pkg/use.py:19  x.sign()  [unknown]" in possible


def test_a_postgresql_store_answers_the_same(indexed: Path, pg_url: str) -> None:
    from knoxidx.index import Index

    with Index.open(indexed, create=True, store=pg_url) as idx:
        idx.update(jobs=1)
        for symbol in ("pkg.keys.Key", "pkg.keys.Key.from_type_string", "app::config::Config"):
            assert idx.refs(symbol) == refs(indexed, symbol), symbol


def test_an_update_moves_an_import_to_where_the_name_now_comes_from(tmp_path: Path) -> None:
    """`pkg/use.py` is unchanged, but what its `from pkg import Key` binds moved: its
    ImportedBy site leaves the old class and reaches the new one."""
    python = {path: text for path, text in FILES.items() if path.startswith("pkg/")}
    root = write_tree(tmp_path, python)
    build(root)
    assert "pkg/use.py:2" in sites(refs(root, "pkg.keys.Key"), "ImportedBy")
    write_tree(root, {"pkg/__init__.py": "from pkg.newkeys import Key\n",
                      "pkg/newkeys.py": "class Key:\n    pass\n"})
    build(root)
    assert sites(refs(root, "pkg.keys.Key"), "ImportedBy") == {"pkg/use.py:1", "pkg/use.py:23"}
    assert sites(refs(root, "pkg.newkeys.Key"), "ImportedBy") == {"pkg/__init__.py:1",
                                                                  "pkg/use.py:2"}
