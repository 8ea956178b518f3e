"""The mypyc-compiled build (setup.py): a compiled module whose source changed since is refused,
not silently run in the edit's place; the modules setup.py compiles are the hot path's."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
import tomllib

from knoxidx.core.errors import KnoxidxError
from knoxidx.parse.engine import check_compiled

ROOT = Path(__file__).resolve().parent.parent


def _package(tmp_path: Path, source: bytes, stamped: bytes, compiled: bool) -> Path:
    package = tmp_path / "knoxidx"
    (package / "graph").mkdir(parents=True)
    (package / "graph" / "resolve.py").write_bytes(source)
    if compiled:
        (package / "graph" / f"resolve{EXTENSION_SUFFIXES[0]}").write_bytes(b"\x7fELF")
    (package / "compiled.json").write_text(json.dumps(
        {"knoxidx/graph/resolve.py": hashlib.sha256(stamped).hexdigest()}))
    return package


def test_a_compiled_module_edited_since_is_refused_with_the_fix(tmp_path) -> None:
    package = _package(tmp_path, b"x = 2\n", b"x = 1\n", compiled=True)
    with pytest.raises(KnoxidxError, match=r"knoxidx/graph/resolve.py has changed since it was "
                                           r"compiled: compile again"):
        check_compiled(package)


def test_an_unchanged_compiled_module_passes(tmp_path) -> None:
    check_compiled(_package(tmp_path, b"x = 1\n", b"x = 1\n", compiled=True))


def test_a_pure_install_is_not_checked(tmp_path) -> None:
    # the compiler failed (setup.py installs pure Python) or the compiled modules were deleted
    check_compiled(_package(tmp_path, b"x = 2\n", b"x = 1\n", compiled=False))
    check_compiled(tmp_path / "nothing-here")  # no stamp: never compiled


def _compiled_modules() -> list[str]:
    """setup.py's COMPILED list, read from its text (setup.py runs setup() when imported)."""
    return [line.strip().strip('",') for line in (ROOT / "setup.py").read_text().splitlines()
            if line.strip().startswith('"knoxidx/')]


def test_setup_compiles_existing_modules_of_the_graph_engine() -> None:
    listed = _compiled_modules()
    assert "knoxidx/graph/resolve.py" in listed and "knoxidx/parse/extract.py" in listed
    assert all((ROOT / path).is_file() for path in listed), listed


@pytest.mark.heavy
def test_the_compiled_modules_pass_the_type_check_their_build_runs(tmp_path) -> None:
    """What mypyc checks before it compiles (setup.py's arguments): a type error here would
    make a wheel build fall back to pure Python, so it fails here first, in any build."""
    from mypy import api

    listed = _compiled_modules()
    out, err, status = api.run(["--ignore-missing-imports", "--follow-imports=silent",
                                "--cache-dir", str(tmp_path), *[str(ROOT / p) for p in listed]])
    assert status == 0, out + err


def test_every_query_file_is_package_data() -> None:
    """A wheel (`pip install .`, the compiled build) once held some query files and not others
    (JavaScript and TypeScript then ran without the shared ECMAScript query: 12,506
    JavaScript matches on the benchmark corpus instead of 157,083). Every query file under
    the package is package data of the package that holds it."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_data = pyproject["tool"]["setuptools"]["package-data"]
    files = sorted((ROOT / "knoxidx").rglob("*.scm"))
    assert files
    missing = []
    for file in files:
        rel = file.relative_to(ROOT).as_posix()
        covered = [
            glob for package, globs in package_data.items() for glob in globs
            if rel.startswith(package.replace(".", "/") + "/")
            and fnmatch.fnmatch(rel[len(package) + 1:], glob)]
        if not covered:
            missing.append(rel)
    assert missing == []


def test_a_failed_compile_takes_away_what_an_earlier_one_left(tmp_path) -> None:
    """``KNOXIDX_COMPILE=1 pip install -e .`` after an edit that mypyc rejects installed pure
    Python but left the earlier build's modules beside the sources, and wrote the stamp for
    the edited sources: Python imported the stale compiled module, and ``check_compiled``
    vouched for it, so the old code ran in silence. setup.py now deletes both. Run here as a
    real ``setup.py build_ext`` against a mypyc whose compile fails."""
    stale, stale_native = _source_tree(tmp_path)
    done = _build_ext(tmp_path, "raise SystemExit(1)")
    assert "mypyc failed" in done.stderr and "installing pure Python" in done.stderr, done.stderr
    assert not stale.exists() and not stale_native.exists()
    assert not (tmp_path / "knoxidx" / "compiled.json").exists()


def test_without_tree_sitters_c_source_the_build_goes_on_without_the_native_matches(
        tmp_path) -> None:
    """Offline, or where the source given is not py-tree-sitter's: the build says so, takes
    away an earlier build's native module (it would be stale) and compiles the rest."""
    _, stale_native = _source_tree(tmp_path)
    done = _build_ext(tmp_path, "return []", KNOXIDX_TREE_SITTER_SRC=str(tmp_path / "nowhere"))
    # (what setup() does next depends on the setuptools at hand: not this test's business)
    assert "not building the native query matches" in done.stderr, done.stderr
    assert "no tree-sitter C library" in done.stderr
    assert not stale_native.exists()
    stamp = json.loads((tmp_path / "knoxidx" / "compiled.json").read_text())
    assert "knoxidx/parse/_matches.c" in stamp


def _source_tree(tmp_path: Path) -> tuple[Path, Path]:
    """setup.py in a tree of stand-ins for the modules it compiles, with an earlier build's
    compiled modules beside them (returned)."""
    for path in [*_compiled_modules(), "knoxidx/parse/_matches.c"]:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x = 1\n")
    shutil.copy(ROOT / "setup.py", tmp_path)
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    stale = tmp_path / f"knoxidx/graph/resolve{EXTENSION_SUFFIXES[0]}"
    stale.write_bytes(b"\x7fELF stale")
    stale_native = tmp_path / f"knoxidx/parse/_matches{EXTENSION_SUFFIXES[0]}"
    stale_native.write_bytes(b"\x7fELF stale")
    return stale, stale_native


def _build_ext(tmp_path: Path, mypycify_body: str,
               **env_vars: str) -> subprocess.CompletedProcess[str]:
    """``setup.py build_ext`` in ``tmp_path`` with a stand-in mypyc whose ``mypycify`` runs
    ``mypycify_body``."""
    fake = tmp_path / "fake_mypyc" / "mypyc"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "build.py").write_text(f"def mypycify(*args, **kwargs):\n    {mypycify_body}\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "fake_mypyc"), **env_vars}
    return subprocess.run([sys.executable, "setup.py", "build_ext"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
