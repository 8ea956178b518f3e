"""Pathological repositories: the index completes, skips what it must with a counted reason,
stays queryable, and `verify` (a clean rebuild compared node for node) passes. The big forms
are behind the slow marker; the default run has cheaper ones of the same shape."""

from __future__ import annotations

import os
import re
import time
import unicodedata
from pathlib import Path

import pytest

from knoxidx.index import Index
from knoxidx.update.verify import verify_index
from tests.test_extract_bounds import DEEP

NORMAL = "def helper():\n    return 1\n\n\ndef caller():\n    return helper()\n"


def index(root: Path, **options):
    with Index.open(root, create=True) as idx:
        return idx.update(jobs=1, **options)


def assert_sound(root: Path) -> None:
    with Index.open(root) as idx:
        callers = {c["name"] for c in idx.callers("normal.helper")["callers"]}
        assert "caller" in callers  # still queryable
        checked = verify_index(idx)
    assert checked["integrity"] == "ok" and checked["equal"], checked


MINIFIED_INDEXED = "[index]\nminified = true\n"


def minified_js(size: int) -> bytes:
    """One line of minified-looking JavaScript: functions, calls, members, object literals."""
    parts, total, i = [], 0, 0
    while total < size:
        part = (f"function f{i}(a,b){{var c=a.x{i}(b)||{{k:{i},v:[a,b]}};return g{i % 97}(c,"
                f"b.y)}};")
        parts.append(part)
        total += len(part)
        i += 1
    return "".join(parts).encode()


def minified_case(tmp_path: Path, size: int, raised_seconds: float) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "normal.py").write_text(NORMAL)
    (root / "bundle.min.js").write_bytes(minified_js(size))
    report = index(root, retrieval=False)
    assert report.skipped["too_large"] == 1 and report.files == 1
    assert_sound(root)
    # the limit raised: skipped as minified without being parsed
    report = index(root, retrieval=False, max_bytes=size * 2)
    assert report.skipped["minified"] == 1 and report.files == 2, report.as_dict()
    assert_sound(root)
    # ... and when asked for: parsed with a deadline and a memory cap, so bounded either way
    # (indexed, timed out, or its worker out of memory: which comes first depends on the host)
    (root / "knoxidx.toml").write_text(MINIFIED_INDEXED)
    start = time.perf_counter()
    report = index(root, retrieval=False, max_bytes=size * 2)
    assert time.perf_counter() - start < raised_seconds
    bounded = report.changed + report.skipped["timeout"] + report.skipped["error"]
    assert report.files == 2 and bounded == 1, report.as_dict()
    assert all("parse worker died" in e for e in report.errors), report.errors
    assert_sound(root)


@pytest.mark.heavy
def test_minified_javascript_2_mb(tmp_path: Path) -> None:
    minified_case(tmp_path, 2_000_000, 120)


@pytest.mark.slow
def test_minified_javascript_50_mb(tmp_path: Path) -> None:
    minified_case(tmp_path, 50_000_000, 900)


@pytest.mark.heavy
def test_deep_nesting_in_every_language(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "normal.py").write_text(NORMAL)
    extensions = {"python": "py", "typescript": "ts", "tsx": "tsx", "javascript": "js",
                  "go": "go", "rust": "rs", "java": "java"}
    for language, source in DEEP.items():
        (root / f"deep_{language}.{extensions[language]}").write_text(source)
    (root / "knoxidx.toml").write_text(MINIFIED_INDEXED)  # deep_javascript.js is one long line
    report = index(root)
    assert report.changed == 8 and not report.errors, report.as_dict()
    assert sum("not indexed" in w for w in report.warnings) == 7, report.warnings
    assert_sound(root)


@pytest.mark.heavy
def test_a_1_mb_single_line(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "normal.py").write_text(NORMAL)
    # each statement's words make the line 1 MB: its chunks are cut the same as from 80,000
    # statements, at a fortieth of their definitions (the 2 MB minified case parses those)
    words = " ".join(["word"] * 96)
    line = "".join(f'var v{i}=w{i}("{words}");' for i in range(2_000))[:1_000_000]
    (root / "one_line.js").write_text(line.rsplit(";", 1)[0] + ";")
    (root / "one_line.py").write_text("DATA = [" + ",".join(["1234567"] * 124_000) + "]")
    report = index(root)  # a JavaScript file of one long line is a minifier's: skipped
    assert report.skipped["minified"] == 1 and report.changed == 2, report.as_dict()
    (root / "knoxidx.toml").write_text(MINIFIED_INDEXED)
    report = index(root)  # graph and search data: the chunker must cut a 1 MB line too
    assert report.changed == 1 and not report.errors, report.as_dict()
    assert_sound(root)
    with Index.open(root) as idx:
        assert idx.symbols("v79")[0]["path"] == "one_line.js"
        found = idx.search("v123", k=3, mode="lexical")["results"]
        assert found and found[0]["path"] == "one_line.js"


def many_files(root: Path, count: int) -> None:
    directory = root / "flat"
    directory.mkdir(parents=True)
    (root / "normal.py").write_text(NORMAL)
    for i in range(count):
        (directory / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")


@pytest.mark.heavy
def test_thousands_of_files_in_one_directory(tmp_path: Path) -> None:
    many_files(tmp_path, 3000)
    report = index(tmp_path, retrieval=False)
    assert report.files == 3001 and not report.errors
    assert_sound(tmp_path)


@pytest.mark.slow
def test_100k_files_in_one_directory(tmp_path: Path) -> None:
    many_files(tmp_path, 100_000)
    report = index(tmp_path, retrieval=False)
    assert report.files == 100_001 and not report.errors
    assert_sound(tmp_path)


ODD_NAMES = [
    "with space.py", "new\nline.py", "tab\tname.py", "-rf.py", "quote'\"s.py", "%2e%2e.py",
    "back\\slash.py", unicodedata.normalize("NFC", "café.py"),
    unicodedata.normalize("NFD", "café.py"), "日本語.py", "emoji🙂.py", "x" * 240 + ".py",
    "dir with space/inner.py", "\u202eevil.py",
]


def test_odd_file_names(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "normal.py").write_text(NORMAL)
    for i, name in enumerate(ODD_NAMES):
        path = root / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"from normal import helper\n\n\ndef odd_{i}():\n    return helper()\n")
    report = index(root)
    assert report.files == len(ODD_NAMES) + 1 and not report.errors and not report.skipped
    assert_sound(root)
    with Index.open(root) as idx:
        for i, name in enumerate(ODD_NAMES):
            hit = idx.symbols(f"odd_{i}")[0]
            assert hit["path"] == name
            if "\\" not in name and not name.startswith("%"):  # refused by design
                assert f"def odd_{i}" in idx.read_source(name)["text"]
        callers = {c["name"] for c in idx.callers("helper")["callers"]}
        assert {f"odd_{i}" for i in range(len(ODD_NAMES))} <= callers


def test_case_only_rename_is_followed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "normal.py").write_text(NORMAL)
    (root / "pkg" / "Models.py").write_text("class Model:\n    pass\n")
    (root / "use.py").write_text("from pkg.Models import Model\n\n\ndef make():\n"
                                 "    return Model()\n")
    index(root)
    os.rename(root / "pkg" / "Models.py", root / "pkg" / "models.py")
    (root / "use.py").write_text("from pkg.models import Model\n\n\ndef make():\n"
                                 "    return Model()\n")
    report = index(root)
    assert report.removed == 1 and report.added == 1, report.as_dict()
    with Index.open(root) as idx:
        assert [h["path"] for h in idx.symbols("Model")] == ["pkg/models.py"]
        assert idx.callers("Model")["callers"][0]["name"] == "make"
    assert_sound(root)


@pytest.mark.parametrize(("package", "imported"), [
    ("app", ".".join(f"p{i}" for i in range(400))),  # recursed too deep: no edge kept
    (".".join(f"p{i}" for i in range(5000)), "app"),  # then a loop over prefixes: quadratic
])
def test_a_java_name_of_thousands_of_parts_costs_its_file_nothing(
    tmp_path: Path, package: str, imported: str,
) -> None:
    """Found by ``bench.fuzz``: the class lookup behind a Java import (or a name read in a
    package) recursed once per part of the qualified name, and so a mangled 400-part import
    failed the whole file's resolution; made a loop over the name's prefixes, a 5,000-part
    package then took minutes (quadratic). Names of more than 64 parts name no class."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "Main.java").write_text(
        f"package {package};\n\nimport {imported}.Thing;\n\n"
        "class Main {\n    static int helper() { return 1; }\n"
        "    int caller() { return helper(); }\n"
        # names found nowhere: each is looked for as a class of the package
        + "".join(f"    int unknown{i}() {{ return missing{i}(); }}\n" for i in range(200))
        + "}\n")
    started = time.perf_counter()
    report = index(tmp_path)
    assert report.errors == []
    assert time.perf_counter() - started < 20
    with Index.open(tmp_path) as idx:
        assert [c["name"] for c in idx.callers("Main.helper")["callers"]] == ["caller"]


def assert_died_of_memory(errors: list[str]) -> None:
    """``bad.py`` killed its parse worker by running out of the worker's 150 MB cap, and the
    error says so (tree-sitter crashes or aborts when an allocation fails: the signal is one
    of these)."""
    assert len(errors) == 1
    assert re.fullmatch(
        r"bad\.py: the parse worker died on this file: SIG(SEGV|ABRT|BUS), most likely out of "
        r"memory under its 150 MB cap \(KNOXIDX_WORKER_MEMORY_MB\); not indexed", errors[0]), \
        errors[0]


@pytest.mark.heavy
def test_a_file_that_kills_its_parse_worker_is_an_error_and_the_rest_is_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found by ``bench.fuzz``: a few kB of mangled Python that tree-sitter's error recovery
    parses in hundreds of MB. Under a 150 MB cap its parse worker dies (as one killed by the OOM
    killer would); the pool used to wait for that worker's results for ever. Now the update
    ends, the file is an error that says why, and every other file is indexed."""
    import threading

    from knoxidx.parse.parse_pool import POOL_THRESHOLD

    monkeypatch.setenv("KNOXIDX_WORKER_MEMORY_MB", "150")
    for i in range(POOL_THRESHOLD + 12):
        (tmp_path / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    (tmp_path / "normal.py").write_text(NORMAL)
    # ~760 MB uncapped: over the cap even with the free heap a worker inherits from a test
    # process that parsed such a file before (a forked worker reuses it under the same cap)
    (tmp_path / "bad.py").write_bytes(b"/*" * 200 + b"EOSException\n" + b"/*" * 1500)
    reports: list = []

    def update() -> None:
        with Index.open(tmp_path, create=True) as idx:
            reports.append(idx.update(jobs=2, retrieval=False))

    thread = threading.Thread(target=update, daemon=True)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the update hung after its parse worker died"
    (report,) = reports
    assert_died_of_memory(report.errors)
    assert report.changed == POOL_THRESHOLD + 13
    assert_sound(tmp_path)


def _runaway_on_bad_py(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Reading ``bad.py`` burns CPU for 300 s in the real (forked) worker, under a bound of
    1 s; each try is noted in the returned file, outside the repository."""
    from knoxidx.parse import parse_worker

    real = parse_worker.read_and_extract
    tries = tmp_path.with_name(tmp_path.name + "-tries")

    def runaway(job: tuple) -> object:
        if job[1].path == "bad.py":
            with open(tries, "a") as fh:  # written by the forked worker
                fh.write("x")
            start = time.process_time()
            while time.process_time() - start < 300:
                pass
        return real(job)

    monkeypatch.setattr(parse_worker, "read_and_extract", runaway)  # the forked workers too
    monkeypatch.setattr(parse_worker, "READ_SECONDS", 1.0)
    monkeypatch.setattr(parse_worker, "READ_SECONDS_PER_MB", 0.0)
    return tries


@pytest.mark.parametrize("jobs", [1, pytest.param(2, marks=pytest.mark.slow)])
@pytest.mark.heavy
def test_a_file_that_runs_past_its_cpu_bound_costs_its_worker_not_the_update(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int,
) -> None:
    """The parse has a deadline, the rest of reading a file had none: a query that ran for
    hours on a mangled Go file (found by bench.fuzz) kept its worker busy and the update
    waiting for ever. Each file now runs under a CPU bound in the worker (a real rlimit:
    SIGXCPU); past it the worker dies, the file is an error and the others are indexed.
    The stand-in for the runaway burns CPU in the real worker for 300 s (the bound: 1 s); the
    file is tried twice (its chunk, then alone: the worker noted that it had begun it), each cut
    at ~2 s of CPU, so the wall-clock bound below leaves room for a slow or loaded machine."""
    from knoxidx.parse import parse_pool

    tries = _runaway_on_bad_py(tmp_path, monkeypatch)
    for i in range(3 if jobs == 1 else parse_pool.POOL_THRESHOLD + 12):
        (tmp_path / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    (tmp_path / "normal.py").write_text(NORMAL)
    (tmp_path / "bad.py").write_text("def bad():\n    return 1\n")
    start = time.monotonic()
    with Index.open(tmp_path, create=True) as idx:
        report = idx.update(jobs=jobs, retrieval=False)
    assert time.monotonic() - start < 120
    assert report.errors == ["bad.py: the parse worker died on this file: it ran past its "
                             "CPU bound of 1 s; not indexed"]
    assert tries.read_text() == "xx"  # its chunk, then alone (three times before)
    assert report.changed == len(list(tmp_path.glob("*.py"))) - 1  # every other file read
    with Index.open(tmp_path) as idx:
        assert idx.symbols("f2")[0]["path"] == "m2.py"
        assert idx.symbols("bad") == []
    assert_sound(tmp_path)


@pytest.mark.slow
def test_an_edit_that_runs_past_its_cpu_bound_costs_its_worker_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A one-file update (a chunk of one file, no begun-file marks): the file is its own
    suspect, tried alone once more, then recorded; the index keeps what it had."""
    (tmp_path / "normal.py").write_text(NORMAL)
    index(tmp_path)
    tries = _runaway_on_bad_py(tmp_path, monkeypatch)
    (tmp_path / "bad.py").write_text("def bad():\n    return 1\n")
    with Index.open(tmp_path) as idx:
        report = idx.update(jobs=2, retrieval=False)
    assert report.errors == ["bad.py: the parse worker died on this file: it ran past its "
                             "CPU bound of 1 s; not indexed"]
    assert tries.read_text() == "xx"
    assert_sound(tmp_path)


def test_a_dead_workers_exit_status_names_the_cause() -> None:
    """The signal that killed a parse worker says which bound it hit; the tests above kill real
    workers by memory (SIGSEGV) and by CPU (SIGXCPU), the OOM killer's SIGKILL and an exit
    without a result are read from the status alone."""
    import signal

    from knoxidx.parse.discovery import SourceFile
    from knoxidx.parse.parse_worker import death_cause

    job = ("/repo", SourceFile("big.py", 2_000_000, 0, "python"), None, None)
    assert death_cause(-signal.SIGXCPU, job) == "it ran past its CPU bound of 50 s"
    assert death_cause(-signal.SIGKILL, job) == "SIGKILL, most likely from the out-of-memory killer"
    assert death_cause(-signal.SIGABRT, job).startswith("SIGABRT, most likely out of memory under")
    assert death_cause(1, job) == "it exited with status 1 and no result"


def test_a_name_declared_hundreds_of_times_is_not_an_edge_from_every_reference(
    tmp_path: Path,
) -> None:
    """Found by ``bench.fuzz``: a mangled Java file declaring one name 4,438 times, read 4,536
    times, made an edge from every reading to every declaration (20 million) and ran for
    minutes. Over 64 candidates that the arguments do not narrow, a reference is left
    unresolved as ambiguous; a handful of overloads still gets its edges."""
    (tmp_path / "app").mkdir()
    overloads = "".join(f"    static int m(int{'[]' * i} x) {{ return 1; }}\n" for i in range(3))
    many = "".join(f"    static int n(long{'[]' * i} x) {{ return 1; }}\n" for i in range(300))
    # n(0L): the argument's type picks one of the 300; n(q()): nothing decides (q is unknown)
    calls = "".join(f"    static int c{i}() {{ return n(0L) + m(0) + n(q()); }}\n"
                    for i in range(300))
    (tmp_path / "app" / "A.java").write_text(
        f"package app;\n\nclass A {{\n{overloads}{many}{calls}}}\n")
    report = index(tmp_path)
    assert report.errors == []
    with Index.open(tmp_path) as idx:
        conn = idx.store.conn
        assert conn.execute("SELECT count(*) FROM edges WHERE type = 'Calls'").fetchone() == \
            (300 * 2,)  # c_i -> m(int) and n(long): chosen by the arguments' types
        assert conn.execute(
            "SELECT DISTINCT reason, candidates FROM unresolved WHERE name = 'n'").fetchall() == \
            [("ambiguous", 300)]


@pytest.mark.heavy
def test_a_small_update_parses_in_a_capped_worker_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An edit (or a watcher's batch) of a few files used to be parsed in the calling process,
    uncapped: the runaway parse above took the caller's memory (and, past the machine's, the
    caller), and an update killed that way died on the same file every time it ran. Now a few
    files go to one capped worker: the file is an error, the rest is indexed."""
    monkeypatch.setenv("KNOXIDX_WORKER_MEMORY_MB", "150")
    (tmp_path / "normal.py").write_text(NORMAL)
    with Index.open(tmp_path, create=True) as idx:
        assert idx.update(jobs=1, retrieval=False).errors == []
        (tmp_path / "bad.py").write_bytes(b"/*" * 200 + b"EOSException\n" + b"/*" * 1500)
        (tmp_path / "other.py").write_text("def other():\n    return 1\n")
        report = idx.update(jobs=1, retrieval=False)
    assert_died_of_memory(report.errors)
    assert report.changed_paths == ["other.py"]
    assert_sound(tmp_path)


def test_without_a_forkserver_a_standing_worker_falls_back_to_a_forked_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    """Where no forkserver can start (no Unix sockets, a sandbox), a watcher's batches still
    parse, in a worker forked for the batch, and say why."""
    from knoxidx.parse import parse_pool, standing

    def no_forkserver(self):
        raise OSError("no forkserver here")

    real_new_pool = parse_pool.new_pool

    def new_pool(workers: int, method: str):
        if method == "forkserver":
            raise OSError("no forkserver here")
        return real_new_pool(workers, method)

    monkeypatch.setattr(standing.Standing, "pool", no_forkserver)
    monkeypatch.setattr(parse_pool, "new_pool", new_pool)
    (tmp_path / "normal.py").write_text(NORMAL)
    with standing.standing_worker(), Index.open(tmp_path, create=True) as idx:
        report = idx.update(jobs=1, retrieval=False)
        assert report.errors == [] and report.changed == 1
        assert "standing parse worker is not available (no forkserver here)" in caplog.text
        # a batch large enough for a pool of workers
        for i in range(parse_pool.POOL_THRESHOLD + 2):
            (tmp_path / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
        report = idx.update(jobs=2, retrieval=False)
    assert report.errors == [] and report.changed == parse_pool.POOL_THRESHOLD + 2
    assert "could not start from the forkserver (no forkserver here)" in caplog.text
    assert_sound(tmp_path)


# A Java file whose tail is a comment being typed: tree-sitter's error recovery reads again from
# the comment's start, to the end of the file, and py-tree-sitter 0.26 keeps every such read.
LEAKING_JAVA = "class A { void f() { g(); } }\n" * 200 + "class B { /* " + "x" * 60000


def _standing_pids(root: Path, source: str, edits: int) -> list[int]:
    """The standing worker's process id after each of ``edits`` one-file updates of ``source``
    (changed by a trailing number each time, so that it is parsed again)."""
    from knoxidx.parse import standing as standing_module

    path = root / "A.java"
    (root / "normal.py").write_text(NORMAL)
    pids = []
    with standing_module.standing_worker(), Index.open(root, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
        for n in range(edits):
            path.write_text(f"{source} {n}\n")
            report = idx.update(jobs=1, retrieval=False)
            assert report.changed == 1
            standing = standing_module.STANDING.get()
            assert standing is not None
            pids.append(standing.pool().submit(os.getpid).result(timeout=30))
    return pids


@pytest.mark.heavy
def test_a_standing_worker_that_keeps_what_it_parsed_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found by bench.fuzz (seed 1802: a fuzz worker grew by 773 MB over 4,800 Java cases):
    each parse of LEAKING_JAVA left ~240 kB behind in the worker, which in a watcher lives as
    long as the watcher. The parse keeps nothing of it now (tests/test_parse_window.py), so
    the worker's growth is reported here: once it has grown past STANDING_GROWTH_MB since its
    first batch, the next batch gets a new one; the graph is whole all along."""
    from knoxidx.parse import standing

    monkeypatch.setattr(standing, "STANDING_GROWTH_MB", 4)
    asked: dict[int, int] = {}

    def growing(pid: int) -> int:  # 1 MB more each time a worker is asked
        asked[pid] = asked.get(pid, 0) + 1
        return (64 + asked[pid]) << 20

    monkeypatch.setattr(standing, "resident_bytes_of", growing)
    pids = _standing_pids(tmp_path, LEAKING_JAVA, 40)
    assert len(set(pids)) >= 2, pids
    assert_sound(tmp_path)


@pytest.mark.heavy
def test_a_standing_worker_that_does_not_grow_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from knoxidx.parse import standing

    monkeypatch.setattr(standing, "STANDING_GROWTH_MB", 4)
    pids = _standing_pids(tmp_path, "class A { void f() { g(); } }\n" * 200, 40)
    assert len(set(pids)) == 1, pids
    assert_sound(tmp_path)


@pytest.mark.heavy
def test_a_go_receiver_list_of_thousands_of_entries_costs_its_file_nothing(
    tmp_path: Path,
) -> None:
    """Found by ``bench.long_runs`` (`a,` 30,000 times inside a receiver): tree-sitter parses
    `func (a, a, ... t *T) M()` without an error, and the tags query took time cubic in the
    receiver's entries (23 s of CPU for 2,000), so the file ran past its worker's CPU bound twice
    (24 s) and was not indexed. The query now reads a receiver as its list's first entry, or
    the first after a comment (as `N`'s is)."""
    (tmp_path / "go.mod").write_text("module example.com/m\n\ngo 1.21\n")
    (tmp_path / "t.go").write_text(
        "package m\n\ntype T struct{}\n\n"
        "func (" + "a, " * 30_000 + "t *T) Broken() {}\n\n"
        "func (t *T) M() int { return helper() }\n\n"
        "func (/* the receiver */ t *T) N() int { return t.M() }\n\n"
        "func helper() int { return 1 }\n")
    report = index(tmp_path)
    assert report.errors == []
    with Index.open(tmp_path) as idx:
        assert [s["kind"] for s in idx.symbols("Broken")] == ["Function"]
        assert [c["qualified_name"] for c in idx.callers("helper")["callers"]] == [
            "example.com/m.T.M"]
        assert [c["qualified_name"] for c in idx.callers("example.com/m.T.M")["callers"]] == [
            "example.com/m.T.N"]


@pytest.mark.heavy
def test_thousands_of_overload_signatures_cost_their_file_nothing(tmp_path: Path) -> None:
    """Whether an ``@overload`` signature is followed by its body was a walk over every later
    sibling: quadratic, 12 s for 3,000 signatures without a body, so 5,000 ran past the parse
    worker's CPU bound and the file was not indexed. The walk now looks a bounded run ahead."""
    (tmp_path / "normal.py").write_text(NORMAL)
    (tmp_path / "stubs.py").write_text(
        "from typing import overload\n\n"
        + "".join("@overload\ndef f(x: int) -> int: ...\n" for _ in range(5_000)))
    report = index(tmp_path)
    assert report.errors == [] and not report.skipped
    with Index.open(tmp_path) as idx:
        assert len(idx.symbols("f", limit=10_000)) == 5_000  # no body: each signature is one
    assert_sound(tmp_path)
