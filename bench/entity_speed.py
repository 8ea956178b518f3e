"""How fast one-definition answers are: ``knoxidx show`` in-process (``Index.describe``) and
as a whole command, each paired with ``callers`` of the same symbol in the same round (the
host's load moves both alike), and ``goto PATH:LINE`` at each symbol's first line and the
1024-token ``map`` as whole commands (the map's centrality cached by a first call); with ``--history``, ``knoxidx history SYMBOL``, ``hotspots``,
``hotspots --since all`` and ``changes --base HEAD~N`` (the definitions the last ``--changes``
commits changed, and their impact) as whole commands.

    python -m bench.entity_speed ~/.cache/knoxidx-corpus/python/django
    python -m bench.entity_speed /tmp/click --history

The repository must be indexed already (``knoxidx index``). Symbols: ``--symbol`` (repeat),
else a seeded sample of the index's functions and classes.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from knoxidx.core.errors import AmbiguousSymbolError
from knoxidx.index import Index

KNOXIDX = str(Path(sys.executable).with_name("knoxidx"))


def sample_symbols(idx: Index, count: int, seed: int = 53) -> list[str]:
    """``count`` functions and classes that name one definition each."""
    names = sorted(n["qualified_name"] for n in idx.q.all_nodes()
                   if n["kind"] in ("Function", "Class"))
    rng = random.Random(seed)
    picked: list[str] = []
    for name in rng.sample(names, min(len(names), count * 5)):
        try:
            idx.find(name)
        except AmbiguousSymbolError:
            continue
        picked.append(name)
        if len(picked) == count:
            break
    return picked


def in_process(fn: Callable[[], object], runs: int) -> float:
    fn()  # the first call warms the connection's page cache and the lookups
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def whole(args: list[str], cwd: Path) -> tuple[float, float]:
    """The command's wall time and its CPU time (user + system): on a shared, loaded host the
    wall time waits for the cores, the CPU time much less."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([KNOXIDX, *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--symbol", action="append", default=None)
    parser.add_argument("--count", type=int, default=5, help="Symbols sampled.")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--history", action="store_true")
    parser.add_argument("--changes", type=int, default=10,
                        help="With --history: `changes` against HEAD~N, this N.")
    args = parser.parse_args()
    repo = args.repo.expanduser().resolve()
    with Index.open_reader(repo) as idx:
        symbols = args.symbol or sample_symbols(idx, args.count)
        show_ms, callers_ms = [], []
        for symbol in symbols:
            show_ms.append(in_process(partial(idx.describe, symbol), args.runs * 3) * 1000)
            callers_ms.append(in_process(partial(idx.callers, symbol), args.runs * 3) * 1000)
        places = [f"{n['path']}:{n['start_line']}" for n in map(idx.find, symbols)]
        idx.repo_map()  # computes and caches the centrality the map ranks by
    print(f"symbols: {', '.join(symbols)}")
    print(f"in-process median ms: show {statistics.median(show_ms):.2f} (max of the "
          f"symbols' medians {max(show_ms):.2f}), callers {statistics.median(callers_ms):.2f}")
    rounds: dict[str, list[tuple[float, float]]] = {}
    for _ in range(args.runs):  # interleaved: each round runs every command once
        for symbol, place in zip(symbols, places, strict=True):
            commands = {"show": ["show", symbol], "callers": ["callers", symbol],
                        "goto": ["goto", place]}
            if args.history:
                commands["history"] = ["history", symbol]
            for name, argv in commands.items():
                rounds.setdefault(name, []).append(whole(argv, repo))
        rounds.setdefault("map", []).append(whole(["map"], repo))
        if args.history:
            rounds.setdefault("hotspots", []).append(whole(["hotspots"], repo))
            rounds.setdefault("hotspots --since all", []).append(
                whole(["hotspots", "--since", "all"], repo))
            rounds.setdefault(f"changes --base HEAD~{args.changes}", []).append(
                whole(["changes", "--base", f"HEAD~{args.changes}"], repo))
    for name, times in rounds.items():
        walls = sorted(wall for wall, _ in times)
        print(f"whole command {name}: median {statistics.median(walls):.3f} s wall "
              f"(p90 {walls[int(len(walls) * 0.9) - 1]:.3f}), CPU median "
              f"{statistics.median(cpu for _, cpu in times):.3f} s ({len(times)} runs)")


if __name__ == "__main__":
    main()
