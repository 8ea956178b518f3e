"""Every name a Go declaration binds to a call's results holds its own result, however many
there are (`a, b, c, d := four()`, `_, _, _, e, err := five()`, `var f, g, h, i = four()`):
a method called on the fourth or fifth is found as on the first."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

SOURCE = """\
package p

type A struct{}

func (a *A) Run() {}

type B struct{}

func (b *B) Stop() {}

func four() (*A, *B, *A, *B) { return nil, nil, nil, nil }

func five() (a *A, b *B, c *A, d *B, err error) { return }

func use() {
	a, b, c, d := four()
	a.Run()
	b.Stop()
	c.Run()
	d.Stop()
	_, _, _, e, err := five()
	e.Stop()
	_ = err
	var f, g, h, i = four()
	i.Stop()
	h.Run()
	_, _ = f, g
}
"""


def test_each_name_holds_its_own_result_of_a_call(repo) -> None:
    root = repo({"go.mod": "module example.com/m\n\ngo 1.21\n", "p.go": SOURCE})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        calls = {(e["line"], nodes[e["target"]]["qualified_name"].rsplit(".", 2)[-2:][0])
                 for e in export.edges(idx.q)
                 if e["type"] == "Calls" and nodes[e["target"]]["name"] in ("Run", "Stop")}
        unresolved = idx.store.conn.execute(
            "SELECT name FROM unresolved WHERE kind = 'call'").fetchall()
    assert calls == {(17, "A"), (18, "B"), (19, "A"), (20, "B"), (22, "B"), (25, "B"),
                     (26, "A")}
    assert unresolved == []


OUTSIDE = """\
package p

import (
	"bytes"
	"os"
)

func open() (*os.File, error) { return nil, nil }

func buffers() (int, string, error, *bytes.Buffer) { return 0, "", nil, nil }

func use() {
	f, err := open()
	f.Close()
	_ = err
	_, _, _, b := buffers()
	b.Reset()
}
"""


def test_a_result_of_a_type_outside_the_index_is_said_external(repo) -> None:
    """The first of a function's several results and its fourth, each declared of a
    standard library's type: a call of its method is "external", not "unknown"."""
    root = repo({"go.mod": "module example.com/m\n\ngo 1.21\n", "p.go": OUTSIDE})
    build(root)
    with Index.open(root) as idx:
        reasons = dict(idx.store.conn.execute(
            "SELECT name, reason FROM unresolved WHERE kind = 'call'").fetchall())
    assert reasons == {"f.Close": "external", "b.Reset": "external"}
