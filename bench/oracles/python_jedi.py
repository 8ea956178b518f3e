"""Python ground truth for call/extends resolution, produced by jedi.

Why: knoxidx resolves calls statically and cheaply; to measure how often it is
right we need an independent, much more thorough resolver.  jedi does real
type inference (self/cls, return types, imports, re-exports, star imports),
so it is the oracle here -- slow, but cached.

What it does, per ``.py`` file of CORPUS_DIR:

* finds every call site with tree-sitter-python (``f(...)``, ``a.b.c(...)``)
  and asks ``jedi.Script.goto(line, col, follow_imports=True)`` at the
  callee's *name* (``c`` in ``a.b.c()``).  Targets are kept only when they lie
  inside CORPUS_DIR and are the name of a ``def`` or ``class`` statement
  (decorated or not; a target jedi leaves on an import is followed on)
  -> ``call`` rows;
* does the same for each base class in ``class X(Base, mod.Mixin)``
  -> ``extends`` rows (only ``class`` targets);
* lists every function/class definition jedi sees
  (``get_names(all_scopes=True, definitions=True)``) -> ``def`` rows;
* writes one ``file`` row per examined file (with counters), so coverage is
  explicit even for files that produced nothing.

Row format (one JSON object per line)::

    {"kind": "call"|"extends", "path", "line", "col", "name",
     "target_path", "target_line", "target_name"}
    {"kind": "def", "path", "line", "col", "name", "def_type"}
    {"kind": "file", "path", "sites", "resolved", "timeouts", "errors"}

``line`` is 1-based, ``col`` 0-based in code points (jedi's unit);
``target_line`` is the line of the target definition's *name*; ``name`` is the
name as written at the site, ``target_name`` the definition's own name (they
differ for ``from m import f as g; g()``).

Usage::

    python bench/oracles/python_jedi.py CORPUS_DIR OUT.jsonl [--max-files N]
        [--subset stride|first] [--jobs J] [--timeout SECONDS] [--no-cache] [--retry-failed]
"""

from __future__ import annotations

import argparse
import fcntl
import inspect
import multiprocessing
import os
import shutil
import signal
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import jedi
import jedi.inference.cache
import jedi.inference.gradual.typeshed
import jedi.plugins.pytest
import parso.cache
import tree_sitter_python as tsp
from common import (
    CACHE_ROOT,
    FileCache,
    Row,
    corpus_key,
    count_kinds,
    list_files,
    select_subset,
    write_jsonl,
)
from tree_sitter import Language, Node, Parser, Query, QueryCursor

ORACLE_NAME = "python_jedi"
# Part of the cache key: bump whenever a change alters which rows are produced.
# 4: jedi's per-function inference budget is reset for every site (`_fresh_inference_budget`), and
# its bundled django stubs are off (`_without_bundled_django_stubs`).
# 5: a pytest fixture parameter is answered at every site, not the first of each file only
# (`_pytest_modules_listed`).
ORACLE_VERSION = "5"
PY_LANGUAGE = Language(tsp.language())

# The callee's name node: `f(...)` -> f, `a.b.c(...)` -> c.  Calls of anything
# else (`x[0]()`, `f()()`, `(lambda: 0)()`) have no name to ask about.
CALL_QUERY = """
(call function: [
  (identifier) @callee
  (attribute attribute: (identifier) @callee)
])
"""
CLASS_QUERY = "(class_definition superclasses: (argument_list) @bases)"


# --------------------------------------------------------------------------- sites


@dataclass(frozen=True)
class Site:
    kind: str  # "call" | "extends"
    line: int  # 1-based
    col: int  # 0-based, code points
    name: str


def base_name_node(expr: Node) -> Node | None:
    """The name node of one base-class expression, or None (calls, splats, metaclass=...)."""
    if expr.type == "identifier":
        return expr
    if expr.type == "attribute":
        return expr.child_by_field_name("attribute")
    if expr.type == "subscript":  # Generic-style base: Base[T]
        value = expr.child_by_field_name("value")
        return base_name_node(value) if value is not None else None
    return None


def find_sites(data: bytes) -> list[Site]:
    """All call-callee names and base-class names in one file, in source order."""
    tree = Parser(PY_LANGUAGE).parse(data)

    def site(kind: str, node: Node) -> Site:
        line_start = node.start_byte - node.start_point.column
        col = len(data[line_start : node.start_byte].decode("utf-8", errors="replace"))
        return Site(kind, node.start_point.row + 1, col, node.text.decode("utf-8", errors="replace"))

    sites: list[Site] = []
    calls = QueryCursor(Query(PY_LANGUAGE, CALL_QUERY)).captures(tree.root_node)
    sites.extend(site("call", n) for n in calls.get("callee", []))
    bases = QueryCursor(Query(PY_LANGUAGE, CLASS_QUERY)).captures(tree.root_node)
    for arglist in bases.get("bases", []):
        for expr in arglist.named_children:
            name = base_name_node(expr)
            if name is not None:
                sites.append(site("extends", name))
    return sorted(set(sites), key=lambda s: (s.line, s.col, s.kind))


# --------------------------------------------------------------------------- jedi


def import_root(corpus: Path) -> Path:
    """Directory to put on sys.path so that the corpus' absolute imports resolve.

    A corpus like ``python/django`` *is* the ``django`` package: ``import
    django.db`` only resolves when its parent is on sys.path.
    """
    root = corpus
    while (root / "__init__.py").is_file() and root.parent != root:
        root = root.parent
    return root


def definition_type(name: jedi.api.classes.Name) -> str | None:
    """'function'/'class' when ``name`` is the name of a def/class statement, else None.

    ``get_names(definitions=True)`` also yields imported names, whose
    ``.type`` is that of the imported object (``from m import C`` -> 'class')
    and which would be counted as a second definition of C.  So the decision is
    syntactic: the name's defining node must be a funcdef/classdef.  (Uses
    ``Name._name.tree_name``, jedi's link to the parso tree; there is no public
    equivalent, and it avoids running inference for every name.)
    """
    tree_name = getattr(name._name, "tree_name", None)
    if tree_name is None:
        return None
    definition = tree_name.get_definition()
    if definition is None or definition.type not in ("funcdef", "classdef"):
        return None
    if definition.name is not tree_name:  # defensive: must be the def's own name
        return None
    return "function" if definition.type == "funcdef" else "class"


def _without_bundled_django_stubs() -> None:
    """Make jedi read django's own source where it would read the django-stubs it ships.

    jedi loads ``third_party/django-stubs`` for any package named ``django`` and answers from
    them where it can (a method a class inherits from a base in another module: every
    ``self.log(...)`` of ``db/backends/postgresql/creation.py``, defined in
    ``db/backends/base/creation.py``); the stubs lie outside the corpus, so those sites went
    unanswered.  The corpus *is* the code being judged, and the stubs describe another django
    version; pointing their path at nothing makes jedi fall back to the source, as it does for
    any package it has no stubs for.
    """
    typeshed = jedi.inference.gradual.typeshed
    if not hasattr(typeshed, "DJANGO_INIT_PATH"):
        raise RuntimeError(f"jedi {jedi.__version__} no longer names its django stubs DJANGO_INIT_PATH: "
                           "check how jedi.inference.gradual.typeshed loads them")
    typeshed.DJANGO_INIT_PATH = Path(os.devnull) / "django-stubs" / "__init__.pyi"


def _pytest_modules_listed() -> None:
    """Make jedi's pytest plugin keep the modules a fixture may come from as a list.

    It memoizes ``_iter_pytest_modules``, a generator, per Script, and so keeps the generator
    object itself: the first fixture parameter inferred consumes it, and every later one on
    the Script finds the rest of it, or nothing (of click's 448 `runner.invoke` sites, 88 were
    answered, about the first of each test module).  Memoized as a list, each query sees what
    a fresh Script would.
    """
    plugin = jedi.plugins.pytest
    memoized = plugin._iter_pytest_modules
    if getattr(memoized, "listed", False):
        return
    generators = [cell.cell_contents for cell in memoized.__closure__ or ()
                  if inspect.isgeneratorfunction(cell.cell_contents)]
    if len(generators) != 1:
        raise RuntimeError(f"jedi {jedi.__version__} no longer memoizes the generator "
                           "_iter_pytest_modules: check how its pytest plugin lists modules")
    generator = generators[0]

    @jedi.inference.cache.inference_state_method_cache()
    def listed(module_context: object, skip_own_module: bool = False) -> list[object]:
        return list(generator(module_context, skip_own_module=skip_own_module))

    listed.listed = True  # type: ignore[attr-defined]
    plugin._iter_pytest_modules = listed


class CallTimeout(Exception):
    pass


def _raise_timeout(signum: int, frame: object) -> None:
    raise CallTimeout


class Resolver:
    """Per-process jedi state (one per worker; a fresh Script per file)."""

    def __init__(self, corpus: Path, timeout: float) -> None:
        self.corpus = corpus.resolve()
        self.timeout = timeout
        environment = jedi.api.environment.InterpreterEnvironment()
        is_package = (self.corpus / "__init__.py").is_file()
        self.project = jedi.Project(
            self.corpus,
            sys_path=[str(import_root(self.corpus)), *environment.get_sys_path()],
            smart_sys_path=not is_package,
        )
        self.environment = environment
        signal.signal(signal.SIGALRM, _raise_timeout)
        # parso evicts parsed modules from its in-memory cache once it holds 600
        # and they are 10 minutes old, but jedi still reads them back from that
        # cache (parser_utils.get_parso_cache_node): in a long-running worker
        # every goto() touching an evicted module then fails with
        # KeyError(path).  Never evict; a worker holds at most one corpus.
        parso.cache._CACHED_SIZE_TRIGGER = sys.maxsize

    def _script(self, code: str, path: Path) -> jedi.Script:
        return jedi.Script(code, path=path, project=self.project, environment=self.environment)

    @staticmethod
    def _to_definition(name: jedi.api.classes.Name, hops: int = 3) -> jedi.api.classes.Name:
        """Follow a target that is still an import (``from .m import C`` in a package
        ``__init__``: jedi's goto sometimes stops there) on to the def/class it names."""
        for _ in range(hops):
            if definition_type(name) is not None or name.type not in ("function", "class"):
                return name
            following = [n for n in name.goto(follow_imports=True) if n != name]
            if not following:
                return name
            name = following[0]
        return name

    @staticmethod
    def _fresh_inference_budget(script: jedi.Script) -> None:
        """Give the next query jedi's whole per-function inference budget, as a fresh Script would.

        jedi stops inferring inside a function or module once 300 inferences have been made in
        it (``syntax_tree._limit_value_infers``) and counts them in
        ``InferenceState.inferred_element_counts``, which, unlike its recursion limits, no API
        call resets: asked site after site on one Script, every site of a long function past
        the 300th inference in it gets no answer (``self.execute(...)`` at line 1232 of django's
        ``db/backends/base/schema.py``, inside the 370-line ``_alter_field``).  Emptying the
        counts makes the limit bound one query, what jedi means it to bound; the memoized
        inferences are kept, so answers do not change, only the sites past the budget get one.
        """
        counts = getattr(script._inference_state, "inferred_element_counts", None)
        if not isinstance(counts, dict):
            raise RuntimeError(f"jedi {jedi.__version__} no longer keeps inferred_element_counts: "
                               "check how syntax_tree._limit_value_infers budgets inferences")
        counts.clear()

    def _inside(self, module_path: Path | None) -> str | None:
        if module_path is None:
            return None
        try:
            return Path(module_path).resolve().relative_to(self.corpus).as_posix()
        except ValueError:
            return None

    def _resolve(self, script: jedi.Script, site: Site) -> list[tuple[str, int, str]]:
        """(target_path, target_line, target_name) of the in-corpus definitions a site names."""
        wanted = ("function", "class") if site.kind == "call" else ("class",)
        found: dict[tuple[str, int], str] = {}
        self._fresh_inference_budget(script)
        for t in script.goto(site.line, site.col, follow_imports=True):
            t = self._to_definition(t)
            target_path = self._inside(t.module_path)
            if target_path is not None and t.line is not None and definition_type(t) in wanted:
                found.setdefault((target_path, t.line), t.name)
        return [(path, line, name) for (path, line), name in found.items()]

    def examine(self, rel: str) -> list[Row]:
        """Rows for one file; never raises (a failure becomes a counter on the file row)."""
        try:
            return self._examine(rel)
        except Exception as exc:  # noqa: BLE001 - one bad file must not kill a 20-minute run
            return [{"kind": "file", "path": rel, "sites": 0, "resolved": 0, "timeouts": 0, "errors": 1,
                     "failed": f"{type(exc).__name__}: {exc}"[:300]}]

    def _examine(self, rel: str) -> list[Row]:
        abs_path = self.corpus / rel
        data = abs_path.read_bytes()
        code = data.decode("utf-8", errors="replace")
        data = code.encode("utf-8")  # keep tree-sitter byte offsets consistent with `code`
        script = self._script(code, abs_path)
        rows: list[Row] = []

        resolved = timeouts = errors = 0
        for name in script.get_names(all_scopes=True, definitions=True):
            def_type = definition_type(name)
            if def_type is not None:
                rows.append({"kind": "def", "path": rel, "line": name.line, "col": name.column,
                             "name": name.name, "def_type": def_type})

        sites = find_sites(data)
        first_error = ""
        for s in sites:
            try:
                signal.setitimer(signal.ITIMER_REAL, self.timeout)
                try:
                    targets = self._resolve(script, s)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except CallTimeout:
                timeouts += 1
                script = self._script(code, abs_path)  # inference state may be half-updated
                continue
            except Exception as exc:  # jedi has internal errors on odd code; one site is not worth a crash
                errors += 1
                first_error = first_error or f"{s.line}:{s.col} {type(exc).__name__}: {exc}"[:300]
                continue
            for target_path, target_line, target_name in targets:
                rows.append({"kind": s.kind, "path": rel, "line": s.line, "col": s.col, "name": s.name,
                             "target_path": target_path, "target_line": target_line, "target_name": target_name})
            resolved += bool(targets)

        file_row: Row = {"kind": "file", "path": rel, "sites": len(sites), "resolved": resolved,
                         "timeouts": timeouts, "errors": errors}
        if first_error:
            file_row["first_error"] = first_error
        rows.insert(0, file_row)
        return rows


_RESOLVER: Resolver | None = None
_SLOT_LOCK: object = None  # keeps the worker's cache-slot lock file open


def _claim_parso_cache_slot() -> Path:
    """A parso disk-cache directory owned by this worker alone.

    parso pickles parsed modules (typeshed stubs, corpus files) to disk and
    cannot read a truncated pickle back ("EOFError: Ran out of input") -- which
    is what two processes writing one file, or a run killed mid-write, leave
    behind.  So each worker locks one of a few numbered slots and empties it
    first: the cache only serves the worker's own run (~seconds lost per
    worker on re-parsing typeshed), and never a half-written pickle.
    """
    global _SLOT_LOCK
    base = CACHE_ROOT / "parso-slots"
    base.mkdir(parents=True, exist_ok=True)
    slot = 0
    while True:
        fh = open(base / f"slot-{slot}.lock", "w")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            slot += 1
            continue
        _SLOT_LOCK = fh
        shutil.rmtree(base / f"slot-{slot}", ignore_errors=True)
        return base / f"slot-{slot}"


def _init_worker(corpus: str, timeout: float) -> None:
    global _RESOLVER
    # jedi warns for every compiled-module import it cannot do; the corpus is never importable.
    warnings.filterwarnings("ignore", category=UserWarning, module=r"jedi\.")
    jedi.settings.cache_directory = str(_claim_parso_cache_slot())
    _without_bundled_django_stubs()
    _pytest_modules_listed()
    _RESOLVER = Resolver(Path(corpus), timeout)


def _examine(rel: str) -> tuple[str, list[Row], float]:
    assert _RESOLVER is not None
    start = time.perf_counter()
    rows = _RESOLVER.examine(rel)
    return rel, rows, time.perf_counter() - start


# --------------------------------------------------------------------------- driver


def run_oracle(corpus: Path, out: Path, max_files: int | None = None, subset: str = "stride",
               jobs: int = 2, timeout: float = 20.0, use_cache: bool = True,
               retry_failed: bool = False) -> dict[str, object]:
    """Produce OUT.jsonl for the corpus (cached per file); return run statistics."""
    corpus = corpus.resolve()
    t0 = time.perf_counter()
    all_files = list_files(corpus, (".py", ".pyi"))
    py_files = [p for p in all_files if p.endswith(".py")]
    chosen = select_subset(py_files, max_files, subset)

    salt = [ORACLE_NAME, ORACLE_VERSION, jedi.__version__, f"timeout={timeout}"]
    cache = FileCache(ORACLE_NAME, corpus_key(corpus, all_files, salt))
    results: dict[str, list[Row]] = {}
    if use_cache:
        for rel in chosen:
            cached = cache.get(rel)
            if cached is not None and not (retry_failed and (cached[0]["errors"] or cached[0]["timeouts"])):
                results[rel] = cached
    todo = [rel for rel in chosen if rel not in results]
    # Largest files first: better load balance across workers.
    todo.sort(key=lambda rel: -(corpus / rel).stat().st_size)

    per_file_seconds: list[float] = []
    if todo:
        print(f"[{ORACLE_NAME}] {len(chosen)} files ({len(results)} cached), examining {len(todo)} "
              f"with {jobs} jobs ...", file=sys.stderr)
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(jobs, initializer=_init_worker, initargs=(str(corpus), timeout)) as pool:
            for i, (rel, rows, secs) in enumerate(pool.imap_unordered(_examine, todo, chunksize=1), 1):
                cache.put(rel, rows)
                results[rel] = rows
                per_file_seconds.append(secs)
                if i % 50 == 0 or i == len(todo):
                    print(f"[{ORACLE_NAME}] {i}/{len(todo)} files, {time.perf_counter() - t0:.0f}s",
                          file=sys.stderr)

    rows = [row for rel in chosen for row in results[rel]]
    write_jsonl(out, rows)
    file_rows = [r for r in rows if r["kind"] == "file"]
    stats: dict[str, object] = {
        "corpus": str(corpus), "files": len(chosen), "computed": len(todo),
        "wall_s": round(time.perf_counter() - t0, 1),
        "file_cpu_s": round(sum(per_file_seconds), 1),
        "rows": count_kinds(rows),
        "sites": sum(int(r["sites"]) for r in file_rows),
        "resolved_sites": sum(int(r["resolved"]) for r in file_rows),
        "timeouts": sum(int(r["timeouts"]) for r in file_rows),
        "errors": sum(int(r["errors"]) for r in file_rows),
    }
    return stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path, help="corpus directory (e.g. ~/.cache/knoxidx-corpus/python/django)")
    ap.add_argument("out", type=Path, help="output JSONL")
    ap.add_argument("--max-files", type=int, default=None, help="quick mode: examine only N files")
    ap.add_argument("--subset", choices=("stride", "first"), default="stride",
                    help="how --max-files picks files from the sorted list (default: every k-th)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds allowed per goto() call")
    ap.add_argument("--no-cache", action="store_true", help="recompute even if cached")
    ap.add_argument("--retry-failed", action="store_true",
                    help="recompute cached files that had goto() errors or timeouts (e.g. after a loaded machine)")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        ap.error(f"not a directory: {args.corpus}")
    stats = run_oracle(args.corpus, args.out, args.max_files, args.subset, args.jobs, args.timeout,
                       use_cache=not args.no_cache, retry_failed=args.retry_failed)
    print(f"[{ORACLE_NAME}] {stats}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
