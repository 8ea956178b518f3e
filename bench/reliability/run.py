"""``python -m bench.reliability [--quick] [--only NAMES] [--update-doc]``: every fault
scenario of issue 6, the figures of ``RELIABILITY.md``.

The long form runs the issue's sizes on the real corpora (``~/.cache/knoxidx-corpus``,
``$KNOXIDX_CORPUS``): >= 50 SIGKILLs of ``knoxidx index``, 20 of the watcher, 60 s of
concurrency and 60 s of load. ``--quick`` runs the CI sizes on generated repositories (no
corpus needed). The case-by-case suites (storage faults, embedding API faults) run through
pytest. Results go to ``bench/results/reliability-<date>.json``; ``--update-doc`` rewrites
the measured rows of ``RELIABILITY.md`` (between its ``faults:start``/``faults:end`` marks).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from bench.reliability.common import CORPUS, Outcome

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "RELIABILITY.md"
RESULTS = REPO / "bench" / "results"
SCENARIOS = ("kill-index", "kill-index-pid", "kill-watch", "concurrency", "separate-writer",
             "disk-full", "read-only", "damaged", "embedding", "load")
STORAGE_TESTS = "tests/reliability/test_storage_faults.py"
STORAGE_CASES = {  # pytest -k expressions over STORAGE_TESTS
    "disk-full": "disk_full or full_disk",
    "read-only": "read_only",
    "damaged": "damage or first_build or open_check or http or watcher",
}


def generated(tmp: Path, files: int) -> Path:
    from tests.test_crash import make_repo

    root = tmp / f"generated-{files}"
    if not root.exists():
        make_repo(root, files)
    return root


def pytest_suite(name: str, paths: list[str], select: str | None = None) -> Outcome:
    outcome = Outcome(name)
    only = ["-k", select] if select else []
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *only, *paths], cwd=REPO, capture_output=True, text=True,
                          check=False)
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:]
    passed = re.search(r"(\d+) passed", tail)
    outcome.trials = int(passed.group(1)) if passed else 0
    if proc.returncode != 0:
        outcome.fail(f"pytest: {tail}")
    outcome.figures = {"pytest": tail}
    return outcome


EMBEDDING_TITLE = ("embedding API: timeouts, 429 + Retry-After, 500s, malformed JSON, resets, "
                   "other 4xx; breaker; outage mid-index")


def plan(quick: bool, tmp: Path) -> dict[str, Callable[[], Outcome]]:
    from bench.reliability.concurrency import concurrency
    from bench.reliability.kill_index import kill_index, kill_index_pid_only
    from bench.reliability.kill_watch import kill_watch
    from bench.reliability.load import load
    from bench.reliability.separate_writer import separate_writer

    small = CORPUS / "tsx" / "radix-themes"
    large = CORPUS / "python" / "django"
    storage = {
        "disk-full": lambda: pytest_suite(
            "disk full: RLIMIT_FSIZE mid-update and on a first build; a real 1 MiB tmpfs",
            [STORAGE_TESTS], STORAGE_CASES["disk-full"]),
        "read-only": lambda: pytest_suite(
            "read-only `.knoxidx/` (0555/0444, root's overrides dropped)", [STORAGE_TESTS],
            STORAGE_CASES["read-only"]),
        "damaged": lambda: pytest_suite(
            "damaged `index.db`: cut at a page / mid-page, header, zeroed pages, random bytes, "
            "no tables; CLI, HTTP, watcher", [STORAGE_TESTS], STORAGE_CASES["damaged"]),
    }
    embedding = ["tests/reliability/test_embedding_faults.py",
                 "tests/retrieval/test_voyage.py", "tests/retrieval/test_resilience.py"]
    if quick:
        return {
            "kill-index": lambda: kill_index(generated(tmp, 120), 3, seed=3, workdir=tmp),
            "kill-index-pid": lambda: kill_index_pid_only(generated(tmp, 1500), 3, seed=3,
                                                          workdir=tmp),
            "kill-watch": lambda: kill_watch(generated(tmp, 60), 2, seed=5, workdir=tmp),
            "concurrency": lambda: concurrency(generated(tmp, 40), 6, workdir=tmp),
            "separate-writer": lambda: separate_writer(generated(tmp, 40), 6, workdir=tmp),
            **storage,
            "embedding": lambda: pytest_suite(EMBEDDING_TITLE, embedding),
            "load": lambda: load(generated(tmp, 60), 5, workdir=tmp),
        }
    return {
        "kill-index": lambda: kill_index(small, 50, seed=1, workdir=tmp),
        # generated: large enough that resolution (over 200 files, forked workers) is caught
        "kill-index-pid": lambda: kill_index_pid_only(generated(tmp, 1500), 50, seed=1,
                                                      workdir=tmp),
        "kill-watch": lambda: kill_watch(small, 20, seed=2, workdir=tmp),
        "concurrency": lambda: concurrency(large, 60, workdir=tmp),
        "separate-writer": lambda: separate_writer(large, 60, workdir=tmp),
        **storage,
        "embedding": lambda: pytest_suite(EMBEDDING_TITLE, embedding),
        "load": lambda: load(large, 60, workdir=tmp),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.reliability", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="CI sizes on generated repositories")
    ap.add_argument("--only", default=",".join(SCENARIOS),
                    help=f"comma-separated subset of {','.join(SCENARIOS)}")
    ap.add_argument("--update-doc", action="store_true",
                    help="rewrite the measured rows of RELIABILITY.md")
    ap.add_argument("--from-results", type=Path, default=None, metavar="JSON",
                    help="run nothing: print (and with --update-doc, write) the rows of an "
                         "earlier run's results file")
    args = ap.parse_args(argv)
    if args.from_results is not None:
        rows = table_rows(json.loads(args.from_results.read_text()))
        print("\n".join(rows))
        if args.update_doc:
            update_doc(rows)
        return 0
    chosen = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(chosen) - set(SCENARIOS))
    if unknown:
        ap.error(f"unknown scenario(s): {', '.join(unknown)}")
    results: dict[str, Any] = {
        "date": date.today().isoformat(), "quick": args.quick, "cores": os.cpu_count(),
        "load_average": os.getloadavg(), "python": platform.python_version(), "scenarios": {},
    }
    failed = False
    with tempfile.TemporaryDirectory(prefix="knoxidx-reliability-") as tmp:
        runs = plan(args.quick, Path(tmp))
        for name in chosen:
            t0 = time.monotonic()
            print(f"== {name} ...", file=sys.stderr, flush=True)
            outcome = runs[name]()
            seconds = round(time.monotonic() - t0, 1)
            failed |= not outcome.ok
            results["scenarios"][name] = {"title": outcome.name, "trials": outcome.trials,
                                          "ok": outcome.ok, "failures": outcome.failures,
                                          "figures": outcome.figures, "seconds": seconds}
            print(f"   {'ok' if outcome.ok else 'FAILED'}: {outcome.trials} trials in "
                  f"{seconds} s; {json.dumps(outcome.figures)}", file=sys.stderr, flush=True)
            for failure in outcome.failures[:10]:
                print(f"   - {failure}", file=sys.stderr)
    results["load_average_after"] = os.getloadavg()
    RESULTS.mkdir(exist_ok=True)
    suffix = "-quick" if args.quick else ""
    out = RESULTS / f"reliability-{results['date']}{suffix}.json"
    if out.exists():  # keep the scenarios of an earlier run today that this one skipped
        earlier = json.loads(out.read_text())
        results["scenarios"] = {**earlier.get("scenarios", {}), **results["scenarios"]}
    out.write_text(json.dumps(results, indent=2) + "\n")
    rows = table_rows(results)
    print("\n".join(rows))
    if args.update_doc:
        update_doc(rows)
    return 1 if failed else 0


COMMANDS = {
    "kill-index": "python -m bench.reliability --only kill-index",
    "kill-index-pid": "python -m bench.reliability --only kill-index-pid",
    "kill-watch": "python -m bench.reliability --only kill-watch",
    "concurrency": "python -m bench.reliability --only concurrency",
    "separate-writer": "python -m bench.reliability --only separate-writer",
    **{name: f"pytest {STORAGE_TESTS} -k '{select}'" for name, select in STORAGE_CASES.items()},
    "embedding": "pytest tests/reliability/test_embedding_faults.py "
                 "tests/retrieval/test_voyage.py tests/retrieval/test_resilience.py",
    "load": "python -m bench.reliability --only load",
}


def table_rows(results: dict[str, Any]) -> list[str]:
    rows = []
    order = {name: i for i, name in enumerate(SCENARIOS)}
    for name, data in sorted(results["scenarios"].items(),
                             key=lambda item: order.get(item[0], len(order))):
        verdict = "data lost: 0; errors: clear" if data["ok"] else \
            f"**FAILED**: {'; '.join(data['failures'][:2])}"
        rows.append(f"| {data['title']} | {data['trials']} | {verdict}; {_figures(name, data)}"
                    f" | `{COMMANDS[name]}` |")
    return rows


def _figures(name: str, data: dict[str, Any]) -> str:
    f = data["figures"]
    if name == "kill-index":
        return (f"{f.get('kills')} kills landed ({f.get('finished_before_the_kill')} runs "
                f"finished first), at quartiles {f.get('kill_point_quartiles')} of the run")
    if name == "kill-index-pid":
        return (f"{f.get('kills')} kills mid-resolution; workers left {f.get('workers_left')}, "
                f"locks left {f.get('locks_left')}, tracebacks {f.get('tracebacks')}")
    if name == "kill-watch":
        landed = f.get("kills_landed") or {}
        return (f"{landed.get('during the batch', 0)} kills after the debounce with the batch "
                f"not yet logged (mid-update), {landed.get('after the batch', 0)} after it, "
                f"{landed.get('before the batch', 0)} before it; largest batch "
                f"{f.get('largest_batch_s')} s")
    if name == "concurrency":
        return (f"{f.get('requests')} requests ({f.get('requests_per_s')}/s), "
                f"{f.get('failed_requests')} failed, {f.get('pair_checks')} pair checks, "
                f"{f.get('half_applied_seen')} half-applied, {f.get('batches_written')} "
                f"batches, save-to-visible p50 {f.get('save_to_visible_ms_p50')} ms")
    if name == "separate-writer":
        return (f"{f.get('requests')} requests ({f.get('requests_per_s')}/s), "
                f"{f.get('failed_requests')} failed, {f.get('pair_checks')} pair checks, "
                f"{f.get('half_applied_seen')} half-applied, {f.get('updates_written')} "
                f"updates (p50 {f.get('update_s_p50')} s), {f.get('stale_after_update')} "
                "not answered once written")
    if name == "load":
        from bench.reliability.load import describe

        met = "target met" if f.get("target_met") else "target NOT met"
        return f"{describe(f)}; {met}; statuses {f.get('statuses')}"
    passed = re.search(r"(\d+) passed", str(f.get("pytest", "")))
    skipped = re.search(r"(\d+) skipped", str(f.get("pytest", "")))
    return (f"{passed.group(1) if passed else 0} test cases passed"
            + (f", {skipped.group(1)} skipped" if skipped else ""))


def update_doc(rows: list[str]) -> None:
    text = DOC.read_text()
    start, end = "<!-- faults:start -->", "<!-- faults:end -->"
    head, _, rest = text.partition(start)
    _, _, tail = rest.partition(end)
    DOC.write_text(f"{head}{start}\n" + "\n".join(rows) + f"\n{end}{tail}")
