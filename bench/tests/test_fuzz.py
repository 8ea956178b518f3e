"""bench.fuzz's case check: a case goes through extraction and what search indexes of it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from bench import fuzz


def test_a_case_is_read_and_chunked(tmp_path: Path) -> None:
    status, message, took = fuzz.check_case(
        tmp_path, "python", b"def f(x):\n    '''Doc.'''\n    return g(x)\n")
    assert (status, message) == ("ok", "") and took > 0


def test_a_failure_of_the_search_side_is_a_finding(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import knoxidx.retrieval.names as names

    def broken(_chunk: object) -> list[str]:
        raise IndexError("boom")

    monkeypatch.setattr(names, "declaration_texts", broken)
    status, message, _ = fuzz.check_case(tmp_path, "python", b"def f():\n    return 1\n")
    assert status == "error" and message == "retrieval: IndexError: boom"


def test_a_binary_case_reaches_the_extractor_as_the_reader_would_hand_it_over(
        tmp_path: Path) -> None:
    # a NUL byte makes it binary, and an invalid byte in a name that a text predicate tests
    # (`#not-match?` on a tuple struct pattern's type) failed the strict decode (another case
    # crashed py-tree-sitter, SIGSEGV): the reader replaces invalid UTF-8 before extraction,
    # the fuzz check's own extraction of a binary case did not
    data = (b"\x00fn f(x: E) -> i32 {\n    match x {\n        E::D\xcdne(res) => res,\n"
            b"        _ => 0,\n    }\n}\n")
    status, message, _ = fuzz.check_case(tmp_path, "rust", data)
    assert (status, message) == ("binary", ""), message


def test_long_runs_check_real_files(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from bench import long_runs

    corpus = tmp_path / "corpus"
    (corpus / "python").mkdir(parents=True)
    body = "".join(f"def f{i}(x):\n    return g(x) + {i}\n\n" for i in range(120))
    (corpus / "python" / "a.py").write_text(body)
    code = long_runs.main(["--corpus", str(corpus), "--characters", "newline,space",
                           "--files", "1", "--offsets", "2", "--length", "2000"])
    out = capsys.readouterr().out
    assert code == 0 and "0 finding(s)" in out
    assert "newline       python     slowest" in out and "a.py@" in out


@pytest.mark.heavy
def test_a_case_past_the_indexers_cpu_bound_is_a_finding_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seed 1702 found a mangled Go file whose parse runs on without calling back (tree-sitter's
    stack merging): the fuzz worker waited on it until the hang timeout. The indexer gives one
    file a CPU bound and kills its worker past it; the fuzz worker now has the same bound, and
    such a case is reported as what it is."""
    import time

    from knoxidx.parse import worker_limits

    def runaway(*_args: object) -> tuple[str, str, float]:
        start = time.process_time()
        while time.process_time() - start < 60:
            pass
        return "ok", "", 0.0

    monkeypatch.setattr(fuzz, "check_case", runaway)  # the forked worker inherits both
    monkeypatch.setattr(worker_limits, "READ_SECONDS", 1.0)
    seed = tmp_path / "a.py"
    seed.write_text("def f():\n    return 1\n")
    result = fuzz.fuzz_language("python", [seed], 1, seconds=4.0, repo_every=0, slow=30.0,
                                hang=30.0)
    assert result.findings and {f["kind"] for f in result.findings} == {"cpu-bound"}


@pytest.mark.heavy
def test_a_whole_repository_round_runs_without_the_workers_memory_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fuzz worker caps itself as a parse worker is capped, but a whole-repository round
    plays the indexer's own process, which knoxidx never caps: seed 1802 hung such a round near
    the cap (a pool's thread died of a MemoryError before it had started)."""
    import resource

    def check_repo(*_args: object) -> str:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        return "" if soft == hard else f"capped at {soft} of {hard}"

    monkeypatch.setattr(fuzz, "check_repo", check_repo)  # the forked worker inherits both
    monkeypatch.setattr(fuzz, "check_case", lambda *_args: ("ok", "", 0.0))
    seed = tmp_path / "a.py"
    seed.write_text("def f():\n    return 1\n")
    result = fuzz.fuzz_language("python", [seed], 1, seconds=2.0, repo_every=50, slow=30.0,
                                hang=30.0)
    assert result.repos > 0 and result.findings == []


def test_a_worker_that_has_grown_is_retired_and_the_cases_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker grown past RETIRE_GROWTH_MB since its warm-up hands over to a new one, which
    goes on from the next case: none is skipped, none run twice, none is a finding."""
    log = tmp_path / "cases.log"

    def check_case(_workdir: Path, _language: str, data: bytes) -> tuple[str, str, float]:
        with log.open("ab") as fh:
            fh.write(data + b"\n")
        return "ok", "", 0.0

    monkeypatch.setattr(fuzz, "RETIRE_GROWTH_MB", -1)  # every worker retires after warm-up
    monkeypatch.setattr(fuzz, "WARMUP_CASES", 3)
    monkeypatch.setattr(fuzz, "make_case", lambda _l, _s, _seed, number: str(number).encode())
    monkeypatch.setattr(fuzz, "check_case", check_case)
    # not what is tested, and each reading loads search's tokenizer: under load the 3 s ran
    # out after two workers
    monkeypatch.setattr(fuzz, "held_mib", lambda: 0.0)
    seed = tmp_path / "a.py"
    seed.write_text("def f():\n    return 1\n")
    result = fuzz.fuzz_language("python", [seed], 1, seconds=3.0, repo_every=0, slow=30.0,
                                hang=30.0)
    numbers = [int(line) for line in log.read_text().split()]
    assert len(numbers) > 3 * 3  # several workers, each after its warm-up
    assert numbers == list(range(len(numbers)))
    assert result.cases == len(numbers) and result.findings == []


def test_a_case_that_grows_to_the_workers_cap_is_told_from_a_crash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seed 1901 killed a Python worker with SIGSEGV: 56 kB of `/*/*/*...` that tree-sitter's
    error recovery parses in over 24 GB. Replayed alone, watched, it is told apart from a crash
    in C, which is still called one. (The first version replayed it under the cap and read the
    child's peak RSS afterwards: in CI's second test run it called this a crash, the child
    having died of the cap before its RSS had grown by half of it.)"""
    monkeypatch.setenv("KNOXIDX_WORKER_MEMORY_MB", "150")
    runaway = b"/*" * 200 + b"EOSException\n" + b"/*" * 1500  # ~760 MB: stopped past 150
    cause = fuzz.crash_cause("python", runaway)
    assert cause.kind == "memory" and cause.peak_mib >= 150
    assert cause.bounded, cause  # stopped inside tree-sitter's parse, which faulthandler names
    assert fuzz.crash_cause("python", b"def f():\n    return 1\n").kind == "survived"

    def segfault(*_: object) -> None:
        os.kill(os.getpid(), signal.SIGSEGV)

    monkeypatch.setattr(fuzz, "check_case", segfault)
    crash = fuzz.crash_cause("python", b"x = 1\n")
    assert crash.kind == "crash" and not crash.bounded and "in segfault" in crash.where


def test_a_parse_that_outgrows_the_cap_only_in_address_space_is_memory_not_survived(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seed 20261130's JavaScript case 197 (88 kB: ~10,900 unclosed `.test(` calls and a run of
    invalid UTF-8) killed its worker with SIGSEGV: tree-sitter's recovery at the end of the
    file takes ~1.6 s and ~900 MiB in one step, with no callback in between, and the worker's
    address-space cap (1,024 MiB) runs out first. Replayed uncapped, its resident growth
    stayed under the cap, so it was called "survived", a finding. A child capped at what the
    worker had left (842 MiB, when it began the case) dies of it as the worker did, inside the
    parse: memory the indexer contains. Here the uncapped replay goes unwatched, as if its
    resident memory had stayed under the cap, and a smaller runaway (~230 MB) meets a 100 MiB
    cap. The capped replay is a new interpreter, so that this holds in a process that has run
    other tests: a forked one reused the free heap it inherited (in CI's, the runaway fitted,
    and the long run's case 197 "survived" again)."""
    replay = fuzz._replay

    def unwatched(language: str, data: bytes, stop_past: int | None = None,
                  capped: int | None = None) -> tuple[int | None, int, str]:
        return replay(language, data, None, capped)

    monkeypatch.setattr(fuzz, "_replay", unwatched)
    monkeypatch.setenv("KNOXIDX_WORKER_MEMORY_MB", "100")
    # ~240 MB of free heap in this process, as a test process that has run others holds: a
    # thousand-byte block kept of every 50 (glibc's malloc) keeps the rest from going back
    blocks = [bytes(1000) for _ in range(250_000)]
    kept = blocks[::50]
    del blocks
    cause = fuzz.crash_cause("python", b"/*" * 200 + b"EOSException\n" + b"/*" * 800)
    del kept
    assert cause.kind == "memory" and cause.peak_mib > 100, cause
    # the cap fails tree-sitter's allocation (SIGSEGV in the parse) or a Python one first,
    # which the reader catches and records: contained either way
    assert cause.bounded, cause
    assert "tree_parse.py" in cause.where or cause.where == fuzz.READER_OUT_OF_MEMORY, cause


@pytest.mark.heavy
def test_a_capped_replay_the_reader_records_as_out_of_memory_is_memory_not_survived() -> None:
    """Which allocation meets the cap first, tree-sitter's or Python's, varies with the load:
    a MemoryError the reader catches ends the capped replay well, with the file recorded as
    out of memory, which is as contained as the parse's SIGSEGV (it was called "survived").
    8,000 small functions (~400 kB) grow a replay by ~60-80 MiB: uncapped it ends well; under
    some cap the parse fits and the facts extracted from it do not. Where that window lies
    depends on the build (measured: the reader's record at 50-75 MiB in pure Python, below
    which the query's native matches die of it first; 20-40 MiB compiled, whose facts are
    smaller), so the caps are tried from the top down to the first the reader records."""
    data = "".join(f"def f{i}(a, b):\n    return g{i}(a) + b.h{i}()\n\n"
                   for i in range(8000)).encode()
    causes = []
    for mib in (60, 50, 40, 30, 20):
        causes.append(fuzz.crash_cause("python", data, left=mib << 20))
        if causes[-1].where == fuzz.READER_OUT_OF_MEMORY:
            break
    cause = causes[-1]
    assert (cause.kind, cause.where, cause.bounded) == \
        ("memory", fuzz.READER_OUT_OF_MEMORY, True), causes


@pytest.mark.heavy
def test_a_replay_past_its_cpu_bound_is_told_from_a_crash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    def runaway(*_args: object) -> None:
        start = time.process_time()
        while time.process_time() - start < 30:
            pass

    monkeypatch.setattr(fuzz, "REPLAY_CPU_SECONDS", 1)
    monkeypatch.setattr(fuzz, "check_case", runaway)
    cause = fuzz.crash_cause("python", b"x = 1\n")
    assert cause.kind == "cpu-bound" and not cause.bounded


@pytest.mark.parametrize(("where", "bounded"), [
    ("{parse}:64 in parse_tree", True),  # tree-sitter's own recovery: the indexer contains it
    ("{parse}:58 in progress", True),
    ("/x/knoxidx/parse/extract.py:300 in extract_rows", False),  # knoxidx's code: look into it
])
def test_the_runner_reports_memory_in_the_parse_apart_from_the_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, bounded: bool,
) -> None:
    from knoxidx.parse import tree_parse
    from knoxidx.parse.worker_limits import worker_memory_mb

    def check_case(_workdir: Path, _language: str, data: bytes) -> tuple[str, str, float]:
        if data == b"3":
            os.kill(os.getpid(), signal.SIGSEGV)
        return "ok", "", 0.0

    cause = fuzz.Cause("memory", 900, where.format(parse=tree_parse.__file__))
    monkeypatch.setattr(fuzz, "make_case", lambda _l, _s, _seed, number: str(number).encode())
    monkeypatch.setattr(fuzz, "check_case", check_case)
    asked: list[tuple[object, ...]] = []

    def crash_cause(*args: object) -> fuzz.Cause:
        asked.append(args)
        return cause

    monkeypatch.setattr(fuzz, "crash_cause", crash_cause)
    seed = tmp_path / "a.py"
    seed.write_text("def f():\n    return 1\n")
    result = fuzz.fuzz_language("python", [seed], 1, seconds=1.0, repo_every=0, slow=30.0,
                                hang=30.0)
    found = [(f["kind"], f["case"], f["where"]) for f in result.findings + result.bounded]
    assert found == [("memory", 3, cause.where)]
    # replayed under what the worker's cap had left it when it began the case
    left = asked[0][2]
    assert isinstance(left, int) and 0 < left <= worker_memory_mb() << 20
    assert (result.bounded != []) == bounded and (result.findings != []) == (not bounded)


def test_a_worker_that_crashes_keeps_the_tallies_of_the_cases_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seed 2201's Java run reported 3,986 cases and the outcomes of 1,600: the 2,386 cases run
    by the worker that a case killed were counted, their outcomes lost with it. The worker now
    reports its tallies as it goes; what it ran after its last report is said to be
    unrecorded."""
    def check_case(_workdir: Path, _language: str, data: bytes) -> tuple[str, str, float]:
        if data == b"7":
            os.kill(os.getpid(), signal.SIGSEGV)
        return "ok", "", 0.0

    monkeypatch.setattr(fuzz, "PROGRESS_EVERY", 2, raising=False)
    monkeypatch.setattr(fuzz, "make_case", lambda _l, _s, _seed, number: str(number).encode())
    monkeypatch.setattr(fuzz, "check_case", check_case)  # the forked worker inherits these
    seed = tmp_path / "a.py"
    seed.write_text("def f():\n    return 1\n")
    result = fuzz.fuzz_language("python", [seed], 1, seconds=3.0, repo_every=0, slow=30.0,
                                hang=30.0)
    assert [(f["kind"], f["case"]) for f in result.findings] == [("crash", 7)]
    assert sum(result.outcomes.values()) == result.cases > 8
    assert result.outcomes["unrecorded"] == 1  # case 6, run after the report at 6 cases


@pytest.mark.heavy
def test_held_memory_leaves_the_bounded_caches_out_and_shows_what_is_kept() -> None:
    """What a worker holds (``held_mib``) grows with what it keeps, not with its caches, which
    fill for as long as a run goes on and stay bounded, nor with the free heap glibc keeps."""
    from knoxidx.retrieval.terms import index_text

    before = fuzz.held_mib()
    index_text(" ".join(f"name{i}Part" for i in range(150_000)))  # two caches of new words
    filled = fuzz.rss_mib()
    emptied = fuzz.held_mib()
    kept = [bytes(1000) + str(i).encode() for i in range(50_000)]  # ~50 MB, as a leak keeps
    leaked = fuzz.held_mib()
    assert len(kept) == 50_000
    assert filled - before > 20 and emptied - before < 8, (before, filled, emptied)
    assert leaked - emptied > 40, (emptied, leaked)
