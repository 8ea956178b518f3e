"""Training pairs for the local model: a doc comment's summary -> the code it documents, as the
index embeds that code, from projects the retrieval benchmark never asks about.

    python -m bench.finetune.pairs --out pairs.jsonl --sources SOURCES.txt [--seed 7]
    python -m bench.finetune.pairs --out pairs.jsonl --source LANG:NAME:DIR[:PAIRS] [...]

``SOURCES.txt`` holds one ``LANG:NAME:DIR:PAIRS`` per line (``bench/finetune/get-sources.sh``
fetches the projects code-v1 was fitted on and writes it); PAIRS caps the pairs of that project
(default ``--per-project``).

Each source is one project (a folder of one language's files). Its documented functions are
chosen by the benchmark's own rules (``bench.retrieval_eval.corpus.build_task``: an informative
summary that no other definition shares, not test code, at most three per file), the chosen
functions' doc comments are stripped from a copy of their files, and each file is extracted and
chunked exactly as ``knoxidx index`` does it. One line of JSON per function:

- ``query``: what the searcher embeds for the summary (``LocalEmbedder.query_text``),
- ``chunk``: the condensed view of the chunk the benchmark would count as the answer (it overlaps
  the function and spans at most max(50, 2x its lines)), the text the chunk vectors read,
- ``decl``: the declarations source's text of the function (``names.declaration_texts``),
- ``negatives``: condensed views of up to two other chunks of the same file (hard negatives),
- ``language``, ``project``, ``path``, ``qualname``.

A project whose name is one of the benchmark's (``bench.retrieval_eval.run``'s main and dev
sets) is refused: the model must not be fitted to the questions it is measured on. Copies are
caught too: with ``--benchmark-corpus`` (the benchmark's corpus root), a pair whose summary is
also the summary of any documented definition in a benchmark project is dropped (tokio copies
futures-util's ``MaybeDone``; the Go distribution vendors x/tools), and so is every function
under a ``vendor/`` or ``third_party/`` folder.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from bench.retrieval_eval.corpus import _normal as normal_summary
from bench.retrieval_eval.corpus import build_task, scan, write_copy
from bench.retrieval_eval.metrics import Span, max_hit_lines
from bench.retrieval_eval.run import SETS
from knoxidx.parse.discovery import discover
from knoxidx.parse.extract import extract
from knoxidx.retrieval.backends import LocalEmbedder
from knoxidx.retrieval.chunker import ChunkBudget, chunk_file
from knoxidx.retrieval.names import declaration_texts

BENCHMARK_PROJECTS = frozenset(
    corpus.project.rsplit("/", 1)[-1] for corpora in SETS.values() for corpus in corpora.values()
)
HARD_NEGATIVES = 2


VENDORED = re.compile(r"(^|/)(vendor|third_party)/")


def benchmark_summaries(corpus: Path) -> set[str]:
    """The normalised doc summary of every documented definition in the benchmark's projects
    (``corpus``: the root ``../shared/corpus/get-corpus.sh`` filled)."""
    found: set[str] = set()
    for corpora in SETS.values():
        for spec in corpora.values():
            root = corpus / spec.project
            if not root.is_dir():  # a copy of its doc comments would go unnoticed
                raise SystemExit(
                    f"error: benchmark project {spec.project} is not in {corpus}: fetch every one "
                    "with ../shared/corpus/get-corpus.sh")
            for f in discover(root).files:
                if f.language in spec.languages:
                    try:
                        found.update(scan(root, f.path, f.language)[1])
                    except Exception:  # noqa: BLE001  (as build_task: no queries from it)
                        continue
    return found


def project_pairs(root: Path, name: str, language: str, *, per_project: int,
                  seed: int, exclude: Collection[str] = frozenset()) -> Iterator[dict[str, Any]]:
    """The training pairs of one project (see the module docstring), less any whose summary
    is in ``exclude`` (normalised as ``benchmark_summaries`` has them)."""
    task, chosen = build_task(root, name, (language,), queries=per_project, min_chunks=0,
                              seed=seed)
    task.targets[:] = [t for t in task.targets
                       if not VENDORED.search(t.path) and normal_summary(t.query) not in exclude]
    embedder = LocalEmbedder()
    budget = ChunkBudget()
    by_path: dict[str, list[Any]] = {}
    for target in task.targets:
        by_path.setdefault(target.path, []).append(target)
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="knoxidx-pairs-") as tmp:
        copy = Path(tmp)
        write_copy(root, copy, task, chosen)
        for path, targets in sorted(by_path.items()):
            source = (copy / path).read_bytes()
            try:
                facts = extract(path, source, language)
                chunks = chunk_file(path, source, facts.language, facts.defs, budget=budget)
            except Exception as exc:  # noqa: BLE001  (one odd file is just not a source)
                print(f"  skipped {path}: {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            for target in targets:
                answer = _answer_chunk(chunks, Span(path, target.start_line, target.end_line))
                if answer is None:
                    continue
                decls = dict(zip(_code_symbols(answer), declaration_texts(answer), strict=False))
                others = [c for c in chunks if c is not answer
                          and not (c.start_line <= target.start_line <= c.end_line)]
                rng.shuffle(others)
                yield {
                    "query": embedder.query_text(target.query),
                    "chunk": embedder.document_text(answer),
                    "decl": decls.get(target.qualname, ""),
                    "negatives": [embedder.document_text(c) for c in others[:HARD_NEGATIVES]],
                    "language": language, "project": name, "path": path,
                    "qualname": target.qualname,
                }


def _answer_chunk(chunks: list[Any], target: Span) -> Any | None:
    """The chunk a search should return for ``target``: among those the benchmark counts as a
    hit, the one holding most of the function."""
    limit = max_hit_lines(target)
    best, best_overlap = None, 0
    for chunk in chunks:
        overlap = min(chunk.end_line, target.end_line) - max(chunk.start_line, target.start_line)
        if overlap < 0 or chunk.end_line - chunk.start_line + 1 > limit:
            continue
        if overlap + 1 > best_overlap:
            best, best_overlap = chunk, overlap + 1
    return best


def _code_symbols(chunk: Any) -> list[str]:
    """The qualnames ``declaration_texts`` gives a text for, in its order."""
    from knoxidx.retrieval.names import NAME_KINDS, declaration_head

    kinds = chunk.symbol_kinds or ("",) * len(chunk.symbols)
    return [q for q, k in zip(chunk.symbols, kinds, strict=True)
            if k in NAME_KINDS and declaration_head(chunk.path, q, k)]


def parse_source(spec: str) -> tuple[str, str, Path, int | None]:
    language, name, folder = spec.strip().split(":", 2)
    cap = None
    head, _, tail = folder.rpartition(":")
    if head and tail.isdigit():
        folder, cap = head, int(tail)
    if name in BENCHMARK_PROJECTS:
        raise SystemExit(f"error: {name} is a benchmark project; it cannot be training data")
    return language, name, Path(folder), cap


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.finetune.pairs")
    parser.add_argument("--source", action="append", default=[], type=parse_source,
                        help="LANG:NAME:DIR[:PAIRS], one project; repeat")
    parser.add_argument("--sources", type=Path, help="a file of LANG:NAME:DIR:PAIRS lines")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--per-project", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--benchmark-corpus", type=Path,
                        help="drop pairs whose summary occurs in the benchmark's projects here")
    args = parser.parse_args(argv)
    sources = list(args.source)
    if args.sources:
        lines = args.sources.read_text(encoding="utf-8").splitlines()
        sources += [parse_source(line) for line in lines if line.strip()]
    if not sources:
        parser.error("give --source or --sources")
    exclude = benchmark_summaries(args.benchmark_corpus) if args.benchmark_corpus else set()
    total = 0
    with args.out.open("a", encoding="utf-8") as out:
        for language, name, folder, cap in sources:
            n = 0
            for pair in project_pairs(folder, name, language, per_project=cap or args.per_project,
                                      seed=args.seed, exclude=exclude):
                out.write(json.dumps(pair) + "\n")
                n += 1
            out.flush()
            total += n
            print(f"{language} {name}: {n} pairs", file=sys.stderr)
    print(f"{total} pairs -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
