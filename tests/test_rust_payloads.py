"""Rust names bound in a variant's or a tuple struct's payload: `E::V(_, x) => x.run()` calls
the method of the type V's declaration writes at x's place (through `&`, `Box`, as a declared
type reads), `Self::V(x)` in `impl E`, `E::S { a, .. }` of a struct-like variant, `V(x)` of a variant
`use E::*;` brings and `W(x)` of a `struct W(T)` too; a payload of the
enum's own type parameter, a name after `..` and `Err(e)` (std's) stay unresolved; a change to
the enum's file re-resolves the files that match on it."""

from __future__ import annotations

from knoxidx.index import Index
from knoxidx.parse.extract import extract
from knoxidx.update.verify import verify_index
from tests.helpers import build

CARGO = '[package]\nname = "p"\n'
TYPES = """pub struct Inner;
impl Inner {
    pub fn touch(&self) {}
}
pub struct Other;
impl Other {
    pub fn touch(&self) {}
}
pub enum Shape {
    Plain(Inner),
    Pair(u8, Box<Other>),
    Held(&'static Inner),
    Named { inner: Inner, other: Other },
    Unit,
}
pub struct Wrapper(pub u8, pub Other);
pub enum Maybe<T> {
    Just(T),
}
pub enum Alt {
    Plain(Other),
    Unnamed((Inner, u8), *const Inner, Box<(Other, u8)>, fn(Inner)),
}
"""
USER = """use crate::types::{Maybe, Shape, Wrapper};

pub fn plain(s: Shape) {
    match s {
        Shape::Plain(inner) => inner.touch(),
        Shape::Pair(_, other) => other.touch(),
        Shape::Held(ref held) => held.touch(),
        _ => {}
    }
}

pub fn leading(s: &Shape, last: crate::types::Other) {
    if let Shape::Pair(first, ..) = s {
        first.touch();
    }
    if let Shape::Pair(.., last) = s {
        last.touch();
    }
}

pub fn named(s: &Shape) {
    match s {
        Shape::Named { other, .. } => other.touch(),
        _ => {}
    }
    if let Shape::Named { other: renamed, .. } = s {
        renamed.touch();
    }
}

pub fn wrapped(w: Wrapper) {
    if let Wrapper(_, other) = w {
        other.touch();
    }
}

pub fn generic(m: Maybe<crate::types::Inner>) {
    match m {
        Maybe::Just(value) => value.touch(),
    }
}

pub fn failed(r: Result<u8, Shape>) {
    if let Err(e) = r {
        e.touch();
    }
}
"""
SELF = """use crate::types::Inner;

pub enum Own {
    One(Inner),
}

impl Own {
    pub fn run(&self) {
        match self {
            Self::One(one) => one.touch(),
        }
    }
}
"""
BARE = """use crate::types::Shape;
use crate::types::Shape::*;

pub fn bare(s: Shape) {
    match s {
        Plain(inner) => inner.touch(),
        _ => {}
    }
}

pub fn renamed(s: Shape) {
    use crate::types::Shape::Pair as Two;
    match s {
        Two(_, other) => other.touch(),
        _ => {}
    }
}

mod both {
    use crate::types::Alt::*;
    use crate::types::Shape::*;

    pub fn either(s: crate::types::Shape) {
        if let Plain(which) = s {
            which.touch();
        }
    }
}
"""
LIB = "pub mod types;\npub mod user;\npub mod own;\npub mod bare;\n"


def _callees(idx: Index, name: str) -> list[str]:
    return sorted({c["qualified_name"] for c in idx.callees(name)["callees"]})


def _crate(repo):  # type: ignore[no-untyped-def]
    return repo({"Cargo.toml": CARGO, "src/lib.rs": LIB, "src/types.rs": TYPES,
                 "src/user.rs": USER, "src/own.rs": SELF, "src/bare.rs": BARE})


def test_a_variant_s_payload_is_of_the_type_its_declaration_writes_at_its_place(repo) -> None:
    root = _crate(repo)
    build(root)
    with Index.open(root) as idx:
        # `Pair(_, other)` is the Box<Other> at 1, not the u8 at 0; `ref held` of a `&Inner`
        assert _callees(idx, "p::user::plain") == ["p::types::Inner::touch",
                                                    "p::types::Other::touch"]
        assert _callees(idx, "p::own::Own::run") == ["p::types::Inner::touch"]  # `Self::One`


def test_a_variant_an_import_brings_is_read_as_its_enum_s(repo) -> None:
    root = _crate(repo)
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::bare::bare") == ["p::types::Inner::touch"]  # `use Shape::*`
        assert _callees(idx, "p::bare::renamed") == ["p::types::Other::touch"]  # `Pair as Two`
        # two enums' wildcards bring a `Plain`: which one is not read
        assert _callees(idx, "p::bare::both::either") == []


def test_unread_places_stay_unresolved(repo) -> None:
    root = _crate(repo)
    build(root)
    with Index.open(root) as idx:
        # `first` is the u8 (no method of the crate's), `last` after `..` has no place read
        # (nor is it the parameter it hides)
        assert _callees(idx, "p::user::leading") == []
        # the enum's type parameter: the pattern does not say its argument
        assert _callees(idx, "p::user::generic") == []
        assert _callees(idx, "p::user::failed") == []  # std's `Err`


def test_a_struct_like_variant_s_pattern_reads_its_fields_by_name(repo) -> None:
    root = _crate(repo)
    build(root)
    with Index.open(root) as idx:
        callees = idx.callees("p::user::named")["callees"]
        assert sorted(c["qualified_name"] for c in callees) == ["p::types::Other::touch"] * 2


def test_a_tuple_struct_s_pattern_reads_its_fields_by_place(repo) -> None:
    root = _crate(repo)
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::user::wrapped") == ["p::types::Other::touch"]


def test_a_change_to_the_variant_s_payload_re_resolves_its_users(repo) -> None:
    enum = "pub enum E {\n    V(Inner),\n}\n"
    root = repo({"Cargo.toml": CARGO, "src/lib.rs": "pub mod types;\npub mod e;\npub mod user;\n",
                 "src/types.rs": TYPES, "src/e.rs": "use crate::types::*;\n" + enum,
                 "src/user.rs": "use crate::e::E;\n\npub fn run(e: E) {\n"
                                "    match e {\n        E::V(v) => v.touch(),\n    }\n}\n"})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::user::run") == ["p::types::Inner::touch"]
    (root / "src/e.rs").write_text("use crate::types::*;\n" + enum.replace("Inner", "Other"))
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::user::run") == ["p::types::Other::touch"]
    (root / "src/e.rs").write_text("use crate::types::*;\n" + enum.replace("Inner", "u8"))
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::user::run") == []
        assert verify_index(idx)["equal"]  # as a rebuild has it


def test_extraction_binds_each_place_of_a_tuple_variant_and_struct() -> None:
    facts = extract("src/types.rs", TYPES.encode(), "rust")
    shape = next(i for i, d in enumerate(facts.defs) if d.name == "Shape")
    wrapper = next(i for i, d in enumerate(facts.defs) if d.name == "Wrapper")
    maybe = next(i for i, d in enumerate(facts.defs) if d.name == "Maybe")
    held = {(b.scope, b.name): b.type_path for b in facts.bindings}
    assert held[(shape, "Plain(0)")] == ("Inner",)
    assert held[(shape, "Pair(0)")] == ("u8",)
    assert held[(shape, "Pair(1)")] == ("Other",)  # through the Box
    assert held[(wrapper, "(1)")] == ("Other",)
    assert held[(shape, "Named(other)")] == ("Other",)
    assert not any(scope == maybe for scope, _ in held)  # `Just(T)`
    # a tuple's, a pointer's and a function's methods are no named type's
    assert not any(name.startswith("Unnamed(") for _, name in held)


def test_a_pattern_binds_each_name_at_its_place() -> None:
    facts = extract("src/user.rs", USER.encode(), "rust")
    bound = {(b.name, b.type_path) for b in facts.bindings}
    assert ("other", ("Shape", "Pair", "(1)")) in bound
    assert ("held", ("Shape", "Held", "(0)")) in bound
    assert ("first", ("Shape", "Pair", "(0)")) in bound
    assert ("last", ("Shape", "Pair", "(..)")) in bound  # after `..`: no place read
