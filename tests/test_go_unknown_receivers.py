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
