"""TypeScript names destructured from a call's result (`const { status, ctx } =
this._processInputParams(input)`) hold the types of the members the called function's declared
return type gives them, an inline object type (`{ status: ParseStatus; ctx: Context }`) or a
named one."""

from __future__ import annotations

from knoxidx.index import Index
from tests.helpers import build

STATUS = """
export class ParseStatus {
  dirty(): void {}
}
export class Context {
  report(): void {}
}
export interface Pair { status: ParseStatus; ctx: Context }
"""
SCHEMA = """
import { ParseStatus, Context, Pair } from "./status";

export class Schema {
  processInput(input: string): { status: ParseStatus; ctx: Context } {
    return { status: new ParseStatus(), ctx: new Context() };
  }

  named(): Pair {
    return { status: new ParseStatus(), ctx: new Context() };
  }

  parse(input: string) {
    const { status, ctx } = this.processInput(input);
    status.dirty();
    ctx.report();
  }

  check() {
    const { status } = this.named();
    status.dirty();
  }
}
"""


def callers(idx: Index, name: str) -> set[tuple[str, int]]:
    return {(c["name"], c["site"]["line"]) for c in idx.callers(name)["callers"]}


def test_names_destructured_from_a_call_hold_its_declared_result_members(repo) -> None:
    root = repo({"status.ts": STATUS, "schema.ts": SCHEMA})
    build(root)
    with Index.open(root) as idx:
        assert callers(idx, "ParseStatus.dirty") == {("parse", 15), ("check", 21)}
        assert callers(idx, "Context.report") == {("parse", 16)}
