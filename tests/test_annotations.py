"""What an annotation says a value is, whatever its spelling, and where a call written over
several lines is made.

A generic written with square brackets (Python's ``Select[Any]``, Go's ``List[T]``) is a value of
that class, and so is a Python forward reference (``"Select[T]"``): before, either typed nothing,
and ``select(...).where(...)`` on SQLAlchemy's ``-> Select[Any]`` was no call of ``Select.where``.
A method called at the end of a chain that spans lines is called on the line of its name (where
a reader, a compiler or a language server sees it), not on the line where the chain begins.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from knoxidx.index import Index
from knoxidx.parse.name_paths import type_path
from tests.helpers import build


@pytest.mark.parametrize(("text", "square", "expected"), [
    ("Select[Any]", True, ("Select",)),
    ("sql.Select[Tuple[int, str]]", True, ("sql", "Select")),
    ('"Select[T]"', True, ("Select",)),
    ("'Select'", True, ("Select",)),
    ("Optional['Select']", True, ("Select",)),
    ("Select[Any] | None", True, ("Select",)),
    ("ClassVar[Registry]", True, ("Registry",)),
    ("Final[Registry]", True, ("Registry",)),
    ("Literal['a']", True, ()),  # values, not a type
    ("Foo[]", True, ()),
    # Go's containers have no methods: their type stands for their element's, which a range
    # or an index reads
    ("map[string]Foo", True, ("Foo",)),
    ("[]Foo", True, ("Foo",)),
    ("map[[2]int][]*pkg.Foo", True, ("pkg", "Foo")),
    ("<-chan Foo", True, ("Foo",)),
    # Go's results: named ones (all or none, so the last says which) give the first's type
    ("(left, right *Node, err error)", True, ("Node",)),
    ("(n int, err error)", True, ("int",)),
    ("(chan Foo, error)", True, ("Foo",)),
    ("List[T]", True, ("List",)),  # Go generics
    # languages whose type arguments are angle brackets are as before
    ("Select[Any]", False, ()),
    ('"Select"', False, ()),
    ("Foo[]", False, ()),
    # pointers, references, lifetimes and modifiers in front, however spaced
    ("&'a mut  Foo", False, ("Foo",)),
    ("* Foo", False, ("Foo",)),
    ("Box<&dyn\tTrait>", False, ("Trait",)),
    ("readonly Item[]", False, ()),
    ("Promise< impl  Foo >", False, ("Foo",)),
    ("mutable", False, ("mutable",)),  # a name that starts like a modifier
])
def test_the_type_an_annotation_names(text: str, square: bool, expected: tuple[str, ...]) -> None:
    assert type_path(text, square) == expected


PY_SELECT = '''
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Select(Generic[T]):
    def where(self, *clauses: Any) -> "Select[T]":
        return self

    def order_by(self, *clauses: Any) -> "Select[T]":
        return self


def select(*columns: Any) -> Select[Any]:
    return Select()


def forward() -> "Select[Any]":
    return Select()
'''
PY_USE = '''
from typing import Any, Optional

from sel import Select, forward, select


def chained():
    return select(1).where(2).order_by(3)


def assigned():
    s = select(1)
    s.where(2)


def annotated(s: Optional["Select[Any]"]):
    s.order_by(1)


def declared():
    s: Select[Any] = forward()
    s.where(1)


def over_lines():
    return (
        select(1)
        .where(2)
        .order_by(
            3)
    )
'''


def _calls(idx: Index, name: str) -> set[tuple[str, int, str]]:
    return {(c["qualified_name"], c["site"]["line"], c["confidence"])
            for c in idx.callees(name)["callees"]}


@pytest.fixture
def selects(repo) -> Iterator[Index]:
    root = repo({"sel.py": PY_SELECT, "use.py": PY_USE})
    build(root)
    with Index.open(root) as idx:
        yield idx


def test_python_values_typed_by_a_generic_or_a_forward_reference(selects: Index) -> None:
    assert _calls(selects, "chained") == {("sel.select", 8, "exact"),
                                          ("sel.Select.where", 8, "inferred"),
                                          ("sel.Select.order_by", 8, "inferred")}
    assert ("sel.Select.where", 13, "inferred") in _calls(selects, "assigned")
    assert _calls(selects, "annotated") == {("sel.Select.order_by", 17, "inferred")}
    assert ("sel.Select.where", 22, "inferred") in _calls(selects, "declared")


def test_a_call_over_several_lines_is_made_on_the_line_of_its_name(selects: Index) -> None:
    assert _calls(selects, "over_lines") == {("sel.select", 27, "exact"),
                                             ("sel.Select.where", 28, "inferred"),
                                             ("sel.Select.order_by", 29, "inferred")}


TS_CHAIN = '''
export class Query {
  where(x: number): Query { return this; }
  limit(n: number): Query { return this; }
}
export function query(): Query { return new Query(); }

export function run(): Query {
  return query()
    .where(1)
    .limit(
      2);
}
'''
JAVA_CHAIN = '''
package p;

public class Builder {
    public Builder add(int x) { return this; }
    public Builder done() { return this; }

    static Builder make() {
        Builder b = new Builder();
        return b
            .add(1)
            .done();
    }
}
'''
GO_GENERIC = '''package p

type List[T any] struct{ items []T }

func (l *List[T]) Push(x T) { l.items = append(l.items, x) }

func NewList[T any]() *List[T] { return &List[T]{} }

func Fill() {
	l := NewList[int]()
	l.Push(1)
}

func Typed(l *List[string]) {
	l.Push("a")
}
'''


@pytest.mark.parametrize(("files", "caller", "expected"), [
    ({"q.ts": TS_CHAIN}, "run", {("q:query", 9), ("q:Query.where", 10), ("q:Query.limit", 11)}),
    ({"p/Builder.java": JAVA_CHAIN}, "make",
     {("p.Builder", 9), ("p.Builder.add", 11), ("p.Builder.done", 12)}),
], ids=["typescript", "java"])
def test_chains_over_lines_in_other_languages(repo, files, caller, expected) -> None:
    root = repo(files)
    build(root)
    with Index.open(root) as idx:
        assert {(q, line) for q, line, _ in _calls(idx, caller)} == expected


def test_go_values_of_a_generic_type_have_its_methods(repo) -> None:
    root = repo({"go.mod": "module example.com/g\n", "p/list.go": GO_GENERIC})
    build(root)
    with Index.open(root) as idx:
        assert ("example.com/g/p.List.Push", 15, "inferred") in _calls(idx, "Typed")


PY_TYPES = '''
from typing import Generic, TypeVar, overload

N = TypeVar("N")


class Numeric(Generic[N]):
    @overload
    def __init__(self, precision: int) -> None: ...

    @overload
    def __init__(self, precision: None = None) -> None: ...

    def __init__(self, precision=None):
        self.precision = precision

    def adapt(self):
        return self


class Float(Numeric[N]):
    pass


class Real(Float[float]):
    def __init__(self, **kw):
        super().__init__(**kw)

    def copy(self):
        return self.adapt()


@overload
def parse(text: str) -> int: ...
@overload
def parse(text: bytes) -> int: ...
def parse(text):
    return int(text)


def use():
    return parse("1")
'''
PY_STUB = '''
from typing import overload

@overload
def parse(text: str) -> int: ...
@overload
def parse(text: bytes) -> int: ...
'''


def test_a_generic_base_is_a_base(repo) -> None:
    root = repo({"types.py": PY_TYPES})
    build(root)
    with Index.open(root) as idx:
        bases = {(e["qualified_name"], e["confidence"])
                 for e in idx.refs("types.Numeric")["incoming"].get("SubclassedBy", [])}
        assert bases == {("types.Float", "exact")}
        # through Float[float] and Numeric[N]: the implementation of __init__, not its stubs
        assert _calls(idx, "types.Real.__init__") == {("types.Numeric.__init__", 27, "inferred")}
        assert _calls(idx, "types.Real.copy") == {("types.Numeric.adapt", 30, "inferred")}


def test_overload_stubs_are_one_symbol_the_implementation(repo) -> None:
    root = repo({"types.py": PY_TYPES, "stubs.pyi": PY_STUB})
    build(root)
    with Index.open(root) as idx:
        inits = [s for s in idx.symbols("__init__") if s["path"] == "types.py"]
        assert sorted(s["start_line"] for s in inits) == [14, 26]  # Numeric's body, Real's
        assert _calls(idx, "types.use") == {("types.parse", 42, "exact")}
        # a stub file's signatures are all there is: each stays a definition
        assert len([s for s in idx.symbols("parse") if s["path"] == "stubs.pyi"]) == 2


def test_a_class_body_binds_nothing_its_methods_see(repo) -> None:
    root = repo({"m.py": '''
def helper():
    return 1


class A:
    for helper in range(2):
        pass

    def f(self):
        return helper()
'''})
    build(root)
    with Index.open(root) as idx:
        assert _calls(idx, "m.A.f") == {("m.helper", 11, "exact")}


@pytest.mark.parametrize(("files", "caller", "targets"), [
    ({"a.ts": "export class A { constructor(x: number) {} }\n"
              "export class B extends A {\n  constructor(x: number) {\n    super(x);\n  }\n}\n"},
     "B.constructor", {("a:A", 4), ("a:A.constructor", 4)}),
    ({"p/B.java": "package p;\nclass A { A(int x) {} }\n"
                  "class B extends A {\n  B(int x) {\n    super(x);\n  }\n}\n"},
     "p.B.B", {("p.A", 5), ("p.A.A", 5)}),
], ids=["typescript", "java"])
def test_super_in_a_constructor_calls_the_base_class_and_its_constructor(
        repo, files, caller, targets) -> None:
    root = repo(files)
    build(root)
    with Index.open(root) as idx:
        assert {(q, line) for q, line, _ in _calls(idx, caller)} == targets


def test_pythons_super_is_no_call_of_the_base_class(repo) -> None:
    root = repo({"m.py": "class A:\n    def __init__(self):\n        pass\n\n\n"
                         "class B(A):\n    def __init__(self):\n        super().__init__()\n"})
    build(root)
    with Index.open(root) as idx:
        assert _calls(idx, "m.B.__init__") == {("m.A.__init__", 8, "inferred")}
