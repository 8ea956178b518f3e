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


GLOBALS = """
import { expect, it, vi } from "vitest";
import { helper } from "./helper";

export function run(xs: string[]) {
  const seen = new Map();
  console.log(JSON.stringify(xs));
  Object.keys(seen).map((k) => k);
  Array.from(xs).forEach((x) => x);
  Object.assign({}, seen).own();
  parseInt("1");
  fetch("/x");
  helper().go();
}

it("runs", () => {
  expect(run([])).toBe(undefined);
  vi.fn().mockReturnValue(1);
  vi.mocked(helper).mockClear();
});
"""
HELPER = """
export function helper() { return 1; }
export function fetch(url: string) { return url; }

export function walk({ it }) {
  it.next();
}
"""


def test_globals_and_a_test_framework_s_assertions_are_external_not_unknown(repo) -> None:
    root = repo({"src/app.ts": GLOBALS, "src/helper.ts": HELPER})
    build(root)
    with Index.open(root) as idx:
        reasons = dict(idx.store.conn.execute("select name, reason from unresolved").fetchall())
    assert reasons["Map"] == reasons["parseInt"] == "external"
    assert reasons["console.log"] == reasons["JSON.stringify"] == "external"
    # a builtin's method on what a global returns (an array), not on what it passes back
    assert reasons["Object.keys().map"] == reasons["Array.from().forEach"] == "external"
    assert reasons["Object.assign().own"] == "unknown"
    assert reasons["fetch"] == "unknown"  # the project defines a fetch
    assert reasons["helper().go"] == "unknown"
    # vitest's, imported from its package
    assert reasons["expect().toBe"] == reasons["vi.fn().mockReturnValue"] == "external"
    assert reasons["vi.mocked().mockClear"] == "unknown"  # what it hands back is the project's
    assert reasons["it.next"] == "unknown"  # a parameter named like the runner's `it`
