"""Make bench/ importable as a directory of scripts (accuracy.py, oracles/common.py), and as
the package ``bench`` (bench.retrieval_eval)."""

import faulthandler
import os
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
for p in (BENCH, BENCH / "oracles", BENCH.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

# the fuzzer's tests crash its forked workers on purpose: no stack dumps in a passing run
os.register_at_fork(after_in_child=faulthandler.disable)
