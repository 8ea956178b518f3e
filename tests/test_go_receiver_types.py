"""Go receivers typed through what the code declares about them: a type assertion (`v :=
x.(*T)`, `x.(*T).m()`), a type switch's case of one type, a multi-value assignment's
results and a range loop's element. Each call once went unresolved: Go guesses no method of
a receiver of unknown type."""

from __future__ import annotations

from pathlib import Path

from knoxidx.graph import export
from knoxidx.index import Index
from knoxidx.parse.extract import extract
from knoxidx.parse.name_paths import result_types, type_path
from tests.helpers import build

GO_MOD = "module example.com/m\n\ngo 1.21\n"

SHAPES = """\
package shapes

type Circle struct{}

func (c *Circle) Area() float64 { return 0 }

type Square struct{}

func (s *Square) Area() float64 { return 1 }
func (s *Square) Side() float64 { return 1 }
"""


def _calls(root: Path) -> set[tuple[str, int, str, str]]:
    """(file, line, callee's file, callee's name) of every Calls edge."""
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(e["path"], e["line"], nodes[e["target"]]["path"], nodes[e["target"]]["name"])
                for e in export.edges(idx.q) if e["type"] == "Calls"}


def _calls_in(root: Path, path: str) -> set[tuple[int, str, int]]:
    """(line, callee's name, callee's start line) of every Calls edge in ``path``."""
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(e["line"], nodes[e["target"]]["name"], nodes[e["target"]]["start_line"])
                for e in export.edges(idx.q)
                if e["type"] == "Calls" and e["path"] == path}


ASSERTIONS = """\
package main

import "example.com/m/shapes"

type Local struct{}

func (l Local) Run() {}

func use(x any, y interface{}) {
	c := x.(*shapes.Circle)
	c.Area()
	if s, ok := y.(*shapes.Square); ok {
		s.Side()
	}
	l, _ := x.(Local)
	l.Run()
	x.(*shapes.Square).Side()
}
"""


def test_a_type_assertion_types_what_it_binds_and_the_chain_it_heads(repo) -> None:
    root = repo({"go.mod": GO_MOD, "shapes/shapes.go": SHAPES, "main.go": ASSERTIONS})
    calls = _calls(root)
    assert ("main.go", 11, "shapes/shapes.go", "Area") in calls
    assert ("main.go", 13, "shapes/shapes.go", "Side") in calls  # `if s, ok := ...; ok`
    assert ("main.go", 16, "main.go", "Run") in calls
    assert ("main.go", 17, "shapes/shapes.go", "Side") in calls  # `x.(*shapes.Square).Side()`


SWITCH = """\
package main

import "example.com/m/shapes"

func area(x any) float64 {
	switch v := x.(type) {
	case *shapes.Circle:
		return v.Area()
	case *shapes.Square:
		v.Side()
		return v.Area()
	case int, string:
		v.Area()
	default:
		v.Area()
	}
	return 0
}
"""


def test_a_type_switch_types_its_variable_in_each_case_of_one_type(repo) -> None:
    root = repo({"go.mod": GO_MOD, "shapes/shapes.go": SHAPES, "main.go": SWITCH})
    shapes = Path(root, "shapes/shapes.go").read_text().splitlines()
    circle_area = shapes.index("func (c *Circle) Area() float64 { return 0 }") + 1
    calls = _calls_in(root, "main.go")
    square_area = circle_area + 4
    assert (8, "Area", circle_area) in calls
    assert (8, "Area", square_area) not in calls  # each case its own type
    assert (10, "Side", square_area + 1) in calls
    assert (11, "Area", square_area) in calls
    assert (11, "Area", circle_area) not in calls
    # a case of several types, and the default: v is what was switched on, of unknown type
    assert not {c for c in calls if c[0] in (13, 15)}


ELEMENTS = """\
package main

import "example.com/m/shapes"

type Pkg struct {
	Squares []*shapes.Square
	byName  map[string]*shapes.Circle
}

func (p *Pkg) Name() string { return "" }

func Load() []*Pkg { return nil }

func walk(pkgs []*Pkg, p *Pkg, ch chan *shapes.Square, more ...*Pkg) {
	for _, q := range pkgs {
		q.Name()
	}
	for _, s := range p.Squares {
		s.Side()
	}
	for name, c := range p.byName {
		c.Area()
		_ = name
	}
	for _, l := range Load() {
		l.Name()
	}
	first := pkgs[0]
	first.Name()
	c, ok := p.byName["x"]
	c.Area()
	s, ok := <-ch
	s.Side()
	for _, m := range more {
		m.Name()
	}
	loaded := Load()
	for i := range loaded {
		loaded[i].Name()
	}
	_ = ok
}
"""


def test_a_range_an_index_and_a_receive_type_an_element_of_a_typed_container(repo) -> None:
    root = repo({"go.mod": GO_MOD, "shapes/shapes.go": SHAPES, "main.go": ELEMENTS})
    calls = _calls(root)
    assert ("main.go", 16, "main.go", "Name") in calls  # a parameter's `[]*Pkg`
    assert ("main.go", 19, "shapes/shapes.go", "Side") in calls  # a field's
    assert ("main.go", 22, "shapes/shapes.go", "Area") in calls  # a map's value
    assert ("main.go", 26, "main.go", "Name") in calls  # a call's result
    assert ("main.go", 29, "main.go", "Name") in calls  # `first := pkgs[0]`
    assert ("main.go", 31, "shapes/shapes.go", "Area") in calls  # `c, ok := m[k]`
    assert ("main.go", 33, "shapes/shapes.go", "Side") in calls  # `s, ok := <-ch`
    assert ("main.go", 35, "main.go", "Name") in calls  # a variadic parameter's


LITERAL_CONTAINERS = """\
package main

type Pkg struct{}

func (p *Pkg) Name() string { return "" }

func names() {
	pkgs := []*Pkg{{}}
	for _, p := range pkgs {
		p.Name()
	}
	var byPath = map[string]*Pkg{"a": {}}
	byPath["a"].Name()
	for _, p := range [...]Pkg{{}} {
		p.Name()
	}
	first, rest := pkgs[0], []Pkg{}
	rest[0].Name()
	_ = first
}
"""


def test_a_literal_of_a_container_types_its_elements(repo) -> None:
    """`xs := []*T{..}`, `var m = map[K]*T{..}` and a range over `[...]T{..}` type their
    elements as `var xs []*T` does: a literal's container type was read for no binding."""
    root = repo({"go.mod": GO_MOD, "main.go": LITERAL_CONTAINERS})
    calls = _calls_in(root, "main.go")
    assert (10, "Name", 5) in calls  # a range over `pkgs := []*Pkg{..}`
    assert (13, "Name", 5) in calls  # an index of `var byPath = map[string]*Pkg{..}`
    assert (15, "Name", 5) in calls  # a range over the literal itself
    assert (18, "Name", 5) in calls  # the second of two values


NAMED = """\
package main

type Item struct{}

func (i Item) Len() int { return 0 }

type Items []Item

func (s Items) Len() int { return len(s) }

func count(items Items, all []Items) int {
	n := 0
	for _, it := range items {
		n += it.Len()
	}
	for _, group := range all {
		n += group.Len()
	}
	return n
}
"""


def test_an_element_of_a_named_container_type_is_not_the_container(repo) -> None:
    root = repo({"go.mod": GO_MOD, "main.go": NAMED})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        calls = {(e["line"], nodes[e["target"]]["start_line"]) for e in export.edges(idx.q)
                 if e["type"] == "Calls" and nodes[e["target"]]["name"] == "Len"}
    # `it` is an Item: a named container's element is its element type's. `group` is an
    # Items, but `[]Items` reads as Items as a declared `Items` does, and its element is read
    # as an Item too: containers of named containers are rare (a handful of declarations in
    # x-tools and go-git), the container indexed or ranged itself is common
    assert (14, 5) in calls
    assert (14, 9) not in calls


RESULTS = """\
package main

type Node struct{ left *Node }

func (n *Node) decref() {}

func split(n *Node) (left, right *Node) { return n, n }

func find(n *Node) (found *Node, err error) { return n, nil }

func use(root *Node) {
	l, r := split(root)
	l.decref()
	f, _ := find(root)
	f.decref()
	child := root.left
	child.decref()
	_ = r
}
"""


def test_named_results_and_a_copied_field_type_what_they_bind(repo) -> None:
    root = repo({"go.mod": GO_MOD, "main.go": RESULTS})
    calls = _calls(root)
    assert ("main.go", 13, "main.go", "decref") in calls  # `(left, right *Node)`: a Node
    assert ("main.go", 15, "main.go", "decref") in calls  # `(found *Node, err error)`
    assert ("main.go", 17, "main.go", "decref") in calls  # `child := root.left`


LATER_RESULTS = """\
package main

type Node struct{}

func (n *Node) decref() {}

type Stats struct{}

func (s Stats) Report() {}

func split() (left, mid, right *Node) { return nil, nil, nil }

func compute() (int, Stats) { return 0, Stats{} }

func use() {
	_, mid, right := split()
	mid.decref()
	right.decref()
	_, stats := compute()
	stats.Report()
}
"""


def test_a_later_result_of_a_call_types_its_name(repo) -> None:
    root = repo({"go.mod": GO_MOD, "main.go": LATER_RESULTS})
    calls = _calls(root)
    assert ("main.go", 17, "main.go", "decref") in calls  # `(left, mid, right *Node)`
    assert ("main.go", 18, "main.go", "decref") in calls
    assert ("main.go", 20, "main.go", "Report") in calls  # `(int, Stats)`: the second


INTERFACE_RESULTS = """\
package main

type Label struct{}

func (l Label) Valid() bool { return true }

type Map interface {
	Find(key string) Label
}

func get(lm Map) bool {
	if t := lm.Find("k"); t.Valid() {
		return true
	}
	return lm.Find("j").Valid()
}
"""


def test_an_interface_method_returns_its_declared_result(repo) -> None:
    root = repo({"go.mod": GO_MOD, "main.go": INTERFACE_RESULTS})
    calls = _calls(root)
    assert ("main.go", 12, "main.go", "Valid") in calls
    assert ("main.go", 15, "main.go", "Valid") in calls


PRIVATE = """\
class Maker {
  #make() { return new Maker(); }
  run() {}
  start() {
    const made = this.#make();
    made.run();
  }
}
"""


def test_a_private_name_is_no_result_number(repo) -> None:
    # `#` marks a call's later result in a binding, and starts a JavaScript private name
    root = repo({"maker.js": PRIVATE})
    calls = _calls(root)
    assert ("maker.js", 5, "maker.js", "#make") in calls  # its file resolved, not failed


BUILTINS = """\
package main

type Graph map[string][]string

func (g Graph) addEdge(a, b string) {}

type Set struct{}

func (s *Set) Insert(x int) {}

func build() {
	g := make(Graph)
	g.addEdge("a", "b")
	s := new(Set)
	s.Insert(1)
	sets := make([]*Set, 2)
	sets[0].Insert(2)
	first := sets[0]
	first.Insert(3)
}
"""


def test_new_and_make_type_what_they_bind(repo) -> None:
    root = repo({"go.mod": GO_MOD, "main.go": BUILTINS})
    calls = _calls(root)
    assert ("main.go", 13, "main.go", "addEdge") in calls  # `make(Graph)`: a Graph
    assert ("main.go", 15, "main.go", "Insert") in calls  # `new(Set)`: a *Set
    assert ("main.go", 19, "main.go", "Insert") in calls  # an element of `make([]*Set, 2)`


INDEXED = """\
package main

type Section struct{}

func (s *Section) Copy() *Section { return s }

type File struct{ Sections []*Section }

func copyAll(f *File, all map[string][]*Section) {
	f.Sections[0].Copy()
	all["x"][1].Copy()
	sections := f.Sections
	sections[len(sections)-1].Copy()
}
"""


def test_a_member_of_an_indexed_element_is_the_element_type_s(repo) -> None:
    root = repo({"go.mod": GO_MOD, "main.go": INDEXED})
    calls = _calls(root)
    assert ("main.go", 10, "main.go", "Copy") in calls  # a field's element
    assert ("main.go", 11, "main.go", "Copy") in calls  # an element of a map's value
    assert ("main.go", 13, "main.go", "Copy") in calls  # a local's


NESTED = """\
package main

import "example.com/m/shapes"

func nested(x, y any) {
	switch v := x.(type) {
	case *shapes.Square:
		switch v := y.(type) {
		case *shapes.Circle:
			v.Area()
		}
		v.Side()
	}
	switch v := y.(type) {
	case *shapes.Square:
		v.Side()
	}
}
"""


def test_a_type_switch_inside_another_narrows_its_own_cases_only(repo) -> None:
    root = repo({"go.mod": GO_MOD, "shapes/shapes.go": SHAPES, "main.go": NESTED})
    calls = _calls_in(root, "main.go")
    assert calls == {(10, "Area", 5), (12, "Side", 10), (16, "Side", 10)}


def test_results_read_one_by_one_also_when_their_text_is_cut_short() -> None:
    # the tuple's first type is what type_path reads too (one reading of Go's results); a
    # text without its closing parenthesis was one type, `(a int, b error`
    assert result_types("(T, error)") == ["T", "error"]
    assert result_types("(left, right *Node)") == ["*Node", "*Node"]
    assert result_types("(*Packfile, func())") == ["*Packfile", "func()"]
    assert result_types("(a int, b error") == ["int", "error"]
    assert type_path("(n int, err error)", True) == ("int",)


FIELD_ADDRESSES = """\
package main

type Labels struct{}

func (l *Labels) Add() {}

type Bits struct{}

func (b *Bits) Set() {}

type Obj struct {
	labels Labels
	bits   Bits
}

func use(o, p *Obj) {
	lp := &o.labels
	lp.Add()
	x, y := &o.bits, &p.bits
	x.Set()
	y.Set()
	a, b := o.labels, p.bits
	a.Add()
	b.Set()
}
"""


def test_a_field_s_address_and_each_value_of_a_multi_value_assignment_type_their_names(
        repo) -> None:
    root = repo({"go.mod": GO_MOD, "main.go": FIELD_ADDRESSES})
    calls = _calls(root)
    assert ("main.go", 18, "main.go", "Add") in calls  # `lp := &o.labels`
    assert ("main.go", 20, "main.go", "Set") in calls  # `x, y := &o.bits, &p.bits`
    assert ("main.go", 21, "main.go", "Set") in calls
    assert ("main.go", 23, "main.go", "Add") in calls  # `a, b := o.labels, p.bits`
    assert ("main.go", 24, "main.go", "Set") in calls


VAR_VALUES = """\
package main

type Command struct{ Use string }

func (c *Command) AddCommand(cmds ...*Command) {}

type Flags struct{}

func (f *Flags) Parse() {}

func newCommand() (*Command, *Flags) { return nil, nil }
func newRoot() *Command            { return nil }

var root = &Command{Use: "root"}

func (c *Command) Execute() {
	root.AddCommand(c)
}

func use(o *Command) {
	var rootCmd = &Command{Use: "root"}
	rootCmd.AddCommand(&Command{Use: "x"})
	var a, b = &Command{}, Command{}
	a.AddCommand()
	b.AddCommand()
	var c, f = newCommand()
	c.AddCommand()
	f.Parse()
	var n = new(Flags)
	n.Parse()
	var v = o.Use
	_ = v
	s, t := Command{}, &Flags{}
	s.AddCommand()
	t.Parse()
	var g, h = newCommand(), newRoot()
	h.AddCommand()
	_ = g
}
"""


def test_a_var_with_values_binds_its_names_as_the_same_short_declaration_does(repo) -> None:
    """`var x = &T{}` (in a function or at the top level), `var a, b = v, w`, `var c, f = g()`
    and `var n = new(T)` bind as their `:=` does: only a `var` with a value of a call was read,
    and it bound every name to the call's first result."""
    root = repo({"go.mod": GO_MOD, "main.go": VAR_VALUES})
    calls = _calls_in(root, "main.go")
    assert (17, "AddCommand", 5) in calls  # the top level's `var root = &Command{..}`
    assert (22, "AddCommand", 5) in calls  # `var rootCmd = &Command{..}`
    assert (24, "AddCommand", 5) in calls  # `var a, b = &Command{}, Command{}`
    assert (25, "AddCommand", 5) in calls
    assert (27, "AddCommand", 5) in calls  # `var c, f = newCommand()`: f is the second result
    assert (28, "Parse", 9) in calls
    assert (30, "Parse", 9) in calls  # `var n = new(Flags)`
    assert (34, "AddCommand", 5) in calls  # `s, t := Command{}, &Flags{}`: t is the second's
    assert (35, "Parse", 9) in calls
    # `var g, h = newCommand(), newRoot()`: h is newRoot's, no result of newCommand's
    assert (37, "AddCommand", 5) in calls


PARENTHESIZED_LITERALS = """\
package main

type Option struct{ Key string }

func (o *Option) IsKey(k string) bool { return o.Key == k }

func use() bool {
	a := (&Option{Key: "key"}).IsKey("key")
	b := (Option{}).IsKey("")
	return a && b && Option{}.IsKey("")
}
"""


def test_a_method_of_a_parenthesized_literal_or_its_address_is_its_type_s(repo) -> None:
    """`(&T{..}).m()` and `(T{}).m()` call T's m, as `T{}.m()` does (the literal was read in
    the selector's operand only when it stood there bare)."""
    root = repo({"go.mod": GO_MOD, "main.go": PARENTHESIZED_LITERALS})
    calls = _calls_in(root, "main.go")
    assert {(line, name, start) for line, name, start in calls if name == "IsKey"} == {
        (8, "IsKey", 5), (9, "IsKey", 5), (10, "IsKey", 5)}


def test_a_later_name_of_several_values_is_no_result_of_the_first() -> None:
    """`x, y := f(), g()`: y is g's; it was bound to f's second result too (the pattern for
    `x, y := f()` did not ask that the call be the only value)."""
    src = (b"package main\n\nfunc use() {\n\tx, y := f(), g()\n\tvar a, b = f(), g()\n"
           b"\t_, _, _, _ = x, y, a, b\n}\n")
    bound = sorted((b.name, b.type_path) for b in extract("main.go", src, "go").bindings)
    assert bound == [("a", ("f",)), ("b", ("g",)), ("x", ("f",)), ("y", ("g",))]
