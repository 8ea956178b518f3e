"""Mined hard negatives for the adapter's training pairs: for each pair, the documents of its own
project that the current local model ranks highest for its query, though they are not its answer.

    python -m bench.finetune.mine PAIRS.jsonl --out MINED.jsonl [--depth 10] [--adapter code-v1]

Writes the pairs again, in their order, each with a ``mined`` field: the chunk texts, hardest
first, that rank among the model's first ``--depth`` for the pair's query (the answer included
in that count) and are not its answer. A project's documents are the answer chunks of its pairs
(``chunk``): each has a known definition name, which the false-negative rule needs. Left out, as
likely false negatives: a document with the answer's exact text (two documented functions in one
chunk) and one that holds a definition of the answer's name (an overload, another class's
implementation of the same method, whose doc comment often says the same thing).

The model is knoxidx's local embedder as shipped (``LocalEmbedder``: int8 unless
``$KNOXIDX_LOCAL_PRECISION`` says otherwise), with ``--adapter`` (default ``code-v1``, the adapter
the mined ranks come from). ``bench/finetune/train.py --mined K`` reads the field.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

DEPTH = 10
_NAME_PARTS = re.compile(r"[^.:#/]+")


def short_name(qualname: str) -> str:
    """The definition's own name: ``Reader.read`` and ``io::Reader::read`` give ``read``."""
    parts = _NAME_PARTS.findall(qualname)
    return parts[-1] if parts else qualname


@dataclass(frozen=True, slots=True)
class Document:
    """One distinct chunk text of a project and the short names of the definitions it answers."""

    text: str
    names: frozenset[str]


def project_documents(pairs: Sequence[dict[str, Any]]) -> list[Document]:
    """The distinct answer texts of one project's pairs, in first-seen order."""
    names: dict[str, set[str]] = {}
    for pair in pairs:
        names.setdefault(pair["chunk"], set()).add(short_name(pair["qualname"]))
    return [Document(text, frozenset(found)) for text, found in names.items()]


def rivals(scores: np.ndarray, documents: Sequence[Document], answer_text: str,
           answer_name: str, depth: int = DEPTH) -> list[int]:
    """Indices of the documents among the first ``depth`` by ``scores`` (one per document,
    higher is closer; the answer counts towards ``depth``), best first, less the answer's own
    text and any document holding a definition named ``answer_name``."""
    order = np.argsort(-scores, kind="stable")[:depth]
    return [int(i) for i in order
            if documents[i].text != answer_text and answer_name not in documents[i].names]


def mine_project(pairs: Sequence[dict[str, Any]], embed: Any, depth: int) -> list[list[str]]:
    """The mined texts of each of ``pairs`` (one project), ``embed`` mapping texts to unit rows."""
    documents = project_documents(pairs)
    doc_vectors = embed([d.text for d in documents])
    query_vectors = embed([p["query"] for p in pairs])
    scores = query_vectors @ doc_vectors.T
    return [[documents[i].text
             for i in rivals(row, documents, pair["chunk"], short_name(pair["qualname"]), depth)]
            for pair, row in zip(pairs, scores, strict=True)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.finetune.mine")
    parser.add_argument("pairs", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--depth", type=int, default=DEPTH,
                        help="mine from the model's first DEPTH ranks (the answer counts)")
    parser.add_argument("--adapter", default="code-v1",
                        help="the local embedder's adapter whose ranks are mined")
    args = parser.parse_args(argv)
    from knoxidx.retrieval.backends import LocalEmbedder

    embedder = LocalEmbedder(adapter=args.adapter)
    pairs = [json.loads(line) for line in args.pairs.open(encoding="utf-8") if line.strip()]
    by_project: dict[tuple[str, str], list[int]] = {}
    for i, pair in enumerate(pairs):
        by_project.setdefault((pair["language"], pair["project"]), []).append(i)
    print(f"{len(pairs)} pairs, {len(by_project)} projects, {embedder.model_id}", file=sys.stderr)
    start = time.perf_counter()
    for (language, project), members in sorted(by_project.items()):
        group = [pairs[i] for i in members]
        for pair, mined in zip(group, mine_project(group, embedder.embed_documents, args.depth),
                               strict=True):
            pair["mined"] = mined
        counts = [len(p["mined"]) for p in group]
        print(f"{language} {project}: {len(group)} pairs, mined {sum(counts)} "
              f"({sum(1 for c in counts if c == 0)} with none) "
              f"[{time.perf_counter() - start:.0f} s]", file=sys.stderr)
    with args.out.open("w", encoding="utf-8") as out:
        for pair in pairs:
            out.write(json.dumps(pair) + "\n")
    total = sum(len(p["mined"]) for p in pairs)
    print(f"{total} mined negatives for {len(pairs)} pairs -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
