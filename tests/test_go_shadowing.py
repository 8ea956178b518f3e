"""A Go local declared again (`x, err := x.Child()` in an inner block, `var i I = C(0)`): a call
through it is read with the declaration in scope where it sits, the last one before it whose
block holds it, and a declaration's written type stands over its value's."""

from __future__ import annotations

from pathlib import Path

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

GO_MOD = "module example.com/m\n\ngo 1.21\n"

SOURCE = """\
package p

type Root struct{}

func (r *Root) Child() (*Node, error) { return nil, nil }

func (r *Root) Walk() {}

type Node struct{}

func (n *Node) Walk() {}

type Walker interface{ Walk() }

func f() {
	x := &Root{}
	x.Walk() // the Root
	if true {
		x, err := x.Child()
		_ = err
		x.Walk() // the Node
	}
	x.Walk() // the Root again
	var w Walker = &Node{}
	w.Walk() // as declared
}
"""


def _line(text: str) -> int:
    return next(i for i, line in enumerate(SOURCE.splitlines(), 1) if line.endswith(text))


def _calls(root: Path) -> set[tuple[int, str, int]]:
    """(line, callee's name, callee's line) of every Calls edge in p.go."""
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(e["line"], nodes[e["target"]]["name"], nodes[e["target"]]["start_line"])
                for e in export.edges(idx.q)
                if e["type"] == "Calls" and e["path"] == "p.go"}


def test_a_local_declared_again_in_a_block_is_read_where_it_is_in_scope(repo) -> None:
    calls = {c for c in _calls(repo({"go.mod": GO_MOD, "p.go": SOURCE})) if c[1] == "Walk"}
    assert calls == {
        (_line("// the Root"), "Walk", 7),
        (_line("// the Node"), "Walk", 11),
        (_line("// the Root again"), "Walk", 7),
        (_line("// as declared"), "Walk", 13),
    }


OWN_VALUE = """\
package p

import "strings"

type key struct{ name string }

func minType(v int) int { return v }

func srcs(n int) []string { return nil }

func use(v int) {
	minType := minType(v)
	if srcs := strings.Join(srcs(v), " "); srcs != "" {
		_ = srcs
	}
	key := key{name: "k"}
	_, _ = minType, key
}
"""


def test_a_function_called_in_the_value_of_a_local_of_its_name_is_the_function(repo) -> None:
    build(root := repo({"go.mod": GO_MOD, "p.go": OWN_VALUE}))
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        calls = {(e["line"], nodes[e["target"]]["name"]) for e in export.edges(idx.q)
                 if e["type"] == "Calls" and e["path"] == "p.go"}
    assert (12, "minType") in calls  # `minType := minType(v)`
    assert (13, "srcs") in calls  # `if srcs := strings.Join(srcs(v), " ")`
    assert (16, "key") in calls  # `key := key{..}`


COPIES = """\
package p

type Command struct{}

func (c *Command) Parent() *Command { return nil }

func (c *Command) Run() {}

func (c *Command) walk(all []*Command) {
	for p := c; p != nil; p = p.Parent() {
		p.Run()
	}
	for _, p := range all {
		p.Run()
	}
	root := &Command{}
	cmd := root
	cmd.Run()
}
"""


def test_a_copy_of_a_name_is_bound_as_the_name_it_copies(repo) -> None:
    """`for p := c; ..`: p holds what c holds (here a Command), not what another declaration
    of p in the function does, nor nothing."""
    root = repo({"go.mod": GO_MOD, "p.go": COPIES})
    calls = {(line, name) for line, name, _ in _calls(root) if name in ("Parent", "Run")}
    assert calls == {(10, "Parent"), (11, "Run"), (14, "Run"), (18, "Run")}


SWITCHED = """\
package p

type Object interface{ ID() int }

type Ref struct{}

func (r *Ref) Name() string { return "" }

func get() (Object, error) { return nil, nil }

func walk(refs []*Ref, n int) {
	obj, _ := get()
	switch o := obj.(type) {
	case *Ref:
		o.Name()
	default:
		o.ID()
	}
	for _, r := range refs[:n] {
		r.Name()
	}
}
"""


def test_a_type_switch_value_and_a_range_over_a_slice_expression_are_typed(repo) -> None:
    """`switch o := obj.(type)`: in the default case o is what obj is (an Object); `range
    refs[:n]` ranges over refs's elements."""
    root = repo({"go.mod": GO_MOD, "p.go": SWITCHED})
    calls = {(line, name) for line, name, _ in _calls(root) if name in ("ID", "Name")}
    assert calls == {(15, "Name"), (17, "ID"), (20, "Name")}
