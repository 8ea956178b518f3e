"""JavaScript/TypeScript `super(...)` in a constructor calls the base class's `constructor`
(besides the base class itself, as before), across an import too; a base that declares no
constructor and has no base gives no such edge, and `this(...)` is no constructor call.
`new T(...)` calls T's `constructor` too, or where T declares none, its nearest base's (the
implicit one passes its arguments on)."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

SHAPE_TS = """\
export class Shape {
    constructor(readonly name: string) {}
}

export class Plain {}
"""

SQUARE_TS = """\
import { Shape, Plain } from "./shape";

export class Square extends Shape {
    constructor() {
        super("square");
    }
}

export class Derived extends Plain {
    constructor() {
        super();
    }
}
"""

STORE_JS = """\
class MemoryStore {
  constructor() {
    this.items = [];
  }
}

class FileStore extends MemoryStore {
  constructor(path) {
    super(path, "utf8");
    this.path = path;
  }

  reload() {
    this();
  }
}

module.exports = { MemoryStore, FileStore };
"""


def _calls(root) -> set[tuple[str, int, str, str]]:
    """(file, line, source, "target confidence") of every Calls edge, by qualified name."""
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(nodes[e["source"]]["path"], e["line"], nodes[e["source"]]["qualified_name"],
                 nodes[e["target"]]["qualified_name"] + " " + e["confidence"])
                for e in export.edges(idx.q) if e["type"] == "Calls"}


def test_super_calls_the_imported_base_constructor_in_typescript(repo) -> None:
    root = repo({"src/shape.ts": SHAPE_TS, "src/square.ts": SQUARE_TS})
    build(root)
    calls = {c[1:] for c in _calls(root) if c[0] == "src/square.ts"}
    assert calls == {
        (5, "src/square:Square.constructor", "src/shape:Shape inferred"),
        (5, "src/square:Square.constructor", "src/shape:Shape.constructor inferred"),
        (11, "src/square:Derived.constructor", "src/shape:Plain inferred"),
    }


def test_super_calls_the_base_constructor_whatever_its_arguments_in_javascript(repo) -> None:
    root = repo({"lib/store.js": STORE_JS})
    build(root)
    assert {c[1:] for c in _calls(root)} == {
        (9, "lib/store:FileStore.constructor", "lib/store:MemoryStore inferred"),
        (9, "lib/store:FileStore.constructor", "lib/store:MemoryStore.constructor inferred"),
    }


TYPES_TS = """\
export class ZodType {
  constructor(def: object) {}
}
export class ZodSet extends ZodType {}
export class ZodMap extends ZodType {
  constructor(def: object, extra: number) { super(def); }
}
export class Bare {}
export function make() {
  new Bare();
  const a = new ZodSet({});
  return new ZodMap({}, 1);
}
"""


def test_new_calls_the_constructor_that_runs_its_own_or_an_inherited_one(repo) -> None:
    root = repo({"src/types.ts": TYPES_TS})
    build(root)
    assert {c[1:] for c in _calls(root) if c[2] == "src/types:make"} == {
        (10, "src/types:make", "src/types:Bare exact"),
        (11, "src/types:make", "src/types:ZodSet exact"),
        (11, "src/types:make", "src/types:ZodType.constructor inferred"),  # inherited
        (12, "src/types:make", "src/types:ZodMap exact"),
        (12, "src/types:make", "src/types:ZodMap.constructor inferred"),
    }
