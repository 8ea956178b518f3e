"""TypeScript values typed through an interface or an object type: its properties are fields
with declared types, and React's destructured props (in the parameter list or in the body)
take their types from them."""

from __future__ import annotations

from knoxidx.index import Index
from tests.helpers import build

BOARD = """
export class Board {
  pending(): number { return 1; }
}
export class Logger {
  info(message: string): void {}
}
"""
APP = """
import { Board, Logger } from "./board";

interface Props { board: Board; title: string }
type Other = { board: Board };
interface Options { logger: Logger; retries?: number }

export function App({ board, title }: Props) {
  return board.pending();
}

export function Side({ board }: Other) {
  return board.pending();
}

export function Inline({ board }: { board: Board }) {
  return board.pending();
}

export function run(opts: Options) {
  opts.logger.info("go");
}

export function Body(props: Props) {
  const { board } = props;
  return board.pending();
}
"""


def test_members_of_interfaces_and_object_types_carry_their_types(repo) -> None:
    root = repo({"board.ts": BOARD, "App.tsx": APP})
    build(root)
    with Index.open(root) as idx:
        callers = {(c["name"], c["confidence"]) for c in idx.callers("Board.pending")["callers"]}
        assert callers == {("App", "inferred"), ("Side", "inferred"), ("Inline", "inferred"),
                           ("Body", "inferred")}
        assert [(c["name"], c["site"]["line"]) for c in idx.callers("Logger.info")["callers"]] \
            == [("run", 21)]
        fields = {s["qualified_name"] for s in idx.symbols("*", "Variable", 100)}
        assert {"App:Props.board", "App:Props.title", "App:Other.board",
                "App:Options.logger", "App:Options.retries"} <= fields
        # an inline object type's properties are no definitions of the function they type
        assert not any(f.startswith("App:Inline") for f in fields)
