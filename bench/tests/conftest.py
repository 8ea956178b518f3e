"""Make bench/ importable as a directory of scripts (accuracy.py, oracles/common.py)."""

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
for p in (BENCH, BENCH / "oracles"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
