"""A Go method called on a receiver whose type knoxidx cannot tell is left unresolved, not
linked to the one method of that name in the project: half of such guesses on x-tools were a
standard-library method named like a method of the corpus (`w.Header()` ->
cmd/godoc's `Header`)."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

MAIN = """\
package main

import "net/http"

type Page struct{}

func (p *Page) Header() string { return "" }

func serve(writers []http.ResponseWriter) {
	for _, w := range writers {
		w.Header()
	}
}

func render(p *Page) string {
	return p.Header()
}
"""


def test_a_method_of_a_receiver_of_unknown_type_is_no_guess(repo) -> None:
    root = repo({"go.mod": "module example.com/m\n\ngo 1.21\n", "main.go": MAIN})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        calls = {(e["line"], nodes[e["target"]]["name"]) for e in export.edges(idx.q)
                 if e["type"] == "Calls"}
    assert (11, "Header") not in calls  # `w.Header()`: a library's ResponseWriter's
    assert (16, "Header") in calls  # a receiver of known type still resolves


REASONS = """\
package main

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"example.com/m/util"
	"github.com/spf13/pflag"
)

type Command struct{ flags *pflag.FlagSet }

func (c *Command) Flags() *pflag.FlagSet { return c.flags }
func (c *Command) Check() error         { return nil }

type Wrapped struct{ *bytes.Buffer }

type Local struct{}

func min(a, b int) int { return a }

func TestReasons(t *testing.T) {
	t.Errorf("x")
	n := len("abc")
	c := &Command{}
	c.Flags().String("a", "", "")
	f := c.Flags()
	f.Parse(nil)
	err := c.Check()
	_ = err.Error()
	var buf bytes.Buffer
	buf.WriteString("x")
	w := &Wrapped{}
	w.Grow(n)
	var l Local
	l.Missing()
	undeclared()
	_ = min(n, 2)
}

func shadowed() {
	util.Gone()
	out, _ := os.Create("x")
	out.Close()
	kept := slices.Clone([]*Local{})
	kept[0].Missing()
	lib := pflag.NewFlagSet("x", 0)
	lib.Parse(nil)
	func() {
		util := bytes.Buffer{}
		util.Reset()
	}()
}
"""

UTIL = "package util\n\nfunc Here() {}\n"

DOT_IMPORTED = """\
package main

import (
	. "gopkg.in/check.v1"
)

type S struct{}

var _ = Suite(&S{})

func (s *S) TestIt(c *C) {
	c.Assert(1, Equals, 1)
}
"""


def _reasons(root) -> dict[str, str]:
    """The reason each unresolved call is stored with, by its name as written."""
    with Index.open(root) as idx:
        return dict(idx.store.conn.execute(
            "SELECT name, reason FROM unresolved WHERE kind = 'call'").fetchall())


def test_calls_outside_the_index_are_said_external_not_unknown(repo) -> None:
    """A method of a receiver whose type is a library's (declared, or returned by a method of
    the index, or embedded), of the predeclared `error`, and a builtin function: "external";
    a method the index's own type lacks and an undeclared function stay "unknown"."""
    root = repo({"go.mod": "module example.com/m\n\ngo 1.21\n", "main_test.go": REASONS,
                 "util/util.go": UTIL, "check_test.go": DOT_IMPORTED})
    build(root)
    assert _reasons(root) == {
        "t.Errorf": "external",  # a parameter of a library's type
        "len": "external",  # a builtin
        "c.Flags().String": "external",  # what a method of the index returns
        "f.Parse": "external",  # a local bound to that
        "err.Error": "external",  # the predeclared error
        "buf.WriteString": "external",
        "w.Grow": "external",  # a method of the embedded library type
        "l.Missing": "unknown",  # the index's own type: a miss, no library's
        "undeclared": "unknown",
        # the package of the index, read before the closure's local of its name: a miss;
        # that local (a bytes.Buffer) in the closure
        "util.Gone": "unknown",
        "util.Reset": "external",
        "Suite": "external",  # what a package outside the index dot-imported declares
        "c.Assert": "external",  # ... and a parameter of its type
        "os.Create": "external", "slices.Clone": "external", "pflag.NewFlagSet": "external",
        "out.Close": "external",  # what a standard package's function returns
        "kept.[].Missing": "unknown",  # ... but for one generic over the caller's types
        "lib.Parse": "unknown",  # what a library's returns may be of any type
    }  # (the package's own `min` shadows the builtin: resolved)


LOGGER = """\
package main

import "testing"

type Logger struct{}

func (l *Logger) Errorf(format string) {}

func TestLog(t *testing.T) {
	t.Errorf("x")
}

func use(v interface{ Errorf(string) }) {
	v.Errorf("y")
}
"""


def test_refs_lists_no_library_call_as_a_possible_caller(repo) -> None:
    """`t.Errorf` of a `*testing.T` is the library's: no possible caller of the project's
    `Logger.Errorf`, where a call on a receiver of no known type still is."""
    root = repo({"go.mod": "module example.com/m\n\ngo 1.21\n", "main_test.go": LOGGER})
    build(root)
    with Index.open(root) as idx:
        possible = idx.refs("Logger.Errorf")["possible"]
    assert [(h["site"]["line"], h["called_as"]) for h in possible] == [(14, "v.Errorf")]
