"""JavaScript and TypeScript functions declared under one name in several callbacks of a file
(`describe(.., () => { const make = () => ..; make(); })` twice): the index holds each at the
module scope, where the blocks they live in are not modelled, and a call goes to the one
declared last before it, the one in the call's own callback."""

from __future__ import annotations

from knoxidx.index import Index
from tests.helpers import build

SPEC = """
describe("first", () => {
  const make = () => 1;
  test("a", () => {
    make();
  });
});

describe("second", () => {
  const make = () => 2;
  make();
  make();
});
"""


def calling_lines(idx: Index, spec: str) -> set[int]:
    return {c["site"]["line"] for c in idx.callers(spec)["callers"]}


def test_a_call_goes_to_the_function_its_own_callback_declares(repo) -> None:
    root = repo({"spec.test.js": SPEC})
    build(root)
    with Index.open(root) as idx:
        assert calling_lines(idx, "spec.test.js:3") == {5}
        assert calling_lines(idx, "spec.test.js:10") == {11, 12}
