"""CI's accuracy regression guard: Python `Calls` precision on a django subset must stay ≥ 0.85.

``python -m bench.ci_guard``. Fetches django from PyPI (the pinned release the corpus script
uses) when no corpus is cached, judges 60 of its files with the jedi oracle, and exits 1 below
the threshold. A regression guard, not a timing test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from bench.accuracy_suite import measure

DJANGO = "django==5.2.19"
THRESHOLD = 0.85
FILES = 60


def django_corpus() -> Path:
    root = Path(os.environ.get("KNOXIDX_CORPUS", Path.home() / ".cache" / "knoxidx-corpus"))
    target = root / "python" / "django"
    if (target / "__init__.py").exists():
        return target
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:",
                        "--no-deps", "-d", tmp, DJANGO], check=True)
        sdist = next(Path(tmp).glob("django-*.tar.gz"))
        with tarfile.open(sdist) as tar:
            tar.extractall(tmp, filter="data")
        unpacked = next(Path(tmp).glob("django-*/django"))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(unpacked, target)
    return target


def main() -> int:
    result = measure(django_corpus(), "python", FILES)
    overall = result["calls"]["overall"]
    print(f"python Calls on {FILES} django files: precision {overall['precision']:.3f}, "
          f"recall {overall['recall']:.3f} (guard: precision >= {THRESHOLD})")
    return 0 if overall["precision"] >= THRESHOLD else 1


if __name__ == "__main__":
    raise SystemExit(main())
