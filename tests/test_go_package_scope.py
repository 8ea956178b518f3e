"""A Go method is no name of its package's scope: `T{}` and `pkg.T{}` build the type T even
where a method named T (of another type) is declared after it in the same file, and a bare
call `f()` never means a method named f."""

from __future__ import annotations

from knoxidx.index import Index
from tests.helpers import build

FORMAT = """\
package format

type Section struct{ subs []*Subsection }

type Subsection struct{ Name string }

func (s *Section) Subsection(name string) *Subsection { return nil }

type block struct{ n int }

func (s *Section) block() int { return 0 }

func newBlock() block { return block{n: 1} }

func block2() int { return 0 }

func (s *Section) block2() int { return block2() }
"""

CONFIG = """\
package config

import "example.com/g/format"

func raw() *format.Subsection { return &format.Subsection{} }
"""


def _callees(idx: Index, name: str) -> set[tuple[str, str]]:
    return {(c["qualified_name"], c["kind"]) for c in idx.callees(name)["callees"]}


def test_a_struct_literal_builds_the_type_not_a_same_named_method(repo) -> None:
    root = repo({"go.mod": "module example.com/g\n", "format/format.go": FORMAT,
                 "config/config.go": CONFIG})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "raw") == {("example.com/g/format.Subsection", "Class")}
        assert _callees(idx, "newBlock") == {("example.com/g/format.block", "Class")}
        assert _callees(idx, "Section.block2") == {("example.com/g/format.block2", "Function")}
