"""The whole ``knoxidx search`` command (process start to exit), paired with another checkout.

    python -m bench.retrieval_eval.search_command REPO [--runs 10] \\
        [--other SRC_DIR [--other-repo REPO2]] [--query Q ...] [--context] [--offline]

Runs each query (``--query``, repeatable; else ``latency.QUERIES``) ``--runs`` times in a fresh
process: ``knoxidx search Q REPO --json``, or with ``--context`` ``knoxidx context Q REPO
--max-tokens 8000``; ``--offline`` adds ``--offline`` (no network, the local model). It alternates this
checkout with ``--other`` (another source tree, e.g. ``git archive 617af78 knoxidx | tar -x
-C /tmp/main``, imported instead of this one) so that both see the same machine load; ``--other-repo`` is
the index that one searches (an index embedded by its own model). The repositories must be
indexed and embedded. Prints the median and p90 of wall-clock and CPU seconds per checkout,
and the load average.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.retrieval_eval.latency import QUERIES, percentile

# knoxidx from the tree named by $KX_SOURCE, ahead of an editable install's import hook
LAUNCHER = (
    "import os, sys; sys.path.insert(0, os.environ['KX_SOURCE']); "
    "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f)]; "
    "from knoxidx.cli import run; sys.argv[0] = 'knoxidx'; run()"
)


def timed_search(query: str, repo: Path, env: dict[str, str],
                 extra: tuple[str, ...] = ("search", "--json")) -> tuple[float, float]:
    """The command's wall-clock seconds and CPU seconds (user + system: what a busy machine
    distorts least, and about the wall-clock time on an idle one, the query model being
    single-threaded). ``extra``: the command, then its options."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", LAUNCHER, extra[0], query, str(repo), *extra[1:]],
                   check=True, capture_output=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo", type=Path)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--other", type=Path, default=None)
    parser.add_argument("--other-repo", type=Path, default=None)
    parser.add_argument("--query", action="append", default=None)
    parser.add_argument("--context", action="store_true")
    parser.add_argument("--offline", action="store_true")
    args = parser.parse_args()
    queries = args.query or QUERIES
    command: tuple[str, ...] = (("context", "--max-tokens", "8000") if args.context
                                else ("search", "--json"))
    if args.offline:
        command += ("--offline",)
    here = Path(__file__).resolve().parents[2]
    setups = {"this checkout": (args.repo, dict(os.environ, KX_SOURCE=str(here)))}
    if args.other is not None:
        env = dict(os.environ, KX_SOURCE=str(args.other.resolve()))
        setups[f"{args.other}"] = (args.other_repo or args.repo, env)
    print(f"load average before: {os.getloadavg()}")
    for repo, env in setups.values():  # the first run of each writes bytecode, caches
        timed_search("warm up", repo, env, command)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in setups}
    for _ in range(args.runs):
        for query in queries:
            for name, (repo, env) in setups.items():
                times[name].append(timed_search(query, repo, env, command))
    for name, values in times.items():
        walls, cpus = [w for w, _ in values], [c for _, c in values]
        print(f"{name}: {command[0]}: wall median {statistics.median(walls):.3f} s, p90 "
              f"{percentile(walls, 0.9):.3f} s; CPU median {statistics.median(cpus):.3f} s, "
              f"p90 {percentile(cpus, 0.9):.3f} s over {len(values)} searches")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
