"""``python -m bench [--quick]``: the whole benchmark on the corpora from shared/corpus.

Writes ``bench/results/<date>.json`` and the tables of ``BENCHMARKS.md``. Timings are medians of
``--runs`` runs, each next to its baseline measured in the same run; accuracy is deterministic.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import speed

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = Path(os.environ.get("KNOXIDX_CORPUS", Path.home() / ".cache" / "knoxidx-corpus"))
GET_CORPUS = REPO.parent / "shared" / "corpus" / "get-corpus.sh"
LANGUAGE_DIRS = ("python", "ts", "tsx", "js", "go", "rust", "java")


def ensure_corpus(corpus: Path) -> None:
    if not (corpus / "MANIFEST.loc").exists():
        if not GET_CORPUS.exists():
            raise SystemExit(f"no corpus at {corpus} and no {GET_CORPUS} to fetch one")
        print(f"fetching corpora into {corpus} (about a minute)...", file=sys.stderr)
        subprocess.run(["bash", str(GET_CORPUS), str(corpus)], check=True)
    downloads_aside(corpus)


def downloads_aside(corpus: Path) -> Path | None:
    """Move the fetch script's downloads (``<corpus>/.downloads``: the packages and their
    unpacked trees) beside the corpus, to ``<corpus>-downloads``; where they are, every
    benchmark would index them as part of the corpus (14,267 files instead of 5,422). The new place, or None when there was nothing to move."""
    downloads = corpus / ".downloads"
    if not downloads.is_dir():
        return None
    target = corpus.parent / f"{corpus.name}-downloads"
    if target.exists():
        shutil.rmtree(target)
    downloads.rename(target)
    print(f"moved the fetch script's downloads out of the corpus, to {target}", file=sys.stderr)
    return target


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    from knoxidx.graph import resolve

    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(),
            # the mypyc-compiled build (setup.py: what `pip install .` gives) or pure Python
            "compiled": not resolve.__file__.endswith(".py")}


SECTIONS = ("speed", "incremental", "queries", "growth", "accuracy")
# what each section writes into the results file
SECTION_KEYS = {"speed": ("speed", "speed_all"), "incremental": ("incremental",),
                "queries": ("queries",), "growth": ("growth",), "accuracy": ("accuracy",)}


def _sections(text: str) -> list[str]:
    """``--skip``'s value: one section or several with commas."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in SECTIONS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown section {', '.join(unknown)} (sections: {', '.join(SECTIONS)})")
    return names


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="one corpus, one run: under 5 minutes")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--runs", type=int, default=None, help="runs per timing (default 3, quick 1)")
    ap.add_argument("--skip", action="append", default=[], type=_sections,
                    help="sections to skip (repeat it, or list them with commas): "
                         + ", ".join(SECTIONS))
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = ap.parse_args(argv)
    args.skip = {section for given in args.skip for section in given}
    runs = args.runs or (1 if args.quick else 3)
    ensure_corpus(args.corpus)
    results: dict[str, Any] = {"date": dt.date.today().isoformat(), "machine": machine(),
                               "quick": args.quick, "runs": runs}
    tmp = Path(tempfile.mkdtemp(prefix="knoxidx-bench-"))
    largest = args.corpus / "python" / "django" if args.quick else args.corpus

    if "speed" not in args.skip:
        per_language: dict[str, Any] = {}
        dirs = ["python/django"] if args.quick else list(LANGUAGE_DIRS)
        for name in dirs:
            root = args.corpus / name
            if root.exists():
                print(f"speed: {name}", file=sys.stderr)
                per_language[name] = speed.corpus_speed(root, runs, tmp)
        results["speed"] = per_language
        if not args.quick:
            print("speed: all languages", file=sys.stderr)
            results["speed_all"] = speed.corpus_speed(args.corpus, runs, tmp)
    if "incremental" not in args.skip:
        print(f"incremental: {largest}", file=sys.stderr)
        speed.cold_index(largest, 1)
        counts = [1, 10] if args.quick else [1, 10, 100]
        results["incremental"] = {"corpus": str(largest.relative_to(args.corpus.parent)),
                                  **speed.incremental(largest, counts, max(runs, 3))}
    if "queries" not in args.skip:
        print(f"queries: {largest}", file=sys.stderr)
        results["queries"] = speed.query_latency(largest, 40 if args.quick else 200,
                                                 5 if args.quick else 10)
    if "growth" not in args.skip:
        sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
        sources = [args.corpus / d for d in LANGUAGE_DIRS if (args.corpus / d).exists()]
        print(f"growth: {sizes}", file=sys.stderr)
        results["growth"] = speed.growth(sources, tmp, sizes)
    if "accuracy" not in args.skip:
        from bench import accuracy_suite

        print("accuracy", file=sys.stderr)
        results["accuracy"] = accuracy_suite.run(args.corpus, quick=args.quick)

    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / f"{results['date']}{'-quick' if args.quick else ''}.json"
    from bench import report

    target = REPO / "BENCHMARKS.md"
    previous = target.read_text(encoding="utf-8") if target.exists() else ""
    target.write_text(report.keep_other_sections(report.render(results), previous))
    out.write_text(json.dumps(with_skipped_sections(results, out, args.skip), indent=2,
                              default=str))
    print(f"wrote {out} and BENCHMARKS.md", file=sys.stderr)
    return 0


def with_skipped_sections(results: dict[str, Any], earlier: Path,
                          skipped: set[str]) -> dict[str, Any]:
    """``results`` with the figures an earlier run of the same day wrote into ``earlier`` (that
    day's results file, overwritten now) for the sections this run skipped: ``--skip`` keeps
    their raw figures as it keeps their tables in BENCHMARKS.md. Each kept section is listed under ``"earlier"`` with the runs and machine it was
    measured with."""
    try:
        previous = json.loads(earlier.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return results
    merged = dict(results)
    kept = dict(previous.get("earlier", {}))
    for section in sorted(skipped):
        for key in SECTION_KEYS[section]:
            if key in previous and key not in results:
                merged[key] = previous[key]
                kept[key] = kept.get(key) or {"runs": previous.get("runs"),
                                              "machine": previous.get("machine")}
    kept = {key: how for key, how in kept.items() if key in merged and key not in results}
    if kept:
        merged["earlier"] = kept
    else:
        merged.pop("earlier", None)
    return merged
