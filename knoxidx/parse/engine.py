"""Which knoxidx built an index: a fingerprint of the code that decides what the graph
contains, so that an upgrade re-reads every file once, and the check that a module compiled by
mypyc still matches its source."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

from knoxidx.core.errors import KnoxidxError

# the packages (and the modules of update/) whose code decides what the graph contains:
# extraction, resolution, what an update re-resolves, and the module layer (the ones not
# there are skipped)
ENGINE_PACKAGES = ("core", "languages", "parse", "graph", "update/graph_update.py",
                   "update/invalidation.py", "update/module_layer.py")
# the meta key of the index that holds the engine fingerprint its facts were extracted with
ENGINE_META_KEY = "engine"


@cache
def engine_fingerprint() -> str:
    """A hash of the code that decides what the graph contains (queries, extraction,
    resolution) and of the grammars' versions, so an upgraded knoxidx never leaves a graph
    built by the old rules: an index stamped with another one is read again whole, older or
    newer alike (a hash has no order), and so are its chunks (``chunker_id``)."""
    import xxhash

    package = Path(__file__).resolve().parent.parent
    check_compiled(package)
    h = xxhash.xxh3_64(sys.version.encode())  # facts are stored with marshal
    for path in engine_sources(package):
        h.update(path.relative_to(package).as_posix().encode())
        h.update(path.read_bytes())
    for installed in grammar_distributions():
        h.update(installed.encode())
    return h.hexdigest()


def engine_sources(package: Path) -> list[Path]:
    """The files :func:`engine_fingerprint` hashes: code, queries and the native matches."""
    found: list[Path] = []
    for sub in ENGINE_PACKAGES:
        top = package / sub
        found.extend([top] if top.is_file() else sorted(top.rglob("*")))
    return [path for path in found if path.suffix in (".py", ".scm", ".c")
            or path.name == "BASE"]


def grammar_distributions() -> list[str]:
    """tree-sitter's and each grammar's installed distribution, by its ``.dist-info`` folder's
    name (which carries the version): an upgraded grammar gives other trees for the same bytes.
    Read from the folder names beside each package, ~1 ms where ``importlib.metadata`` took
    ~60 ms; a package installed without one counts by its name alone."""
    from importlib.util import find_spec

    from knoxidx.languages.registry import LANGUAGES

    found: list[str] = []
    for name in sorted({"tree_sitter", *(spec.grammar_module for spec in LANGUAGES)}):
        spec = find_spec(name)
        if spec is None or spec.origin is None:
            found.append(f"{name} (not installed)")
            continue
        site = Path(spec.origin).resolve().parent.parent
        found.extend(sorted(p.name for p in site.glob(f"{name}-*.dist-info")) or [name])
    return found


def check_compiled(package: Path) -> None:
    """Refuse to index with a module compiled by mypyc (setup.py), or the native query matches
    compiled from ``_matches.c``, from a source that has changed since: Python imports the
    compiled one, so the edit would silently not run while the engine fingerprint, taken from
    the sources, claimed it did."""
    stamp = package / "compiled.json"
    if not stamp.exists():
        return
    import hashlib
    import json
    from importlib.machinery import EXTENSION_SUFFIXES

    for rel, digest in json.loads(stamp.read_text()).items():
        source = package.parent / rel
        compiled = [source.with_suffix(suffix) for suffix in EXTENSION_SUFFIXES]
        if not any(c.exists() for c in compiled):
            continue  # installed pure (the compiler failed) or the compiled module deleted
        if hashlib.sha256(source.read_bytes()).hexdigest() != digest:
            raise KnoxidxError(
                f"{rel} has changed since it was compiled: compile again "
                "(`KNOXIDX_COMPILE=1 pip install -e .`) or delete the compiled modules "
                f"(`find {package} -name '*.so' -delete`)")
