"""The fields of a Go struct type written in place inside a function (`tests := []struct{ name
string; run func() }{..}`, a parameter's `opts struct{ conn *Conn }`) are no names of the
package: a package function or variable of the same name keeps its calls and reads, and a key
of such a literal (`{name: "a", run: nil}`) reads no package name."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

SOURCE = """\
package p

type Conn struct{}

func (c *Conn) Close() {}

var name = "pkg"

func run() int { return 0 }

func TestThings(opts struct{ conn *Conn }) {
	tests := []struct {
		name string
		run  func() int
	}{
		{name: "a", run: run},
	}
	for _, tt := range tests {
		_ = tt.name
	}
	run()
	_ = name
	m := map[string]int{name: 1}
	_ = m
}
"""


def test_a_struct_written_in_a_function_declares_no_package_names(repo) -> None:
    root = repo({"go.mod": "module example.com/m\n\ngo 1.21\n", "p.go": SOURCE})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        named = sorted((n["qualified_name"], n["start_line"]) for n in nodes.values()
                       if n.get("name") in ("name", "run", "conn"))
        edges = {(e["type"], e["line"], nodes[e["target"]]["start_line"])
                 for e in export.edges(idx.q)
                 if e["type"] in ("Calls", "Uses", "References") and e["path"] == "p.go"
                 and nodes[e["target"]].get("name") in ("name", "run")}
    assert named == [("example.com/m.name", 7), ("example.com/m.run", 9)]
    # `run: run`'s value, the call of run, the read of name and the map's key: the package's
    assert edges == {("References", 16, 9), ("Calls", 21, 9), ("Uses", 22, 7), ("Uses", 23, 7)}
