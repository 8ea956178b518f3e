"""Module namespaces held by values: `const z = await import("./schemas.js")` binds the
namespace as `import * as z` does, and `const z = { ...schemas, ...checks }` holds every
member of each namespace spread into it, so `z.string()` is schemas' string."""

from __future__ import annotations

from knoxidx.index import Index
from knoxidx.parse.extract import extract
from tests.helpers import build

SCHEMAS = """
export function string() { return 1; }
export function number() { return 2; }
"""
CHECKS = """
export function minLength(n: number) { return n; }
"""
LOCAL = """
import * as schemas from "./schemas.js";
import * as checks from "./checks.js";

const z = {
  ...schemas,
  ...checks,
  own() { return 3; },
};

export function build() {
  return [z.string(), z.minLength(1), z.own()];
}
"""
DYNAMIC = """
export async function load() {
  const z = await import("./schemas.js");
  const { number } = await import("./schemas.js");
  return [z.string(), number()];
}
"""


def test_dynamic_import_binds_the_namespace_and_its_names() -> None:
    facts = extract("dynamic.ts", DYNAMIC.encode(), "typescript")
    assert [(i.module, i.name, i.alias) for i in facts.imports] == [
        ("./schemas.js", "", "z"), ("./schemas.js", "number", "number")]


def test_namespaces_spread_into_an_object_or_imported_dynamically(repo) -> None:
    root = repo({"schemas.ts": SCHEMAS, "checks.ts": CHECKS, "local.ts": LOCAL,
                 "dynamic.ts": DYNAMIC})
    build(root)
    with Index.open(root) as idx:
        def callers(name: str) -> set[tuple[str, str, int]]:
            return {(c["name"], c["site"]["path"], c["site"]["line"])
                    for c in idx.callers(name)["callers"]}

        assert callers("schemas:string") == {("build", "local.ts", 12), ("load", "dynamic.ts", 5)}
        assert callers("checks:minLength") == {("build", "local.ts", 12)}
        assert callers("schemas:number") == {("load", "dynamic.ts", 5)}
        assert callers("local:z.own") == {("build", "local.ts", 12)}
