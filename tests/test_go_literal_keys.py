"""A key of a Go struct literal (`Options{name: v}`) names a field of the struct, not the
package variable of its name; a key of a map literal, of a named map type's too, is an
expression and reads the names in scope."""

from __future__ import annotations

from pathlib import Path

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

GO_MOD = "module example.com/m\n\ngo 1.21\n"

SOURCE = """\
package p

var name = "x"

type Options struct {
	name string
}

type Names map[string]int

func literals() []Options {
	o := Options{name: "a"}
	_ = o
	m := map[string]int{name: 1}
	_ = m
	n := Names{name: 2}
	_ = n
	return []Options{{name: "b"}}
}
"""


def _uses(root: Path) -> set[tuple[int, str]]:
    """(line, target's qualified name) of every Uses edge in p.go."""
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(e["line"], nodes[e["target"]]["qualified_name"])
                for e in export.edges(idx.q) if e["type"] == "Uses" and e["path"] == "p.go"}


def test_a_struct_literal_key_is_the_field_and_a_map_literal_key_the_variable(repo) -> None:
    uses = {use for use in _uses(repo({"go.mod": GO_MOD, "p.go": SOURCE}))
            if use[1].endswith("name")}
    assert uses == {(12, "example.com/m.Options.name"), (14, "example.com/m.name"),
                    (16, "example.com/m.name")}
