"""bench/procmon.py: a measured command's CPU counts the processes it forks and waits for (a
build's parse and resolver workers), not only its own."""

from __future__ import annotations

import sys

from bench.procmon import run_measured

# The parent forks a child that spins for 0.4 s of CPU, waits for it, and itself stays idle.
FORKS_A_BUSY_CHILD = """
import os, time
pid = os.fork()
if pid == 0:
    start = time.process_time()
    while time.process_time() - start < 0.4:
        pass
    os._exit(0)
os.waitpid(pid, 0)
"""


def test_the_cpu_of_a_measured_command_includes_its_waited_children() -> None:
    run = run_measured([sys.executable, "-c", FORKS_A_BUSY_CHILD], sample=False)
    assert run.returncode == 0
    assert run.cpu_seconds >= 0.4


def test_an_idle_command_uses_little_cpu() -> None:
    run = run_measured([sys.executable, "-c", "import time; time.sleep(0.5)"], sample=False)
    assert run.returncode == 0 and run.seconds >= 0.5
    assert run.cpu_seconds < 0.4  # the interpreter's start, not the wait
