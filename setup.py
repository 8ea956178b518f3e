"""knoxidx's build: everything is in pyproject.toml but the modules compiled with mypyc.

The graph index's hot path (extraction, fact records, name resolution) and the lexical index's
per-file work (chunks, token counts, FTS and name rows) are plain, fully annotated Python that
mypyc compiles to C extension modules, as black and mypy ship themselves: a cold build does
~13 % less CPU work. The .py files ship beside the compiled modules and are what runs
wherever these are missing.

- A wheel (``pip install .``, ``python -m build``) compiles them.
- An editable install (``pip install -e .``, the README's) does not, so that an edited module
  is what runs; ``KNOXIDX_COMPILE=1 pip install -e .`` compiles them in place anyway (after
  editing one of them, install again or delete its ``*.so``).
- ``KNOXIDX_PURE=1`` never compiles. Nor does a machine without a C compiler or mypy: the
  build says so and installs pure Python.

Beside them, ``knoxidx/parse/_matches.c`` (the tags query's matches without a Python object
per capture, see its head) is compiled with tree-sitter's C library from the source
distribution of the py-tree-sitter version the build has (``pip download``; or from
``KNOXIDX_TREE_SITTER_SRC``, a directory holding that distribution's ``tree_sitter/core``). It
reads py-tree-sitter's objects, so knoxidx uses it only under that same version. Where the
source cannot be had (offline) or the compile fails, the build says so and goes on without
it: extraction then reads py-tree-sitter's matches, with the same facts.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import subprocess
import sys
import tarfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

STAMP = "knoxidx/compiled.json"
COMPILED = [
    "knoxidx/parse/file_index.py",
    "knoxidx/graph/denoted.py",
    "knoxidx/graph/edges.py",
    "knoxidx/graph/lookups.py",
    "knoxidx/graph/outside.py",
    "knoxidx/graph/overloads.py",
    "knoxidx/graph/resolve.py",
    "knoxidx/graph/scopes.py",
    "knoxidx/graph/scope_reads.py",
    "knoxidx/graph/lexical.py",
    "knoxidx/graph/members.py",
    "knoxidx/graph/type_arguments.py",
    "knoxidx/graph/elements.py",
    "knoxidx/graph/call_results.py",
    "knoxidx/graph/value_types.py",
    "knoxidx/graph/workspace.py",
    "knoxidx/parse/binding_types.py",
    "knoxidx/parse/block_variables.py",
    "knoxidx/parse/captures.py",
    "knoxidx/parse/compiled_queries.py",
    "knoxidx/parse/complexity.py",
    "knoxidx/parse/definitions.py",
    "knoxidx/parse/extract.py",
    "knoxidx/parse/references.py",
    "knoxidx/core/facts.py",
    "knoxidx/parse/name_paths.py",
    "knoxidx/parse/signatures.py",
    "knoxidx/parse/returns.py",
    "knoxidx/parse/binding_sites.py",
    "knoxidx/parse/siblings.py",
    "knoxidx/languages/common.py",
    "knoxidx/languages/go/hooks.py",
    "knoxidx/languages/go/build_constraints.py",
    "knoxidx/languages/java/argument_types.py",
    "knoxidx/languages/java/arguments.py",
    "knoxidx/languages/java/elements.py",
    "knoxidx/languages/java/hooks.py",
    "knoxidx/languages/java/jdk.py",
    "knoxidx/languages/java/lambdas.py",
    "knoxidx/languages/java/overloads.py",
    "knoxidx/languages/java/parameters.py",
    "knoxidx/languages/java/signatures.py",
    "knoxidx/languages/js/bound_types.py",
    "knoxidx/languages/js/elements.py",
    "knoxidx/languages/js/hooks.py",
    "knoxidx/languages/js/imports.py",
    "knoxidx/languages/js/jsdoc.py",
    "knoxidx/languages/js/outside.py",
    "knoxidx/languages/js/signatures.py",
    "knoxidx/languages/python/hooks.py",
    "knoxidx/languages/python/decorators.py",
    "knoxidx/languages/python/elements.py",
    "knoxidx/languages/python/fixtures.py",
    "knoxidx/languages/python/modules.py",
    "knoxidx/languages/python/outside.py",
    "knoxidx/languages/python/signatures.py",
    "knoxidx/languages/rust/hooks.py",
    "knoxidx/languages/rust/bound_types.py",
    "knoxidx/languages/rust/crates.py",
    "knoxidx/languages/rust/impls.py",
    "knoxidx/languages/rust/imports.py",
    "knoxidx/languages/rust/item_macros.py",
    "knoxidx/languages/rust/macro_scope.py",
    "knoxidx/languages/rust/module_tree.py",
    "knoxidx/languages/rust/outside.py",
    "knoxidx/languages/rust/payloads.py",
    "knoxidx/languages/rust/signatures.py",
    # the lexical index's per-file work in the parse workers (chunks, token counts, FTS and
    # name rows): what `--no-embed` adds to `--graph-only`
    "knoxidx/retrieval/chunker.py",
    "knoxidx/retrieval/names.py",
    "knoxidx/retrieval/terms.py",
    "knoxidx/retrieval/tokens.py",
]
NATIVE = "knoxidx/parse/_matches.c"
NATIVE_MODULE = "knoxidx.parse._matches"


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
        modules = mypycify(["--ignore-missing-imports", "--follow-imports=silent", *COMPILED],
                           opt_level="3")
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - mypy's type errors exit
        return _pure(f"mypyc failed ({exc})")
    native = _native_extension()
    return [*modules, native] if native is not None else modules


def _native_extension() -> Extension | None:
    """``_matches.c`` with tree-sitter's C library of the py-tree-sitter version at hand, or
    None (said why) where that library's source cannot be had."""
    try:
        import tree_sitter

        version = tree_sitter.__version__
        lib = os.path.join(_tree_sitter_source(version), "tree_sitter", "core", "lib")
        if not os.path.isfile(os.path.join(lib, "src", "lib.c")):
            raise OSError(f"no tree-sitter C library in {lib}")
    except (ImportError, AttributeError, OSError, subprocess.CalledProcessError,
            tarfile.TarError) as exc:
        print(f"knoxidx: not building the native query matches ({exc}); extraction reads "
              "py-tree-sitter's", file=sys.stderr)
        _remove_built(NATIVE)
        return None
    return Extension(
        NATIVE_MODULE, [NATIVE, os.path.join(lib, "src", "lib.c")],
        include_dirs=[os.path.join(lib, "include"), os.path.join(lib, "src")],
        # (the library's symbols hidden, as py-tree-sitter builds it: exported, they could be
        # interposed, and the compiler inlined none of its small functions into the query
        # cursor's loop, which then ran ~20 % more instructions)
        define_macros=[("KNOXIDX_TREE_SITTER_VERSION", f'"{version}"'),
                       ("TREE_SITTER_HIDE_SYMBOLS", None), ("_DEFAULT_SOURCE", None)],
        # link-time optimisation: the query cursor's loop with the library's small functions
        # (and this module's calls into it) inlined ran 12 % fewer instructions than at -O3
        # alone over the benchmark corpus (BENCHMARKS.md)
        extra_compile_args=["-std=c11", "-fvisibility=hidden", "-O3", "-flto"],
        extra_link_args=["-O3", "-flto"])


def _tree_sitter_source(version: str) -> str:
    """A directory holding py-tree-sitter ``version``'s source distribution, unpacked:
    ``KNOXIDX_TREE_SITTER_SRC``, or else downloaded from the package index into ``build/``."""
    given = os.environ.get("KNOXIDX_TREE_SITTER_SRC")
    if given:
        return given
    folder = os.path.join("build", "tree-sitter-src")
    unpacked = os.path.join(folder, f"tree_sitter-{version}")
    if not os.path.isdir(unpacked):
        os.makedirs(folder, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--no-binary", ":all:", f"tree-sitter=={version}", "-d", folder],
                       check=True, timeout=300)
        with tarfile.open(os.path.join(folder, f"tree_sitter-{version}.tar.gz")) as archive:
            try:
                archive.extractall(folder, filter="data")
            except TypeError:  # Python before 3.10.12 / 3.11.4: no extraction filters
                archive.extractall(folder)
    return unpacked


def _pure(why: str) -> list:
    """Install pure Python, and take away what an earlier compile left beside the sources (an
    editable install's ``*.so``) with the stamp written for this one: Python imports a
    compiled module before its source, and the stamp vouched for it, so a failed compile
    after an edit silently ran the old code."""
    print(f"knoxidx: {why}; installing pure Python", file=sys.stderr)
    for path in [*COMPILED, NATIVE]:
        _remove_built(path)
    if os.path.exists(STAMP):
        os.remove(STAMP)
    return []


def _remove_built(path: str) -> None:
    """What an earlier compile of ``path`` left beside it (an editable install's)."""
    stem = glob.escape(os.path.splitext(path)[0])
    for built in glob.glob(stem + ".*.so") + glob.glob(stem + ".*.pyd"):
        os.remove(built)


def _stamp() -> None:
    """What was compiled, by content: knoxidx refuses to index with compiled modules whose
    sources have changed since (``knoxidx.parse.engine.check_compiled``)."""
    digests = {path: hashlib.sha256(open(path, "rb").read()).hexdigest()
               for path in [*COMPILED, NATIVE]}
    with open(STAMP, "w") as fh:
        json.dump(digests, fh, indent=1, sort_keys=True)


class _BuildExt(build_ext):
    """A failed compile (no C compiler, no Python headers) installs pure Python instead; one
    of the native query matches alone installs without them."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any compiler failure: fall back
            self.extensions = _pure(f"compiling failed ({exc})")

    def build_extension(self, ext: Extension) -> None:
        if ext.name != NATIVE_MODULE:
            super().build_extension(ext)
            return
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001 - any compiler failure: go on without it
            print(f"knoxidx: compiling the native query matches failed ({exc}); extraction "
                  "reads py-tree-sitter's", file=sys.stderr)
            _remove_built(NATIVE)


setup(ext_modules=_ext_modules(), cmdclass={"build_ext": _BuildExt})
