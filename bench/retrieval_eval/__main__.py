"""``python -m bench.retrieval_eval [--quick] [--langs ...]``: the docstring -> code benchmark.

For each language, ~100 documented functions of a real corpus project are asked for by their
doc comment's summary in a copy of (a subset of) the project with those doc comments stripped,
indexed and embedded with the default local embedder. Prints Recall@10 and MRR@10 for hybrid,
lexical and vector search per language and their mean, and writes
``bench/results/retrieval-<date>.json``. ``--quick``: one language, 20 queries, a small subset.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

from bench.retrieval_eval.corpus import target_kinds
from bench.retrieval_eval.report import markdown_table, summarise
from bench.retrieval_eval.run import CORPORA, SETS, evaluate
from knoxidx.retrieval.backends import select_embedder

RESULTS = Path(__file__).resolve().parent.parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval_eval")
    parser.add_argument("--quick", action="store_true", help="one language, 20 queries")
    parser.add_argument("--langs", nargs="+", choices=sorted(CORPORA), default=None)
    parser.add_argument("--queries", type=int, default=None)
    parser.add_argument("--min-chunks", type=int, default=None)
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--set", choices=sorted(SETS), default="main",
                        help="the reported projects (main) or the held-out ones to tune on (dev); "
                        "give dev its own $KNOXIDX_EVAL_DIR")
    parser.add_argument("--corpus", type=Path, default=None,
                        help="corpus root (default $KNOXIDX_CORPUS or ~/.cache/knoxidx-corpus)")
    parser.add_argument("--no-save", action="store_true", help="do not write bench/results")
    parser.add_argument("--out", type=Path, default=None,
                        help="write the results here instead of bench/results/retrieval-<date>.json")
    args = parser.parse_args(argv)
    corpus = args.corpus or Path(
        os.environ.get("KNOXIDX_CORPUS", Path.home() / ".cache" / "knoxidx-corpus")
    )
    langs = args.langs or (["python"] if args.quick else list(CORPORA))
    queries = args.queries or (20 if args.quick else 100)
    min_chunks = args.min_chunks or (200 if args.quick else 1500)
    corpora = SETS[args.set]
    missing = [corpora[lang].project for lang in langs if not (corpus / corpora[lang].project).is_dir()]
    if missing:
        print(f"error: corpus not found under {corpus}: {', '.join(missing)} "
              "(fetch it with ../shared/corpus/get-corpus.sh)", file=sys.stderr)
        return 2
    results = [
        evaluate(lang, corpus, queries=queries, min_chunks=min_chunks, seed=args.seed,
                 corpora=corpora)
        for lang in langs
    ]
    summary = summarise(results)
    print(markdown_table(results, summary))
    if not args.no_save:
        RESULTS.mkdir(exist_ok=True)
        out = args.out or RESULTS / (
            f"retrieval-{datetime.date.today().isoformat()}{'-quick' if args.quick else ''}.json")
        out.write_text(json.dumps({
            "config": {"set": args.set, "queries": queries, "min_chunks": min_chunks,
                       "seed": args.seed,
                       "langs": langs, "embedder": "local (default)",
                       "model": select_embedder().model_id,
                       "kinds": sorted(target_kinds())},
            "languages": [asdict(r) for r in results],
            "summary": summary,
        }, indent=2) + "\n")
        print(f"written {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
