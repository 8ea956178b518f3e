"""Search latency on any indexed and embedded repository (the whole corpus: ``scale.py``).

    python -m bench.retrieval_eval.latency ~/.cache/knoxidx-corpus/python/django [--runs 3]

The repository must be indexed (``knoxidx index``) and embedded (``knoxidx embed``). Prints the
in-process latency of ``Index.search`` per mode (p50/p90 over the queries, model loaded and the
vector matrix cached, as in a server or ``--batch``), then the whole ``knoxidx search``
command per mode (median of ``--runs`` runs of each query, as a person would type it), and the
load average, since a busy machine skews every figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
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
    args = parser.parse_args()
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
    exe = str(Path(sys.executable).with_name("knoxidx"))
    for mode in ("lexical", "hybrid"):
        medians = []
        for query in QUERIES[:5]:
            runs = []
            for _ in range(args.runs):
                t = time.perf_counter()
                subprocess.run([exe, "search", query, str(args.repo), "--mode", mode],
                               check=True, capture_output=True)
                runs.append(time.perf_counter() - t)
            medians.append(statistics.median(runs))
        print(f"whole command `knoxidx search --mode {mode}`: median "
              f"{statistics.median(medians):.2f} s (per query: "
              + ", ".join(f"{m:.2f}" for m in medians) + ")")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
