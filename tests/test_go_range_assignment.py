"""Go's `for k, v = range xs` (`=`, not `:=`) assigns variables declared before it, a local of
the function or a package variable: the loop declares no new ones, and a call through such a
name, in the loop or past it, is of the type it was declared."""

from __future__ import annotations

from pathlib import Path

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

GO_MOD = "module example.com/m\n\ngo 1.21\n"

SOURCE = """\
package p

type Key struct{}

func (k Key) Describe() string { return "" }

type Value struct{}

func (v *Value) Describe() string { return "" }

var current Key

func walk(m map[Key]*Value, keys []Key) {
	var k Key
	var v *Value
	for k = range m {
		k.Describe()
	}
	k.Describe()
	for k, v = range m {
		k.Describe()
		v.Describe()
	}
	for _, current = range keys {
		current.Describe()
	}
}
"""


def _describe_calls(root: Path) -> set[tuple[int, str]]:
    """(line, the callee's type) of every Calls edge to a Describe in p.go."""
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(e["line"], nodes[e["target"]]["qualified_name"].split(".")[-2])
                for e in export.edges(idx.q)
                if e["type"] == "Calls" and e["path"] == "p.go"
                and nodes[e["target"]]["name"] == "Describe"}


def test_a_range_that_assigns_declares_no_new_locals(repo) -> None:
    root = repo({"go.mod": GO_MOD, "p.go": SOURCE})
    assert _describe_calls(root) == {(17, "Key"), (19, "Key"), (21, "Key"), (22, "Value"),
                                     (25, "Key")}
