"""A JavaScript/TypeScript class declaration binds its name in its block only. Two classes of
one name declared in different callbacks (`test("a", () => { class Test {} })`, zod's tests)
have no scope of their own in the index, so a reference to the name cannot say which one it
means: no Extends or Calls edge to either, rather than one to the last. A single class there
is still found, and a Python module's later class of a name still wins."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

TWO_TESTS = """\
import { test } from "vitest";

test("instanceof", () => {
  class Test {}
  class Subtest extends Test {}
  new Test();
});

test("custom error", () => {
  class Test {
    name!: string;
  }
  class Other {}
  class Derived extends Other {}
});
"""
PYTHON = """\
import sys

if sys.version_info < (3,):
    class Base:
        pass
else:
    class Base:
        pass


class Child(Base):
    pass
"""


def _links(root) -> set[tuple[str, str, int, str, int]]:
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(e["type"], e["path"], e["line"], nodes[e["target"]]["name"],
                 nodes[e["target"]]["start_line"])
                for e in export.edges(idx.q) if e["type"] in ("Extends", "Calls")}


def test_same_named_classes_in_two_callbacks_are_neither_guessed(repo) -> None:
    root = repo({"instanceof.test.ts": TWO_TESTS, "compat.py": PYTHON})
    build(root)
    links = _links(root)
    ts_links = {link for link in links if link[1] == "instanceof.test.ts"}
    assert not {link for link in ts_links if link[3] == "Test"}
    assert ("Extends", "instanceof.test.ts", 14, "Other", 13) in ts_links
    assert ("Extends", "compat.py", 11, "Base", 7) in links
