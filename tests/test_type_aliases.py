"""A type alias stands for the type it names: a value typed by the alias has that type's
members (``input: ParseStream`` where ``type ParseStream<'a> = &'a ParseBuffer<'a>``), and so
does the alias itself (``Stream::new()``). An alias of a union, of an object type or of
something outside the repository leads nowhere, and a cycle of aliases ends."""

from __future__ import annotations

import pytest

from knoxidx.index import Index
from knoxidx.parse.extract import extract
from knoxidx.parse.name_paths import alias_path
from tests.helpers import build

RUST_PARSE = """
pub struct ParseBuffer { pos: usize }
pub struct Lookahead;
pub type ParseStream<'a> = &'a ParseBuffer;
pub type Stream = ParseBuffer;
pub type Again = Stream;

impl ParseBuffer {
    pub fn new() -> ParseBuffer { ParseBuffer { pos: 0 } }
    pub fn peek(&self) -> bool { self.pos > 0 }
}
impl Lookahead {
    pub fn peek(&self) -> bool { false }
}
"""
RUST_LIB = """
mod parse;
use parse::{Again, ParseStream, Stream};

pub fn item(input: ParseStream) -> bool {
    input.peek()
}

pub fn fresh() -> bool {
    let buf = Stream::new();
    buf.peek()
}

pub fn twice(buf: Again) -> bool {
    buf.peek()
}
"""
TS_STORE = """
export class Store { save(): void {} load(): void {} }
export class Other { save(): void {} }
export type StoreRef = Store;
export type Either = Store | Other;
export type Loop = Knot;
export type Knot = Loop;
"""
TS_APP = """
import { StoreRef, Either, Loop } from "./store";

export function keep(s: StoreRef): void { s.save(); }
export function either(e: Either): void { e.save(); }
export function loop(l: Loop): void { l.save(); }
"""
GO_STORE = """package store

type Logged struct{ log []string }

func (l *Logged) Put(key string) { l.log = append(l.log, key) }

type Mem struct{}

func (m *Mem) Put(key string) {}

type Journal = Logged
type Snapshot Logged

func Replay(j *Journal, s *Snapshot) {
	j.Put("a")
	s.Put("b")
}
"""


def _callees(idx: Index, name: str) -> set[tuple[str, str]]:
    return {(c["qualified_name"], c["confidence"]) for c in idx.callees(name)["callees"]}


@pytest.mark.parametrize(("text", "path"), [
    ("&'a ParseBuffer<'a>", ("ParseBuffer",)),
    ("store.Store", ("store", "Store")),
    ("Store | null", ("Store",)),
    ("Store | Other", ()),
    ("{ board: Board }", ()),
])
def test_the_path_an_alias_names(text: str, path: tuple[str, ...]) -> None:
    assert alias_path(text) == path


@pytest.mark.parametrize(("language", "source", "hint"), [
    ("rust", b"pub type ParseStream<'a> = &'a ParseBuffer<'a>;\n", ("ParseBuffer",)),
    ("typescript", b"export type Page = Paged<Task>;\n", ("Paged",)),
    ("typescript", b"export type Id = number | Key;\n", ()),
    ("go", b"package p\ntype Journal = store.Logged\n", ("store", "Logged")),
    ("go", b"package p\ntype Snapshot Logged\n", ()),  # a defined type: not an alias
    ("python", b"type Pairs = Mapping\n", ("Mapping",)),
])
def test_an_alias_definition_carries_the_type_it_names(
    language: str, source: bytes, hint: tuple[str, ...]
) -> None:
    (alias,) = [d for d in extract("x", source, language).defs if d.kind == "Type"]
    assert alias.type_hint == hint


def test_rust_values_typed_by_an_alias_have_its_types_methods(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/parse.rs": RUST_PARSE,
                 "src/lib.rs": RUST_LIB})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "item") == {("p::parse::ParseBuffer::peek", "inferred")}
        assert _callees(idx, "fresh") == {("p::parse::ParseBuffer::new", "exact"),
                                          ("p::parse::ParseBuffer::peek", "inferred")}
        assert _callees(idx, "twice") == {("p::parse::ParseBuffer::peek", "inferred")}


def test_typescript_aliases_of_a_class_not_of_a_union_or_of_each_other(repo) -> None:
    root = repo({"store.ts": TS_STORE, "app.ts": TS_APP})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "keep") == {("store:Store.save", "inferred")}
        assert not {q for q, c in _callees(idx, "either") if c != "name"}
        assert not {q for q, c in _callees(idx, "loop") if c != "name"}


def test_go_follows_an_alias_but_not_a_defined_type(repo) -> None:
    root = repo({"go.mod": "module example.com/s\n", "store/store.go": GO_STORE})
    build(root)
    with Index.open(root) as idx:
        # `j.Put` through the alias; `s.Put` on the defined type Snapshot is no call of
        # Logged.Put (Snapshot has none of its methods), nor of anything else by inference
        inferred = {q for q, c in _callees(idx, "Replay") if c == "inferred"}
        assert inferred == {"example.com/s/store.Logged.Put"}


RUST_INLINE_MOD = """
pub fn helper() -> bool { true }

#[cfg(test)]
mod tests {
    use super::*;

    fn uses_helper() -> bool { helper() }
}

pub mod parsing {
    use crate::parse::{ParseBuffer, ParseStream};

    pub fn aliased(input: ParseStream) -> bool {
        input.peek()
    }

    pub fn direct(input: &ParseBuffer) -> bool {
        input.peek()
    }
}
"""
TS_NAMESPACE = """
export namespace Board {
  function limit(): number {
    return 3;
  }
  export function cap(n: number): number {
    return Math.min(n, limit());
  }
}
export function limit(): number {
  return 5;
}
"""


def test_names_a_rust_inline_module_imports_are_in_scope_inside_it(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/parse.rs": RUST_PARSE,
                 "src/lib.rs": "mod parse;\nmod data;\n", "src/data.rs": RUST_INLINE_MOD})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "uses_helper") == {("p::data::helper", "exact")}
        for name in ("aliased", "direct"):
            assert _callees(idx, name) == {("p::parse::ParseBuffer::peek", "inferred")}
        # `mod tests { use super::*; }` names the file's own module: no Imports edge to itself
        assert idx.store.conn.execute(
            "SELECT count(*) FROM edges WHERE type = 'Imports' AND source = target").fetchone() \
            == (0,)


def test_a_typescript_namespace_s_own_names_are_in_scope_inside_it(repo) -> None:
    root = repo({"board.ts": TS_NAMESPACE})
    build(root)
    with Index.open(root) as idx:
        # the namespace's own limit(), not the file's
        assert _callees(idx, "Board.cap") == {("board:Board.limit", "exact")}
