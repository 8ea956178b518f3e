"""TypeScript callbacks' untyped parameters take the types their context gives them: the
called function's declared parameter (`indented(fn: (doc: Doc) => void)` makes `d` in
`doc.indented((d) => ..)` a Doc), or an element of the collection whose `forEach`, `map`,
`filter`... is called (`Array<Query>`, `Query[]`, `Set<Query>`), through `filter` chains and
locals holding a call's result. A name two callbacks of one function bind to different
types stays untyped."""

from __future__ import annotations

from knoxidx.index import Index
from knoxidx.languages.js.hooks import callback_parameter, element_type
from tests.helpers import build

DOC = """
export class Doc {
  write(line: string): void {}
  indented(fn: (doc: Doc) => void): void { fn(this); }
}

export class Query {
  fetch(): void {}
}

export class Other {
  fetch(): void {}
}
"""
USE = """
import { Doc, Query, Other } from "./doc";

export class Cache {
  #queries: Array<Query> = [];
  others: Other[];

  all(): Query[] { return this.#queries; }

  compile(doc: Doc) {
    doc.indented((d) => {
      d.write("a");
      d.indented((d2) => d2.write("b"));
    });
  }

  each() {
    this.#queries.forEach((q) => q.fetch());
    const found = this.all();
    found.filter((f) => f.fetch()).map((g) => g.fetch());
  }

  mixed() {
    this.#queries.forEach((x) => x.fetch());
    this.others.forEach((x) => x.fetch());
  }
}
"""


def test_declared_function_types_and_collections_read() -> None:
    assert callback_parameter("(doc: Doc) => void") == "Doc"
    assert callback_parameter("(Doc)") == ""  # no function type
    assert callback_parameter("(x) => void") == ""
    assert element_type("#queries: Array<Query<A, B>> = []") == "Query<A, B>"
    assert element_type("readonly Query[]") == "Query"
    assert element_type("Map<string, Query>") == "Query"
    assert element_type("Set<A | B>") == ""


def test_callback_parameters_typed_by_their_context(repo) -> None:
    root = repo({"doc.ts": DOC, "use.ts": USE})
    build(root)
    with Index.open(root) as idx:
        def sites(name: str) -> set[tuple[str, int]]:
            return {(c["name"], c["site"]["line"]) for c in idx.callers(name)["callers"]}

        assert sites("Doc.write") == {("compile", 12), ("compile", 13)}
        assert sites("Query.fetch") == {("each", 18), ("each", 20)}
        # `x` is bound by two callbacks of other types: neither is claimed
        assert sites("Other.fetch") == set()
