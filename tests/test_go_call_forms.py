"""Go calls whose receiver or callee is written in a form the resolver once did not read: a
function literal's parameter inside a package-level variable's value, a generic function
called with explicit type arguments, an element of a container of a named non-struct type,
and a name two files declare under mutually exclusive build constraints."""

from __future__ import annotations

from pathlib import Path

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

GO_MOD = "module example.com/m\n\ngo 1.21\n"


def _calls_in(root: Path, path: str) -> set[tuple[int, str, str]]:
    """(line, callee's file, callee's name) of every Calls edge in ``path``."""
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(e["line"], nodes[e["target"]]["path"], nodes[e["target"]]["name"])
                for e in export.edges(idx.q)
                if e["type"] == "Calls" and e["path"] == path}


LITERALS = """\
package p

type Cursor struct{}

func (c *Cursor) Node() int { return 0 }

var visit = func(c *Cursor) { c.Node() }

var tests = []struct {
	name string
	f    func(*Cursor) bool
}{
	{name: "a", f: func(c *Cursor) bool { return c.Node() == 0 }},
}

func other(c int) { _ = c }
"""


def test_a_function_literal_s_parameter_in_a_package_variable_is_typed(repo) -> None:
    root = repo({"go.mod": GO_MOD, "p.go": LITERALS})
    calls = _calls_in(root, "p.go")
    assert (7, "p.go", "Node") in calls
    assert (13, "p.go", "Node") in calls


GENERICS = """\
package p

import "example.com/m/lib"

func Zero[T any]() T { var z T; return z }

func Pair[K comparable, V any](k K, v V) {}

func use() {
	_ = Zero[int]()
	Pair[string, int]("a", 1)
	lib.Map[int](nil)
	lib.Map2[int, string](nil)
}
"""

LIB = """\
package lib

func Map[T any](xs []T) {}

func Map2[T, U any](xs []T) {}
"""


def test_a_generic_function_called_with_explicit_type_arguments(repo) -> None:
    root = repo({"go.mod": GO_MOD, "p.go": GENERICS, "lib/lib.go": LIB})
    calls = _calls_in(root, "p.go")
    assert (10, "p.go", "Zero") in calls  # `F[T]()`: an index expression, to tree-sitter
    assert (11, "p.go", "Pair") in calls  # `F[T, U](x)`: a conversion to a generic type
    assert (12, "lib/lib.go", "Map") in calls
    assert (13, "lib/lib.go", "Map2") in calls


COMPOSITES = """\
package p

type config struct{ name string }

func (c config) test(x int) {}

func use() {
	config{name: "a"}.test(1)
	config{
		name: "b",
	}.test(2)
}
"""


def test_a_method_of_a_composite_literal(repo) -> None:
    root = repo({"go.mod": GO_MOD, "p.go": COMPOSITES})
    calls = _calls_in(root, "p.go")
    assert (8, "p.go", "test") in calls
    assert (11, "p.go", "test") in calls  # the site is the method's name, after the literal


NAMED = """\
package p

type RefSpec string

func (s RefSpec) Validate() error { return nil }

type Hash [20]byte

func (h Hash) String() string { return "" }

type Item struct{}

func (i *Item) Size() int { return 0 }

type byKind []*Item

func (a byKind) Less(i, j int) bool { return a[i].Size() < a[j].Size() }

type Config struct {
	Fetch  []RefSpec
	Hashes []Hash
}

func use(c *Config, hs []Hash) {
	for _, r := range c.Fetch {
		r.Validate()
	}
	hs[0].String()
	c.Hashes[1].String()
}
"""


def test_an_element_of_a_container_of_a_named_non_struct_type(repo) -> None:
    root = repo({"go.mod": GO_MOD, "p.go": NAMED})
    calls = _calls_in(root, "p.go")
    assert (17, "p.go", "Size") in calls  # a named container indexed: its own element
    assert (26, "p.go", "Validate") in calls  # `[]RefSpec`: the element is a RefSpec
    assert (28, "p.go", "String") in calls  # a Hash's own elements are bytes
    assert (29, "p.go", "String") in calls


OLD = """\
//go:build !go1.18
// +build !go1.18

package tp

type Union struct{}

func (*Union) Len() int { return 0 }

func NewUnion() *Union { return &Union{} }
"""

NEW = """\
//go:build go1.18
// +build go1.18

package tp

import "go/types"

type Union = types.Union

func NewUnion() *Union { return types.NewUnion(nil) }
"""

PIPE = """\
package tp

func Pipe() {}
"""

PIPE_JS = """\
package tp

func Pipe() {}
"""

USE = """\
package main

import "example.com/m/tp"

func main() {
	u := tp.NewUnion()
	u.Len()
	tp.Pipe()
}
"""

USE_INSIDE = """\
package tp

func inside() {
	u := NewUnion()
	u.Len()
	Pipe()
}
"""


def test_a_name_declared_under_exclusive_build_constraints_is_the_default_build_s(repo) -> None:
    root = repo({"go.mod": GO_MOD, "tp/old.go": OLD, "tp/new.go": NEW, "tp/pipe.go": PIPE,
                 "tp/pipe_js.go": PIPE_JS, "tp/use.go": USE_INSIDE, "main.go": USE})
    outside = _calls_in(root, "main.go")
    assert (6, "tp/new.go", "NewUnion") in outside
    assert (6, "tp/old.go", "NewUnion") not in outside
    assert not any(name == "Len" for _, _, name in outside)  # types.Union's, not old.go's
    assert (8, "tp/pipe.go", "Pipe") in outside
    assert (8, "tp/pipe_js.go", "Pipe") not in outside
    inside = _calls_in(root, "tp/use.go")
    assert (4, "tp/new.go", "NewUnion") in inside
    assert not any(name == "Len" for _, _, name in inside)
    assert (6, "tp/pipe.go", "Pipe") in inside


def test_a_file_s_own_constraint_prefers_its_siblings_under_the_same_one(repo) -> None:
    other = OLD.replace("func NewUnion() *Union { return &Union{} }\n", "") + \
        "\nfunc first() { NewUnion() }\n"
    root = repo({"go.mod": GO_MOD, "tp/a_old.go": other, "tp/b_new.go": NEW,
                 "tp/c_old.go": "//go:build !go1.18\n\npackage tp\n\nfunc NewUnion() {}\n"})
    calls = _calls_in(root, "tp/a_old.go")
    assert (11, "tp/c_old.go", "NewUnion") in calls
    assert (11, "tp/b_new.go", "NewUnion") not in calls


ITER = """\
package p

type Iter interface {
	Next() error
}
"""

EMBEDDED = """\
package p

type Storer struct{}

func (s *Storer) Save() {}

type Wrapper struct {
	Iter
	*Storer
	name string
}

func (w *Wrapper) Next() error {
	w.Storer.Save()
	return w.Iter.Next()
}
"""


def test_an_embedded_field_is_named_by_its_type(repo) -> None:
    root = repo({"go.mod": GO_MOD, "iter.go": ITER, "p.go": EMBEDDED})
    calls = _calls_in(root, "p.go")
    assert (14, "p.go", "Save") in calls
    assert (15, "iter.go", "Next") in calls  # the interface's, not Wrapper's own
    assert (15, "p.go", "Next") not in calls


CHAINS = """\
package p

type Chunk struct{}

func (c *Chunk) Type() int { return 0 }

type Patch struct {
	Attributes []*Chunk
}

func (p *Patch) Chunks() []*Chunk { return nil }

type Result struct{}

func (r *Result) Patches() []*Patch { return nil }

func use(r *Result, ps []*Patch) {
	r.Patches()[0].Chunks()[1].Type()
	ps[0].Attributes[2].Type()
	ps[1:].Type()
}
"""


def test_a_chain_of_indexes_and_calls(repo) -> None:
    root = repo({"go.mod": GO_MOD, "p.go": CHAINS})
    calls = _calls_in(root, "p.go")
    assert (18, "p.go", "Type") in calls
    assert (18, "p.go", "Chunks") in calls
    assert (19, "p.go", "Type") in calls
    assert (20, "p.go", "Type") not in calls  # a slice of ps is no element of it


def test_indexed_paths() -> None:
    from knoxidx.parse.name_paths import indexed_path

    assert indexed_path("s.files[0].Name") == ("s", "files", "[]", "Name")
    assert indexed_path("mas[0].Attributes[1].IsSet") == (
        "mas", "[]", "Attributes", "[]", "IsSet")
    assert indexed_path("p.Patches()[0].Type") == ("p", "Patches()", "[]", "Type")
    assert indexed_path("m[k][j].run") == ("m", "[]", "[]", "run")
    assert indexed_path("fs[i]().run") == ()  # a call of an element
    assert indexed_path("xs[i:j].run") == ()
    assert indexed_path("x.run") == ()


FRAME = """\
package frame

type Frame struct{}

func New() (*Frame, error) { return &Frame{}, nil }

func (f *Frame) First() int { return 0 }
"""

SHADOWED = """\
package p

import "example.com/m/frame"

func use() {
	frame, err := frame.New()
	_ = err
	frame.First()
}
"""


def test_a_local_named_as_the_package_its_value_is_read_from(repo) -> None:
    root = repo({"go.mod": GO_MOD, "frame/frame.go": FRAME, "p.go": SHADOWED})
    calls = _calls_in(root, "p.go")
    assert (8, "frame/frame.go", "First") in calls  # the local, a *Frame from frame.New
