"""knoxidx's build: everything is in pyproject.toml but the modules compiled with mypyc.

The graph index's hot path (extraction, fact records, name resolution) is plain, fully
annotated Python that mypyc compiles to C extension modules, as black and mypy ship
themselves: a cold build does ~13 % less CPU work. The .py files ship beside the compiled
modules and are what runs wherever these are missing.

- A wheel (``pip install .``, ``python -m build``) compiles them.
- An editable install (``pip install -e .``, the README's) does not, so that an edited module
  is what runs; ``KNOXIDX_COMPILE=1 pip install -e .`` compiles them in place anyway (after
  editing one of them, install again or delete its ``*.so``).
- ``KNOXIDX_PURE=1`` never compiles. Nor does a machine without a C compiler or mypy: the
  build says so and installs pure Python.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

STAMP = "knoxidx/compiled.json"
COMPILED = [
    "knoxidx/graph/file_index.py",
    "knoxidx/graph/lookups.py",
    "knoxidx/graph/resolve.py",
    "knoxidx/graph/scopes.py",
    "knoxidx/graph/workspace.py",
    "knoxidx/indexer/definitions.py",
    "knoxidx/indexer/extract.py",
    "knoxidx/indexer/facts.py",
    "knoxidx/indexer/name_paths.py",
    "knoxidx/indexer/lang/common.py",
    "knoxidx/indexer/lang/go.py",
    "knoxidx/indexer/lang/java.py",
    "knoxidx/indexer/lang/js.py",
    "knoxidx/indexer/lang/python.py",
    "knoxidx/indexer/lang/rust.py",
]


def _wanted() -> bool:
    """Compile for a build of the package, not for its metadata (egg_info, dist_info, sdist),
    and for an editable build only when asked."""
    if os.environ.get("KNOXIDX_PURE") == "1":
        return False
    commands = set(sys.argv[1:])
    if commands & {"editable_wheel", "develop"}:
        return os.environ.get("KNOXIDX_COMPILE") == "1"
    return bool(commands & {"bdist_wheel", "build", "build_ext", "install"})


def _ext_modules() -> list:
    if not _wanted():
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("knoxidx: mypyc not available; installing pure Python", file=sys.stderr)
        return []
    _stamp()
    try:
        # the build environment has none of the runtime dependencies: their types are Any here
        return mypycify(["--ignore-missing-imports", "--follow-imports=silent", *COMPILED],
                        opt_level="3")
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - mypy's type errors exit
        return _pure(f"mypyc failed ({exc})")


def _pure(why: str) -> list:
    """Install pure Python, and take away what an earlier compile left beside the sources (an
    editable install's ``*.so``) with the stamp written for this one: Python imports a
    compiled module before its source, and the stamp vouched for it, so a failed compile
    after an edit silently ran the old code."""
    print(f"knoxidx: {why}; installing pure Python", file=sys.stderr)
    for path in COMPILED:
        for built in glob.glob(glob.escape(path[:-3]) + ".*.so") + glob.glob(
                glob.escape(path[:-3]) + ".*.pyd"):
            os.remove(built)
    if os.path.exists(STAMP):
        os.remove(STAMP)
    return []


def _stamp() -> None:
    """What was compiled, by content: knoxidx refuses to index with compiled modules whose
    sources have changed since (``knoxidx.indexer.engine.check_compiled``)."""
    digests = {path: hashlib.sha256(open(path, "rb").read()).hexdigest() for path in COMPILED}
    with open(STAMP, "w") as fh:
        json.dump(digests, fh, indent=1, sort_keys=True)


class _BuildExt(build_ext):
    """A failed compile (no C compiler, no Python headers) installs pure Python instead."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any compiler failure: fall back
            self.extensions = _pure(f"compiling failed ({exc})")


setup(ext_modules=_ext_modules(), cmdclass={"build_ext": _BuildExt})
