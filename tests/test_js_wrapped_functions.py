"""A function written in parentheses, cast with `as` or checked with `satisfies` is a function,
and calling it a call: zod's `export const validate: $Validate = ((schema, value) => ..) as
$Validate` was a constant, so its 38 calls were mere references. An object literal's methods,
written either way, are members of the variable holding it."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

PARSE_TS = """\
type V = (s: string) => string;
export const validate: V = ((s: string) => s) as V;
export const check = ((s: string) => s) satisfies V;
export const plain = (function (s: string) { return s; });
export const value = 1 as number;
"""

USE_TS = """\
import { validate, check, plain } from "./parse";
export function run() {
  validate("a");
  check("b");
  return plain("c");
}
"""


def test_wrapped_functions_are_functions_and_their_calls_calls(repo) -> None:
    root = repo({"src/parse.ts": PARSE_TS, "src/use.ts": USE_TS,
                 "lib/a.js": "const f = ((x) => x);\nfunction g() { return f(1); }\n"})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        kinds = {n["qualified_name"]: n["kind"] for n in nodes.values()}
        calls = {(e["path"], e["line"], nodes[e["target"]]["qualified_name"])
                 for e in export.edges(idx.q) if e["type"] == "Calls"}
    assert [kinds[name] for name in ("src/parse:validate", "src/parse:check", "src/parse:plain",
                                      "lib/a:f", "src/parse:value")] == \
        ["Function", "Function", "Function", "Function", "Constant"]
    assert {("src/use.ts", 3, "src/parse:validate"), ("src/use.ts", 4, "src/parse:check"),
            ("src/use.ts", 5, "src/parse:plain"), ("lib/a.js", 2, "lib/a:f")} <= calls


CACHE_JS = """\
const Cache = {
  enabled: false,
  add: function (key, file) {
    this.files[key] = file;
  },
  get(key) {
    return this.files[key];
  },
  remove: (key) => { delete Cache.files[key]; },
};
export { Cache };
"""

LOAD_JS = """\
import { Cache } from "./cache.js";
export function load(k) {
  Cache.add(k, 1);
  Cache.remove(k);
  return Cache.get(k);
}
"""


def test_an_object_literals_methods_are_its_members(repo) -> None:
    # three.js's `Cache.add(..)`: a function-valued property was no definition, and none of
    # the literal's methods (the shorthand `get(key) {..}` was one) a member of the constant
    root = repo({"lib/cache.js": CACHE_JS, "lib/load.js": LOAD_JS})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        calls = {(e["line"], nodes[e["target"]]["qualified_name"], e["confidence"])
                 for e in export.edges(idx.q) if e["type"] == "Calls" and e["path"] == "lib/load.js"}
    assert calls == {(3, "lib/cache:Cache.add", "exact"), (4, "lib/cache:Cache.remove", "exact"),
                     (5, "lib/cache:Cache.get", "exact")}
