"""Peak memory of a process tree (the indexer and its workers): summed PSS, sampled from /proc."""

from __future__ import annotations

import os
import resource
import subprocess
import threading
import time
from dataclasses import dataclass


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.extend(int(c) for c in fh.read().split())
    except OSError:
        pass
    return out


def _rss_kib(pid: int) -> int:
    """Proportional set size: shared pages (a forked worker's copy-on-write inheritance)
    split between the processes sharing them, so the tree's sum is its real footprint.
    Plain RSS where smaps_rollup is unavailable."""
    for path, key in ((f"/proc/{pid}/smaps_rollup", "Pss:"), (f"/proc/{pid}/status", "VmRSS:")):
        try:
            with open(path) as fh:
                for line in fh:
                    if line.startswith(key):
                        return int(line.split()[1])
        except OSError:
            continue
    return 0


def tree_rss_kib(pid: int) -> int:
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += _rss_kib(p)
        stack.extend(_children(p))
    return total


@dataclass
class Run:
    seconds: float
    peak_mib: float
    returncode: int
    stdout: str
    stderr: str
    # user + system CPU of the process and every descendant it waited for (its workers)
    cpu_seconds: float = float("nan")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_measured(cmd: list[str], env: dict[str, str] | None = None, timeout: float = 3600,
                 cwd: str | None = None, sample: bool = True) -> Run:
    """Run ``cmd``; wall time and the peak of the summed PSS of it and its children. Reading
    ``smaps_rollup`` 20 times a second slows what it watches (8-27 % for a cold build on 2
    cores): ``sample=False`` only times it (peak NaN). Also the CPU the command's process tree
    used (what this process's reaped children used before and after it, so no other child
    may end meanwhile)."""
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=cwd)
    peak = 0
    done = threading.Event()

    def sample_tree() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss_kib(proc.pid))
            done.wait(0.05)

    sampler = threading.Thread(target=sample_tree, daemon=True)
    if sample:
        sampler.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        done.set()
        if sample:
            sampler.join()
    return Run(time.perf_counter() - start, peak / 1024 if sample else float("nan"),
               proc.returncode, out, err, _children_cpu() - cpu)
