"""Rust macros a `#[macro_use]` declaration brings into scope: a `#[macro_use] mod macros;`
keeps its module's macros (and its own `#[macro_use]` modules') in scope after it, in the
modules its parent declares after it, not before; a `#[macro_export]` macro is an item of its
crate's root (`crate::json!`, `p::json!` from the crate's tests); a `#[macro_use] extern
crate x;` brings x's exported macros into the whole crate."""

from __future__ import annotations

from knoxidx.index import Index
from tests.helpers import build

CARGO = '[package]\nname = "p"\n'
READY = "macro_rules! ready {\n    ($e:expr) => { $e };\n}\n"
LIB = "mod before;\n\n#[macro_use]\n#[doc(hidden)]\nmod macros;\n\nmod after;\n"
# the crate around the macros: a module declared before `mod macros;`, one after
CRATE = {
    "Cargo.toml": CARGO,
    "src/lib.rs": LIB,
    "src/before.rs": "pub fn early() -> u8 { ready!(1) }\n",
    "src/after.rs": "pub fn late() -> u8 { ready!(2) }\npub mod inner;\n",
    "src/after/inner.rs": "pub fn deep() -> u8 { ready!(3) }\n",
}


def _callees(idx: Index, name: str) -> list[str]:
    return [c["qualified_name"] for c in idx.callees(name)["callees"]]


def test_a_macro_use_module_s_macros_are_in_scope_in_the_modules_declared_after_it(repo
                                                                                    ) -> None:
    root = repo({**CRATE, "src/macros.rs": READY})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::after::late") == ["p::macros::ready"]
        assert _callees(idx, "p::after::inner::deep") == ["p::macros::ready"]
        assert _callees(idx, "p::before::early") == []  # declared before the `mod macros;`
    (root / "src/lib.rs").write_text(LIB.replace("#[macro_use]\n", ""))  # no longer brought
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::after::late") == []


def test_a_module_declared_inside_an_inline_module_sees_the_macros_above_it(repo) -> None:
    root = repo({
        "Cargo.toml": CARGO,
        "src/lib.rs": READY + "mod gen {\n    pub mod fold;\n}\n",
        "src/gen/fold.rs": "pub fn fold() -> u8 { ready!(1) }\n",
    })
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::gen::fold::fold") == ["p::ready"]


def test_macro_use_modules_inside_a_macro_use_module_are_followed(repo) -> None:
    root = repo({
        **CRATE,
        "src/macros/mod.rs": "#[macro_use]\nmod ready;\n\nmod helpers;\n",
        "src/macros/ready.rs": READY,
        # a sibling below the declaration in the macro module itself
        "src/macros/helpers.rs": "pub fn help() -> u8 { ready!(4) }\n",
    })
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::after::inner::deep") == ["p::macros::ready::ready"]
        assert _callees(idx, "p::macros::helpers::help") == ["p::macros::ready::ready"]
        assert _callees(idx, "p::before::early") == []


def test_an_exported_macro_is_called_by_the_crate_root_s_path(repo) -> None:
    root = repo({
        "Cargo.toml": CARGO,
        "src/lib.rs": "mod user;\nmod json_macro;\n",
        "src/json_macro.rs": "#[macro_export]\n/// A value.\nmacro_rules! json {\n"
                             "    ($e:expr) => { $e };\n}\n"
                             "macro_rules! hidden {\n    ($e:expr) => { $e };\n}\n",
        # before the definition textually, which a path does not mind
        "src/user.rs": "pub fn make() -> u8 { crate::json!(1) }\n"
                       "pub fn unseen() -> u8 { crate::hidden!(1) }\n",
        "tests/values.rs": "#[test]\nfn value() { p::json!(2); }\n",
    })
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::user::make") == ["p::json_macro::json"]
        assert _callees(idx, "p::user::unseen") == []  # not exported: no item of the root
        assert _callees(idx, "p::tests::values::value") == ["p::json_macro::json"]


def test_a_macro_use_extern_crate_brings_its_exported_macros(repo) -> None:
    root = repo({
        "Cargo.toml": '[workspace]\nmembers = ["p", "x"]\n',
        "x/Cargo.toml": '[package]\nname = "x"\n',
        "x/src/lib.rs": "mod made;\n",
        "x/src/made.rs": "#[macro_export]\nmacro_rules! make {\n    () => { 1 };\n}\n",
        "p/Cargo.toml": CARGO,
        "p/src/lib.rs": "#[macro_use]\nextern crate x;\n\nmod user;\n",
        "p/src/user.rs": "pub fn build() -> u8 { make!() }\n",
    })
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::user::build") == ["x::made::make"]
