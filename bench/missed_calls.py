"""``python -m bench.missed_calls CORPUS WORKDIR``: the oracle's call rows no knoxidx edge
matches, each with its call site's text, and the edges no row matches (``WORKDIR/wrong.txt``),
matched as ``accuracy.py`` matches them: for classifying what recall and precision lose.

Runs the corpus's oracle once (kept in ``WORKDIR/oracle.jsonl``; delete it to rerun) and
indexes and exports the corpus afresh each time (``WORKDIR/export.json``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench import accuracy as acc
from bench.accuracy_suite import FULL, knoxidx_export, oracle


class _Lines:
    """Source lines of the corpus's files, read once each."""

    def __init__(self, corpus: Path) -> None:
        self.corpus = corpus
        self.files: dict[str, list[str]] = {}

    def at(self, path: str, line: int) -> str:
        if path not in self.files:
            self.files[path] = (self.corpus / path).read_text(errors="replace").splitlines()
        lines = self.files[path]
        return lines[line - 1].strip()[:160] if 0 < line <= len(lines) else "?"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path, help="e.g. ~/.cache/knoxidx-corpus/js/three")
    ap.add_argument("workdir", type=Path, help="where the oracle's rows and the export go")
    ap.add_argument("--kind", default=None,
                    help="oracle kind: ts, go, java, python (default: the suite's for the corpus)")
    args = ap.parse_args(argv)
    corpus = args.corpus.expanduser()
    kind = args.kind or FULL.get(f"{corpus.parent.name}/{corpus.name}", "ts")
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows, export = args.workdir / "oracle.jsonl", args.workdir / "export.json"
    if not rows.exists():
        oracle(corpus, kind, rows, None)
    knoxidx_export(corpus, export)
    found, graph = acc.Oracle.load(rows), acc.Export.load(export, None)
    targets = [graph.definition_at(r.target_path, r.target_name, r.target_line, acc.DEF_KINDS)
               for r in found.calls]
    keys: list[list[acc.Key]] = [[(r.path, r.line, t.id)] if t else []
                                 for r, t in zip(found.calls, targets, strict=True)]
    edges = acc.constructors_as_classes(
        graph, acc.considered(graph, found.files, frozenset({"Calls"}), acc.DEF_KINDS))
    edges, _ = acc.without_undecidable(graph, edges, keys, acc.call_edge_keys, found.undecidable)
    matches, unkeyable = acc.match(keys, edges, acc.call_edge_keys)
    hit = set().union(*matches) if matches else set()
    lines = _Lines(corpus)
    missed = [f"{r.path}:{r.line}\t{r.name}\t-> {r.target_path}:{r.target_line} "
              f"{r.target_name}\t| {lines.at(r.path, r.line)}"
              for i, r in enumerate(found.calls) if i not in hit and keys[i]]
    print("\n".join(missed))
    with open(args.workdir / "wrong.txt", "w") as out:
        for edge, matched in zip(edges, matches, strict=True):
            if not matched:
                target = graph.nodes[edge.target]
                out.write(f"{edge.path}:{edge.line}\t{edge.confidence}\t-> {target.path}:"
                          f"{target.start_line} {target.name}\t| "
                          f"{lines.at(str(edge.path), edge.line or 0)}\n")
    print(f"{len(missed)} rows missed, {unkeyable} with no target in the index",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
