"""Search latency on any indexed and embedded repository (the whole corpus: ``scale.py``).

    python -m bench.retrieval_eval.latency ~/.cache/knoxidx-corpus/python/django [--runs 3]
    python -m bench.retrieval_eval.latency REPO --context   # ``context`` at 4k and 8k instead

The repository must be indexed (``knoxidx index``) and embedded (``knoxidx embed``). Prints the
in-process latency of ``Index.search`` per mode (p50/p90 over the queries, model loaded and the
vector matrix cached, as in a server or ``--batch``), then the whole ``knoxidx search``
command per mode (median of ``--runs`` runs of each query, as a person would type it), and the
load average, since a busy machine skews every figure. ``--context`` does the same for
``Index.context`` (4,000 and 8,000 tokens) and the whole ``knoxidx context`` command (8,000),
in whatever mode search runs as installed (hybrid where the index is embedded).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

QUERIES = [
    "validate an email address",
    "QuerySet.filter",
    "check the csrf token of a request",
    "send_mail",
    "parse the Accept header",
    "paginator page range",
    "escape html in a template",
    "hash a password",
    "cache key prefix and version",
    "get_object_or_404",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--context", action="store_true", help="time context, not search")
    args = parser.parse_args()
    if args.context:
        context_latency(args.repo, args.runs)
        return
    from knoxidx.index import Index

    print(f"load average before: {os.getloadavg()}")
    with Index.open(args.repo) as idx:
        for mode in ("lexical", "hybrid", "vector"):
            idx.search("warm up", mode=mode)  # model load, vector matrix
            times = []
            for query in QUERIES:
                for _ in range(args.runs):
                    t = time.perf_counter()
                    answer = idx.search(query, mode=mode)
                    times.append((time.perf_counter() - t) * 1000)
                top = answer["results"][0] if answer["results"] else {}
                if mode == "hybrid":
                    print(f"  {query!r}: {top.get('path')}:{top.get('start_line')} "
                          f"{top.get('symbol')}")
            print(f"in-process {mode}: p50 {percentile(times, 0.5):.1f} ms, "
                  f"p90 {percentile(times, 0.9):.1f} ms over {len(times)} searches")
    for mode in ("lexical", "hybrid"):
        whole_command(f"search --mode {mode}", partial(_search_argv, args.repo, mode), args.runs)
    print(f"load average after: {os.getloadavg()}")


def _search_argv(repo: Path, mode: str, query: str) -> list[str]:
    return ["search", query, str(repo), "--mode", mode]


def whole_command(label: str, argv: Callable[[str], list[str]], runs: int) -> None:
    """The median over the first five questions of each one's median of ``runs`` whole
    ``knoxidx`` commands, as a person would type them."""
    exe = str(Path(sys.executable).with_name("knoxidx"))
    medians = []
    for query in QUERIES[:5]:
        taken = []
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run([exe, *argv(query)], check=True, capture_output=True)
            taken.append(time.perf_counter() - t)
        medians.append(statistics.median(taken))
    print(f"whole command `knoxidx {label}`: median {statistics.median(medians):.2f} s "
          "(per query: " + ", ".join(f"{m:.2f}" for m in medians) + ")")


def context_latency(repo: Path, runs: int) -> None:
    from knoxidx.index import Index

    print(f"load average before: {os.getloadavg()}")
    with Index.open(repo) as idx:
        idx.context("warm up", max_tokens=8000)  # model load, vector matrix, caches
        for budget in (4000, 8000):
            times = []
            for query in QUERIES:
                for _ in range(runs):
                    t = time.perf_counter()
                    idx.context(query, max_tokens=budget)
                    times.append((time.perf_counter() - t) * 1000)
            print(f"in-process context @{budget}: p50 {percentile(times, 0.5):.0f} ms, "
                  f"p90 {percentile(times, 0.9):.0f} ms over {len(times)}")
    whole_command("context --max-tokens 8000",
                  lambda query: ["context", query, str(repo), "--max-tokens", "8000"], runs)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
