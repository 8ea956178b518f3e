"""Speed benchmarks. Every figure is paired with a baseline measured in the same run:
cold indexing against a bare read-and-parse of the same files with tree-sitter in one process
(the physical floor) and against ``ctags -R``; whole commands against in-process calls."""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

from bench.procmon import run_measured

KNOXIDX = [sys.executable, "-c", "from knoxidx.cli import script; script()"]  # as installed
CTAGS_LANGS = "Python,JavaScript,TypeScript,Go,Rust,Java"


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def source_files(root: Path) -> list[tuple[str, str]]:
    """(path, language) of what knoxidx would index, via its own discovery."""
    from knoxidx.parse.discovery import discover

    return [(f.path, f.language) for f in discover(root).files]


class BareParse(NamedTuple):
    seconds: float
    lines: int
    cpu_seconds: float  # of this process: the parse's work, whatever else the host ran


def bare_parse_seconds(root: Path, files: list[tuple[str, str]]) -> BareParse:
    """Read every file and parse it with tree-sitter, one process: the floor."""
    from tree_sitter import Parser

    from knoxidx.languages.registry import ts_language

    parsers = {lang: Parser(ts_language(lang)) for lang in {lang for _, lang in files}}
    lines = 0
    cpu = time.process_time()
    start = time.perf_counter()
    for path, lang in files:
        with open(root / path, "rb") as fh:
            data = fh.read()
        parsers[lang].parse(data)
        lines += data.count(b"\n")
    return BareParse(time.perf_counter() - start, lines, time.process_time() - cpu)


def parallel_parse_seconds(root: Path, files: list[tuple[str, str]], procs: int) -> float:
    """:func:`bare_parse_seconds` split over ``procs`` forked processes (every procs-th file
    each): what this machine's cores give a perfectly parallel parse. On the 2-vCPU benchmark
    machine two such processes finished 1.3-1.6x faster than one, not 2x, so a build may do
    at most ~1.5 x 2.5 = 3.7x the bare parse's single-core work to stay within 2.5x."""
    if procs <= 1 or not hasattr(os, "fork"):
        return bare_parse_seconds(root, files).seconds
    start = time.perf_counter()
    children = []
    for k in range(procs):
        pid = os.fork()
        if pid == 0:  # the child parses its share and leaves without Python's shutdown
            code = 0
            try:
                bare_parse_seconds(root, files[k::procs])
            except BaseException:
                code = 1
            os._exit(code)
        children.append(pid)
    failed = sum(os.waitpid(pid, 0)[1] != 0 for pid in children)
    if failed:
        raise RuntimeError(f"{failed} parallel parse process(es) failed")
    return time.perf_counter() - start


def ctags_seconds(root: Path, tmp: Path) -> float:
    if not shutil.which("ctags"):
        return float("nan")
    start = time.perf_counter()
    subprocess.run(["ctags", "-R", f"--languages={CTAGS_LANGS}", "-f", str(tmp / "tags"),
                    "--exclude=.knoxidx", "--exclude=.downloads", str(root)],
                   check=False, capture_output=True)
    return time.perf_counter() - start


def drop_index(root: Path) -> None:
    shutil.rmtree(root / ".knoxidx", ignore_errors=True)


def _cold_build(root: Path, jobs: int | None, sampled: bool,
                checkout: Path | None = None,
                what: str = "--graph-only") -> tuple[float, float, dict, float]:
    """Wall seconds, peak MiB (``sampled``), the ``--json`` report and CPU seconds of one;
    ``checkout``: the knoxidx of that source tree instead of the installed one (first on the
    path, run from outside both trees); ``what``: the build (``--graph-only``, ``--no-embed``)."""
    drop_index(root)
    cmd = [*KNOXIDX, "index", what, "--json", str(root)]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    env, cwd = None, None
    if checkout is not None:
        env = {**os.environ, "PYTHONPATH": str(checkout.resolve())}
        cwd = str(root.resolve().parent)  # (`-c` puts the working directory first on the path)
    r = run_measured(cmd, sample=sampled, env=env, cwd=cwd)
    if r.returncode != 0:
        raise RuntimeError(f"knoxidx index failed: {r.stderr[-2000:]}")
    return r.seconds, r.peak_mib, json.loads(r.stdout), r.cpu_seconds


def cold_index(root: Path, runs: int, jobs: int | None = None,
               between: Any = None, peak: bool = True) -> dict[str, Any]:
    """Median wall time of ``knoxidx index --graph-only`` from scratch over ``runs`` builds,
    and the peak memory of one more build.

    The timed builds are not observed: sampling the process tree's PSS (``smaps_rollup``, 20
    times a second) slowed the build it watched by 8-27 % on this 2-core machine, alternating
    sampled and unsampled builds (31.5-36.0 s against 26.3-32.7 s on the whole corpus). So the
    peak comes from a separate, sampled build. ``between``: called before each timed build (the
    baseline measured in alternation with it, so both see the same host). ``peak`` False: no
    memory build (``peak_mib`` None). Each timed build's CPU too (its process tree's user and
    system time): the work it did."""
    times, cpus, report, phases = [], [], {}, []
    for _ in range(runs):
        if between is not None:
            between()
        seconds, _, report, cpu = _cold_build(root, jobs, sampled=False)
        times.append(seconds)
        cpus.append(cpu)
        phases.append(report.get("timings", {}))  # where each build's time went
    peak_mib = _cold_build(root, jobs, sampled=True)[1] if peak else None
    db = root / ".knoxidx" / "index.db"
    return {"seconds": median(times), "all_seconds": times, "all_cpu_seconds": cpus,
            "phases": phases, "peak_mib": peak_mib,
            "files": report.get("files"), "lines": report.get("lines"),
            "errors": len(report.get("errors", [])), "db_bytes": db.stat().st_size}


def paired_ratios(root: Path, pairs: int, jobs: int | None = None) -> dict[str, Any]:
    """``pairs`` cold builds of ``root``, each right after a bare parse of the same files (as
    :func:`corpus_speed` pairs them, without its memory and ctags runs): each build's time
    over its own parse's, their median, and where each build's time went. The quick check of
    the cold-index ratio while working on the cold build. Also each build's CPU over its parse's
    (``cpu_ratio``): the work ratio. The wall ratio is the work ratio over the cores the build
    kept busy, so the two tell apart a build that does too much from one that spreads badly
    (on a 2-core host: 1.86-1.91 cores busy in every build, whatever its speed)."""
    files = source_files(root)
    parses: list[BareParse] = []
    cold = cold_index(root, pairs, jobs, between=lambda: parses.append(
        bare_parse_seconds(root, files)), peak=False)
    rows = [{"bare_parse_s": round(parse.seconds, 3), "index_s": round(index_s, 3),
             "ratio": round(index_s / parse.seconds, 3),
             "index_cpu_s": round(cpu, 3), "cpu_ratio": round(cpu / parse.cpu_seconds, 3),
             "cores_busy": round(cpu / index_s, 2),
             "phases": {k: round(v, 2) for k, v in phases.items()}}
            for parse, index_s, cpu, phases in zip(parses, cold["all_seconds"],
                                                   cold["all_cpu_seconds"], cold["phases"],
                                                   strict=True)]
    return {"root": str(root), "files": len(files), "pairs": rows,
            "median_ratio": round(median([r["ratio"] for r in rows]), 3),
            "median_cpu_ratio": round(median([r["cpu_ratio"] for r in rows]), 3)}


def interleaved_builds(root: Path, base: Path, rounds: int,
                       jobs: int | None = None) -> dict[str, Any]:
    """Cold builds of ``root`` by the knoxidx of the ``base`` source tree and by this one, in
    ABBA order for ``rounds`` rounds (four builds each): what a change to the build is worth.
    Two builds of the same code here differ by up to 5 %, and the host drifts within minutes,
    so a handful of pairs misreads a change of 2 % (five pairs once said -6 % where sixteen
    builds each said -2 %). ``base`` must hold its own compiled build if this one is compiled (a
    `git worktree` at the older commit, with ``KNOXIDX_COMPILE=1 pip install --no-deps -e``
    run there, or this checkout's compiled modules copied in when none of their sources
    changed)."""
    runs: dict[str, list[tuple[float, float]]] = {"base": [], "this": []}
    for _ in range(rounds):
        for who in ("base", "this", "this", "base"):
            seconds, _, _, cpu = _cold_build(root, jobs, sampled=False,
                                             checkout=base if who == "base" else None)
            runs[who].append((seconds, cpu))
    return {who: {"wall_s": [round(w, 3) for w, _ in rows], "cpu_s": [round(c, 3) for _, c in rows],
                  "median_wall_s": round(median([w for w, _ in rows]), 3),
                  "median_cpu_s": round(median([c for _, c in rows]), 3)}
            for who, rows in runs.items()}


def graph_and_chunks(root: Path, rounds: int, jobs: int | None = None,
                     checkout: Path | None = None) -> dict[str, Any]:
    """Cold builds of ``root`` with ``--graph-only`` and with ``--no-embed`` (the graph, chunks
    and lexical search), in ABBA order for ``rounds`` rounds: what the chunks and the lexical
    index add to a build, as each round's ``--no-embed`` medians over its ``--graph-only`` ones
    (wall and CPU: on a loaded host the CPU ratio is the steadier), and the median of those."""
    runs: dict[str, list[tuple[float, float]]] = {"--graph-only": [], "--no-embed": []}
    ratios: list[tuple[float, float]] = []
    for n in range(rounds):
        order = ("--graph-only", "--no-embed") if n % 2 == 0 else ("--no-embed", "--graph-only")
        this_round: dict[str, list[tuple[float, float]]] = {"--graph-only": [], "--no-embed": []}
        for what in (*order, *reversed(order)):
            seconds, _, _, cpu = _cold_build(root, jobs, sampled=False, checkout=checkout,
                                             what=what)
            this_round[what].append((seconds, cpu))
            runs[what].append((seconds, cpu))
        graph, chunks = this_round["--graph-only"], this_round["--no-embed"]
        ratios.append((median([w for w, _ in chunks]) / median([w for w, _ in graph]),
                       median([c for _, c in chunks]) / median([c for _, c in graph])))
    out: dict[str, Any] = {
        what: {"wall_s": [round(w, 3) for w, _ in rows], "cpu_s": [round(c, 3) for _, c in rows],
               "median_wall_s": round(median([w for w, _ in rows]), 3),
               "median_cpu_s": round(median([c for _, c in rows]), 3)}
        for what, rows in runs.items()}
    out["ratio_wall"] = round(median([w for w, _ in ratios]), 3)
    out["ratio_cpu"] = round(median([c for _, c in ratios]), 3)
    out["round_ratios"] = [(round(w, 3), round(c, 3)) for w, c in ratios]
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.speed ratio [--corpus DIR] [--pairs N] [--jobs J]``: see
    :func:`paired_ratios`; ``python -m bench.speed ab --base TREE [--rounds N]``: see
    :func:`interleaved_builds` (both write ``DIR/.knoxidx``, as ``python -m bench`` does)."""
    import argparse

    from bench.run import DEFAULT_CORPUS, downloads_aside

    ap = argparse.ArgumentParser(prog="python -m bench.speed")
    ap.add_argument("what", choices=["ratio", "ab", "chunks"])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--base", type=Path, default=None,
                    help="ab: the source tree of the knoxidx to compare this one with; "
                    "chunks: the knoxidx to measure instead of this one")
    ap.add_argument("--rounds", type=int, default=4, help="ab: ABBA rounds (4 builds each)")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        raise SystemExit(f"no corpus at {args.corpus} (see ../shared/corpus/get-corpus.sh)")
    downloads_aside(args.corpus)
    if args.what == "chunks":
        out = graph_and_chunks(args.corpus, args.rounds, args.jobs, args.base)
        for what in ("--graph-only", "--no-embed"):
            row = out[what]
            print(f"{what}: median {row['median_wall_s']:.2f} s, CPU {row['median_cpu_s']:.2f} s"
                  f" (walls {' '.join(f'{w:.2f}' for w in row['wall_s'])})")
        print(f"--no-embed / --graph-only: wall {out['ratio_wall']:.3f}x, CPU "
              f"{out['ratio_cpu']:.3f}x (median of {args.rounds} rounds: "
              f"{' '.join(f'{w:.2f}/{c:.2f}' for w, c in out['round_ratios'])})")
        return 0
    if args.what == "ab":
        if args.base is None or not (args.base / "knoxidx" / "__init__.py").is_file():
            raise SystemExit("ab needs --base, a knoxidx source tree (a git worktree)")
        ab = interleaved_builds(args.corpus, args.base, args.rounds, args.jobs)
        for who, row in ab.items():
            print(f"{who}: median {row['median_wall_s']:.2f} s, CPU {row['median_cpu_s']:.2f} s"
                  f" (walls {' '.join(f'{w:.2f}' for w in row['wall_s'])})")
        return 0
    out = paired_ratios(args.corpus, args.pairs, args.jobs)
    for row in out["pairs"]:
        print(f"bare parse {row['bare_parse_s']:.2f} s, index {row['index_s']:.2f} s, "
              f"ratio {row['ratio']:.2f}, CPU {row['index_cpu_s']:.2f} s (ratio "
              f"{row['cpu_ratio']:.2f}, {row['cores_busy']:.2f} cores busy), "
              f"phases {row['phases']}", flush=True)
    print(f"median ratio {out['median_ratio']:.3f} (CPU {out['median_cpu_ratio']:.3f}) over "
          f"{len(out['pairs'])} pair(s), {out['files']} files")
    return 0


def _edit(path: Path, i: int) -> None:
    # A body edit that moves lines: the common case while typing.
    text = path.read_bytes()
    comment = b"# knoxidx bench edit\n" if path.suffix in (".py", ".pyi") else b"// bench edit\n"
    path.write_bytes(comment + text)


def incremental(root: Path, counts: list[int], runs: int, seed: int = 1) -> dict[str, Any]:
    """Re-index after editing N files: in-process (Index.update) and the whole command."""
    from knoxidx.index import Index

    files = [p for p, _ in source_files(root)]
    rng = random.Random(seed)
    out: dict[str, Any] = {}
    originals: dict[Path, bytes] = {}
    try:
        for n in counts:
            in_proc, command = [], []
            for r in range(runs):
                chosen = [root / p for p in rng.sample(files, min(n, len(files)))]
                for p in chosen:
                    originals.setdefault(p, p.read_bytes())
                    _edit(p, r)
                with Index.open(root) as idx:
                    t = time.perf_counter()
                    idx.update(retrieval=False)
                    in_proc.append(time.perf_counter() - t)
                for p in chosen:
                    _edit(p, r)
                t = time.perf_counter()
                proc = subprocess.run([*KNOXIDX, "index", "--graph-only", str(root)],
                                      capture_output=True, text=True)
                command.append(time.perf_counter() - t)
                if proc.returncode != 0:
                    raise RuntimeError(proc.stderr[-2000:])
            out[str(n)] = {"in_process_s": median(in_proc), "command_s": median(command)}
    finally:
        for p, data in originals.items():
            p.write_bytes(data)
        subprocess.run([*KNOXIDX, "index", "--graph-only", str(root)], capture_output=True)
    return out


def query_latency(root: Path, samples: int, command_runs: int, seed: int = 2) -> dict[str, Any]:
    """p50/p95 of symbols / callers / impact --depth 3 in-process, and whole commands."""
    from knoxidx.core.errors import KnoxidxError
    from knoxidx.index import Index

    rng = random.Random(seed)
    with Index.open(root) as idx:
        names = [r[0] for r in idx.store.conn.execute(
            "SELECT n.qualified_name FROM nodes n WHERE n.kind='Function' AND n.def_index"
            " IS NOT NULL AND n.id IN (SELECT target FROM edges WHERE type='Calls')"
            " ORDER BY n.id LIMIT 5000")]
        chosen = rng.sample(names, min(samples, len(names)))
        timings: dict[str, list[float]] = {"symbols": [], "callers": [], "impact_depth3": []}
        for q in chosen:
            short = q.replace("::", ".").replace(":", ".").replace("/", ".").rsplit(".", 1)[-1]
            for key, call in (("symbols", lambda s=short: idx.symbols(s)),
                              ("callers", lambda q=q: idx.callers(q)),
                              ("impact_depth3", lambda q=q: idx.impact(q, depth=3))):
                t = time.perf_counter()
                try:
                    call()
                except KnoxidxError:
                    pass
                timings[key].append(time.perf_counter() - t)
    result: dict[str, Any] = {
        k: {"p50_ms": pct(v, 0.5) * 1000, "p95_ms": pct(v, 0.95) * 1000}
        for k, v in timings.items()
    }
    commands: dict[str, list[float]] = {"callers": [], "symbols": []}
    for q in chosen[:command_runs]:
        for key in commands:
            t = time.perf_counter()
            subprocess.run([*KNOXIDX, key, q, str(root)], capture_output=True)
            commands[key].append(time.perf_counter() - t)
    for key, v in commands.items():
        result[f"{key}_command"] = {"p50_s": pct(v, 0.5), "p95_s": pct(v, 0.95)}
    return result


def make_synthetic(sources: list[Path], target: Path, lines: int) -> int:
    """A repo of about ``lines`` lines, made by cloning real corpora into renamed copies
    (copy_0/, copy_1/, ...), so every copy parses and resolves like the original."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    total, copy = 0, 0
    while total < lines:
        for src in sources:
            for path, _ in source_files(src):
                dest = target / f"copy_{copy}" / src.name / path
                dest.parent.mkdir(parents=True, exist_ok=True)
                data = (src / path).read_bytes()
                dest.write_bytes(data)
                total += data.count(b"\n")
                if total >= lines:
                    return total
        copy += 1
    return total


def growth(sources: list[Path], scratch: Path, sizes: list[int]) -> dict[str, Any]:
    points = []
    for size in sizes:
        repo = scratch / f"synthetic-{size}"
        real = make_synthetic(sources, repo, size)
        cold = cold_index(repo, runs=1)
        points.append({"lines": real, "seconds": cold["seconds"], "peak_mib": cold["peak_mib"]})
        shutil.rmtree(repo, ignore_errors=True)
    slope = None
    if len(points) >= 2 and points[0]["seconds"] > 0:
        a, b = points[0], points[-1]
        slope = (b["seconds"] / a["seconds"]) / (b["lines"] / a["lines"])
    return {"points": points, "time_ratio_per_lines_ratio": slope}


def corpus_speed(root: Path, runs: int, tmp: Path) -> dict[str, Any]:
    """Cold index against its baselines. Each timed build follows a bare parse of the same
    files, so that a host that drifts (the bare parse alone took 7.0 and 8.8 s within ten
    minutes here) moves the numerator and the denominator of the ratio together."""
    files = source_files(root)
    parses: list[BareParse] = []
    cold = cold_index(root, runs, between=lambda: parses.append(bare_parse_seconds(root, files)))
    parse_s = median([p.seconds for p in parses])
    lines = parses[0].lines
    ctags = median([ctags_seconds(root, tmp) for _ in range(runs)])
    # the same parse on every core, against the one-process parse just before it
    parallel: list[tuple[float, float]] = []
    for _ in range(runs):
        one = bare_parse_seconds(root, files).seconds
        parallel.append((one, parallel_parse_seconds(root, files, cpu_count())))
    return {
        "files": len(files), "lines": lines, "bare_parse_s": parse_s,
        "bare_parse_all_s": [p.seconds for p in parses], "ctags_s": ctags,
        "index_s": cold["seconds"], "index_all_s": cold["all_seconds"],
        "index_cpu_all_s": cold["all_cpu_seconds"], "index_phases": cold["phases"],
        "ratio_to_parse": cold["seconds"] / parse_s if parse_s else None,
        "ratio_to_parse_paired": median([c / p.seconds for c, p in zip(cold["all_seconds"],
                                                                       parses, strict=True)]),
        # the work ratio: the build's CPU over its parse's (see paired_ratios), and the cores
        # the build kept busy (its CPU over its wall time)
        "cpu_ratio_to_parse": median([c / p.cpu_seconds for c, p in zip(
            cold["all_cpu_seconds"], parses, strict=True)]),
        "index_cores_busy": median([c / s for c, s in zip(
            cold["all_cpu_seconds"], cold["all_seconds"], strict=True)]),
        "ratio_to_ctags": cold["seconds"] / ctags if ctags else None,
        "lines_per_s": lines / cold["seconds"], "peak_mib": cold["peak_mib"],
        "db_bytes_per_kloc": cold["db_bytes"] / max(lines / 1000, 1),
        "errors": cold["errors"],
        "cores": cpu_count(),
        "parallel_parse_s": median([p for _, p in parallel]),
        "parallel_speedup": median([one / p for one, p in parallel]),
    }


def cpu_count() -> int:
    return os.cpu_count() or 1


if __name__ == "__main__":
    raise SystemExit(main())
