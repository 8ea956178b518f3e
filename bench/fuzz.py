"""``python -m bench.fuzz --minutes N``: fuzz the extractor of every language for N minutes.

Each case is a real source file (fixtures/, and with ``--corpus`` the benchmark corpus) mutated
by a few random ops from ``bench/mutate.py`` (byte flips, truncations, splices, deletions,
insertions of tokens, long repeats that build deep nesting), or plain random bytes. Cases go
through the real path: written to a file, then ``read_and_extract`` (read, hash, extract, node
rows), as an index worker does, and what search indexes of it (chunks, their FTS columns, the
texts embedded: no model runs); every ``--repo-every`` cases a small repository of mutated files
is indexed and resolved whole, queried and checked with ``verify``.

Findings: an extraction that raised (``status == "error"``, other than a deadline), a case slower
than ``--slow`` seconds, a case that ran past the CPU bound the indexer gives one file
(``cpu-bound``: the worker is killed by it, as the indexer's parse worker would be, which then
records the file as an error and goes on), a worker killed by another signal (``crash``: a
crash in C; ``memory`` when the case replayed alone outgrows the worker's memory cap, see
``crash_cause``), a worker with no progress for ``--hang`` seconds, and a whole-repo round that
failed. A ``memory`` case that ran away inside tree-sitter's parse is reported as ``bounded``
instead, no finding: the indexer's capped parse worker dies of it alone, as designed.
Each case is derived from (language, seed, number) alone, so ``--replay LANG:SEED:N``
rebuilds a finding's input (``--save`` writes it out).
Memory: each language's worker reports its RSS after a warm-up and at the end (the last
worker's, when one grew by ``RETIRE_GROWTH_MB`` and handed over to a new one), and what it
holds at those two points less what stays bounded by design (``held_mib``): the growth of the
latter is what a leak would show.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

from bench.mutate import (
    LANGUAGE_NAMES,
    apply,
    corpus_files,
    fixture_files,
    random_ops,
    suffix,
)

DEFAULT_CORPUS = Path(os.environ.get("KNOXIDX_CORPUS", Path.home() / ".cache" / "knoxidx-corpus"))
WARMUP_CASES = 100
# A worker reports its tallies this often, so that a case which kills it loses only the few since.
PROGRESS_EVERY = 50
# A worker that has grown this much since its warm-up is retired and a new one goes on, as the
# indexer's standing parse worker is (knoxidx.parse.standing.STANDING_GROWTH_MB): py-tree-sitter keeps some
# of what a parse with syntax errors reads, and a worker near its memory cap fails cases that
# a fresh one reads (seed 1802: +773 MB over 4,800 Java cases).
RETIRE_GROWTH_MB = 384


def make_case(language: str, seeds: list[bytes], seed: int, number: int) -> bytes:
    rng = random.Random(f"{seed}:{language}:{number}")
    if rng.random() < 0.1 or not seeds:
        noise = rng.randbytes(rng.randrange(4096))
        # half without NUL bytes, which the reader would set aside as binary
        return noise.replace(b"\0", b" ") if rng.random() < 0.5 else noise
    return apply(rng.choice(seeds), random_ops(rng, 1 + rng.randrange(6)), seeds)


@dataclass
class LanguageResult:
    language: str
    cases: int = 0
    repos: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    findings: list[dict[str, Any]] = field(default_factory=list)
    # cases that killed their worker in a way the indexer contains as designed (Cause.bounded):
    # reported, no finding
    bounded: list[dict[str, Any]] = field(default_factory=list)
    slowest: tuple[float, int, int] = (0.0, -1, 0)  # seconds, case number, bytes
    rss_warm_mib: float = 0.0
    rss_end_mib: float = 0.0
    held_warm_mib: float = 0.0  # held_mib() after the warm-up and at the end
    held_end_mib: float = 0.0


def check_case(workdir: Path, language: str, data: bytes) -> tuple[str, str, float]:
    """(outcome, message, seconds) of one input through ``read_and_extract``."""
    from knoxidx.graph.layout import build_layout
    from knoxidx.parse.discovery import SourceFile
    from knoxidx.parse.extract import ParseTimeoutError, extract
    from knoxidx.parse.reader import read_and_extract, valid_utf8

    name = "case" + suffix(language)
    (workdir / name).write_bytes(data)
    source = SourceFile(name, len(data), 0, language)
    t0 = time.perf_counter()
    layout = build_layout(workdir, [name], [])
    # minified-looking input extracted too, not skipped: the extractor is what is fuzzed
    result = read_and_extract((str(workdir), source, None, layout, True, None, True))
    status, message = result.status, result.message
    if status == "ok":  # then what `knoxidx index` makes of it for search (no embedding)
        problem = _check_retrieval(workdir, name, result)
        if problem:
            status, message = "error", problem
    if status == "binary":  # the extractor itself must survive NUL bytes too
        try:  # as the reader would hand them over: invalid UTF-8 replaced (see valid_utf8)
            extract(name, valid_utf8(data), language)
        except ParseTimeoutError:  # a deadline it kept, as for any other input
            pass
        except Exception as exc:  # noqa: BLE001 - the finding is the exception
            status, message = "error", f"{type(exc).__name__}: {exc} (on the NUL bytes)"
    return status, message, time.perf_counter() - t0


def _check_retrieval(workdir: Path, name: str, result: Any) -> str:
    """The file's chunks, their FTS columns and the texts embedded of them (the condensed view,
    the declarations), as an index with search makes them: "" or what failed."""
    from knoxidx.core.facts import load_facts
    from knoxidx.retrieval.chunker import ChunkBudget
    from knoxidx.retrieval.names import declaration_texts
    from knoxidx.retrieval.text_views import condensed_view
    from knoxidx.update.chunk_refresh import chunk_one

    # as the parse worker that chunks a file has it (read_and_extract): no tokenizer thread
    # pool, whose threads' heaps grew the fuzz worker by ~12 MiB a 500 cases, on and on
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    chunked = chunk_one(str(workdir), name, result.hash, load_facts(result.blob), ChunkBudget())
    if chunked.error:
        return f"retrieval: chunking failed: {chunked.error}"
    try:
        for chunk in chunked.chunks:
            condensed_view(chunk)
            declaration_texts(chunk)
    except Exception as exc:  # noqa: BLE001 - the finding is the exception
        return f"retrieval: {type(exc).__name__}: {exc}"
    return ""


def check_repo(workdir: Path, language: str, files: list[bytes]) -> str:
    """Index and resolve a repository of these files, query it, verify it: "" or a problem."""
    import shutil

    from knoxidx.index import Index
    from knoxidx.update.verify import verify_index

    repo = workdir / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    for i, data in enumerate(files):
        path = repo / f"pkg{i % 3}" / f"m{i}{suffix(language)}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    with Index.open(repo, create=True) as idx:
        report = idx.update(jobs=1, retrieval=False)
        problems = [e for e in report.errors if "deadline" not in e]
        if problems:
            return f"update errors: {problems[:3]}"
        counted = sum(idx.stats()["files"].values())
        if counted != report.files:  # every file is indexed or recorded with its reason
            return f"{counted} files recorded of {report.files} found: {report.as_dict()}"
        idx.symbols("x")
        checked = verify_index(idx)
        if checked["integrity"] != "ok" or not checked["equal"]:
            return f"verify failed: {json.dumps(checked)[:400]}"
    return ""


def address_space_left() -> int:
    """How far this process's address space is below its cap (RLIMIT_AS), or -1 (no cap)."""
    import resource

    from knoxidx.core.heap import address_space_bytes

    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    size = address_space_bytes()
    return -1 if soft == resource.RLIM_INFINITY or size < 0 else max(0, soft - size)


def rss_mib() -> float:
    from knoxidx.core.heap import resident_bytes

    return resident_bytes() / 2**20


def held_mib() -> float:
    """This process's resident memory less what grows and stays bounded by design: the caches
    of extraction and of search's words emptied (each bounded in count and in the size of an
    entry; a fuzz run fills them with new names for as long as it runs, so their growth says
    how long it ran), then the free heap handed back (glibc keeps what a process freed: 10 to
    35 MiB by the end of a language's run of a few minutes, never in use again). What is left
    to grow between two readings is what a leak grows. (Emptied, the caches fill again:
    nothing else changes.)"""
    import gc

    from knoxidx.core.heap import release_free_memory
    from knoxidx.languages import registry
    from knoxidx.parse import name_paths, signatures
    from knoxidx.retrieval import names, terms, tokens

    for remembered in (terms._PARTS, terms._EXPANSIONS, name_paths._PATHS,
                       *name_paths._TYPE_PATHS, name_paths._BYTES_PATHS):
        remembered.clear()
    for function in (terms._cached_stem, names.signature_words, registry.name_of_file):
        function.cache_clear()
    signatures.clear_caches()
    counter = tokens.default_counter()
    counter._word_counts.clear()
    counter._line_counts.clear()
    gc.collect()
    release_free_memory()
    return rss_mib()


def _worker(language: str, seed_paths: list[str], seed: int, first: int, seconds: float,
            repo_every: int, slow: float, current: Any, left: Any, conn: Any) -> None:
    # capped as knoxidx's parse workers are: a case whose parse runs away (tree-sitter's error
    # recovery took over 6 GB for 81 kB of `*/` as Python) aborts this worker, a finding,
    # instead of the OOM killer choosing among the machine's processes
    from knoxidx.parse.worker_limits import (
        READ_SECONDS,
        READ_SECONDS_PER_MB,
        cpu_bound,
        limit_worker_memory,
    )

    limit_worker_memory()
    seeds = [Path(p).read_bytes() for p in seed_paths]
    result = LanguageResult(language)
    deadline = time.monotonic() + seconds
    number = first
    with tempfile.TemporaryDirectory(prefix="knoxidx-fuzz-") as tmp:
        workdir = Path(tmp)
        while time.monotonic() < deadline:
            current.value = number
            left.value = address_space_left()  # what a case that kills it had (crash_cause)
            data = make_case(language, seeds, seed, number)
            with cpu_bound(READ_SECONDS + READ_SECONDS_PER_MB * len(data) / 1e6):
                status, message, took = check_case(workdir, language, data)
            result.cases += 1
            result.outcomes[status] += 1
            if took > result.slowest[0]:
                result.slowest = (took, number, len(data))
            if status == "error" and "deadline" not in message:
                conn.send(("finding", {"kind": "error", "case": number, "message": message}))
            elif took > slow:
                conn.send(("finding", {"kind": "slow", "case": number, "seconds": took,
                                       "bytes": len(data), "status": status}))
            if result.cases == WARMUP_CASES:
                result.rss_warm_mib = rss_mib()
                result.held_warm_mib = held_mib()
            if result.cases % PROGRESS_EVERY == 0:
                conn.send(("progress", result))  # what a crash of this worker would lose
            if repo_every and result.cases % repo_every == 0:
                current.value = -number  # a negative number: a whole-repo round
                files = [make_case(language, seeds, seed, number - k) for k in range(6)]
                with _uncapped():
                    problem = check_repo(workdir, language, files + seeds[:2])
                result.repos += 1
                if problem:
                    conn.send(("finding", {"kind": "repo", "case": number, "message": problem}))
            number += 1
            if result.rss_warm_mib and rss_mib() - result.rss_warm_mib > RETIRE_GROWTH_MB:
                break  # retired, as the indexer's standing worker is: a new one goes on
    result.rss_end_mib = rss_mib()
    result.held_end_mib = held_mib()
    current.value = number
    conn.send(("done" if time.monotonic() >= deadline else "retired", result))


@contextmanager
def _uncapped() -> Iterator[None]:
    """The worker's own memory cap lifted for a whole-repository round: knoxidx caps its parse
    workers, not the process that resolves and writes (here, this one), whose threads (a
    process pool's) could not even start near the cap: seed 1802 hung a Java round for good
    when a thread died of a MemoryError before it had started."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def fuzz_language(language: str, seed_paths: list[Path], seed: int, seconds: float,
                  repo_every: int, slow: float, hang: float) -> LanguageResult:
    """Run the worker for ``seconds``, in a child process so that a crash in C or a hang is
    a finding, not the end of the run: the child is restarted after the case that broke it."""
    ctx = multiprocessing.get_context("fork")
    total = LanguageResult(language)
    first = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end - 0.5:
        current = ctx.Value("q", first)
        left = ctx.Value("q", -1)  # the worker's address space left below its cap
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_worker, args=(
            language, [str(p) for p in seed_paths], seed, first, end - time.monotonic(),
            repo_every, slow, current, left, child))
        proc.start()
        child.close()
        last, last_change = current.value, time.monotonic()
        done: LanguageResult | None = None
        retired: LanguageResult | None = None
        latest: LanguageResult | None = None  # its last progress report
        while done is None and retired is None and (proc.is_alive() or parent.poll(0)):
            if parent.poll(0.2):
                try:
                    kind, payload = parent.recv()
                except EOFError:  # the child died; its exit code says how
                    break
                if kind == "finding":
                    total.findings.append(payload)
                elif kind == "progress":
                    latest = payload
                elif kind == "retired":  # it grew too much: a new one goes on from here
                    retired = payload
                else:
                    done = payload
            elif current.value != last:
                last, last_change = current.value, time.monotonic()
            elif time.monotonic() - last_change > hang:
                proc.kill()
                total.findings.append({"kind": "hang", "case": abs(last),
                                       "repo_round": last < 0, "seconds": hang})
                break
        proc.join()
        if retired is not None:
            _merge(total, retired)
            first = abs(current.value)  # the case it stopped before
            continue
        if done is not None:
            _merge(total, done)
            break
        if proc.exitcode and proc.exitcode < 0:
            kind = "cpu-bound" if -proc.exitcode == signal.SIGXCPU else "crash"
            finding = {"kind": kind, "case": abs(current.value), "signal": -proc.exitcode,
                       "repo_round": current.value < 0}
            bounded = False
            if kind == "crash" and current.value >= 0:  # a case alone: replayed to say why
                seeds = [p.read_bytes() for p in seed_paths]
                had = left.value if left.value >= 0 else None
                cause = crash_cause(language, make_case(language, seeds, seed, current.value), had)
                finding.update(kind=cause.kind, peak_mib=cause.peak_mib, where=cause.where,
                               left_mib=-1 if had is None else had >> 20)
                bounded = cause.bounded
            (total.bounded if bounded else total.findings).append(finding)
        # the cases it ran before it died: their tallies up to its last progress report, the
        # rest unrecorded (a worker's tallies used to die with it: seed 2201's Java run listed
        # 1,600 outcomes for 3,986 cases)
        ran = max(0, abs(current.value) - first)
        if latest is not None:
            _merge(total, latest)
            ran -= latest.cases
        total.cases += max(0, ran)
        if ran > 0:
            total.outcomes["unrecorded"] += ran
        first = abs(current.value) + 1
    return total


# The CPU a replay of a case that killed its worker may take (the worker's bound is 10 s and up)
REPLAY_CPU_SECONDS = 60


# a capped replay whose reader caught the MemoryError (OUT_OF_MEMORY): its exit status, and
# where its Cause says it ended
OUT_OF_MEMORY_EXIT = 3
READER_OUT_OF_MEMORY = "the reader's record: out of memory under the cap"


class Cause(NamedTuple):
    """Why a case killed its worker (``crash_cause``): ``kind`` is "memory", "crash",
    "cpu-bound" or "survived"; ``peak_mib`` the replay's peak resident memory; ``where`` the
    innermost Python frame a replay died or was stopped in ("file:line in function", from
    faulthandler), "" when none did."""

    kind: str
    peak_mib: int
    where: str = ""

    @property
    def bounded(self) -> bool:
        """Whether the indexer contains it as designed, so no finding: memory that ran away
        inside tree-sitter's parse (its error recovery, which knoxidx cannot bound from outside
        but by the cap: the capped parse worker dies alone and the file is recorded as an error,
        tests/test_pathological.py), or that met the cap only in the capped replay, where the
        reader caught the MemoryError and recorded the file so. Memory that runs away in
        knoxidx's own code, past the cap in resident bytes, is a finding."""
        from knoxidx.parse import tree_parse

        return self.kind == "memory" and (self.where.startswith(f"{tree_parse.__file__}:")
                                          or self.where == READER_OUT_OF_MEMORY)


def crash_cause(language: str, data: bytes, left: int | None = None) -> Cause:
    """Why a case killed its worker, replayed alone in fresh children watched from here.

    First without the worker's cap: "memory" when it grows by more than the cap (the child is
    then stopped, SIGABRT, so that faulthandler says where it was): tree-sitter's error
    recovery allocating without bound (`/*/*/*...` as Python wants GBs; under the cap
    py-tree-sitter's allocator returns NULL and tree-sitter reads through it, SIGSEGV).
    "crash" when it dies of a signal anyway (a crash in C to look into), "cpu-bound" when it
    runs past ``REPLAY_CPU_SECONDS`` of CPU. When it ends well, once more under a cap of the
    address space the worker had ``left`` when it began the case (bytes; default: a fresh
    worker's cap): "memory" when that one dies, since the cap is all that differs. Resident
    memory can stay under the cap while the address space the cap counts goes over it: seed
    20261130's JavaScript case 197 grows ~900 MiB resident and past 1,024 MiB of address space
    inside tree-sitter's parse, in a worker that had used some of its cap already. "survived"
    when both end well: the crash does not replay."""
    # what check_case imports, imported before the fork: no part of the child's growth
    import knoxidx.parse.reader  # noqa: F401
    import knoxidx.update.chunk_refresh  # noqa: F401
    from knoxidx.core.heap import resident_bytes
    from knoxidx.parse.worker_limits import worker_memory_mb

    # resident memory, not address space: what the child reserves (thread stacks, mappings)
    # is not what it uses, and what a runaway parse allocates it also writes
    cap = resident_bytes() + (worker_memory_mb() << 20)
    status, peak, where = _replay(language, data, stop_past=cap)
    if status is None:
        return Cause("memory", peak >> 20, where)
    if os.WIFSIGNALED(status):
        kind = "cpu-bound" if os.WTERMSIG(status) == signal.SIGXCPU else "crash"
        return Cause(kind, peak >> 20, where)
    capped = worker_memory_mb() << 20 if left is None else left
    status, _, where = _replay(language, data, capped=capped)  # (never stopped: not watched)
    if status is not None and os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGXCPU:
        return Cause("memory", peak >> 20, where)
    if status is not None and os.WIFEXITED(status) and \
            os.WEXITSTATUS(status) == OUT_OF_MEMORY_EXIT:
        # the cap met in a Python allocation rather than tree-sitter's (which of the two fails
        # first varies with the load): the reader recorded the file as out of memory
        return Cause("memory", peak >> 20, READER_OUT_OF_MEMORY)
    return Cause("survived", peak >> 20)


def _replay(language: str, data: bytes, stop_past: int | None = None,
            capped: int | None = None) -> tuple[int | None, int, str]:
    """``check_case`` of the case in a fresh child, its address space capped at ``capped``
    bytes over its size when given: (its wait status, or None when it was stopped for growing
    past ``stop_past`` resident bytes; its peak resident bytes; the innermost frame it died or
    was stopped in). Uncapped, the child is a fork of this process. Capped, it is a new
    interpreter (``_capped_replay``): a forked child reuses the free heap it inherits, which
    its size counts and the cap then does not, and a harness that has run for a while holds
    hundreds of MiB of it (JavaScript case 197 of seed 20261130 fitted, "survived")."""
    from knoxidx.core.heap import resident_bytes_of

    peak = 0
    stopped_at: float | None = None
    with tempfile.TemporaryDirectory(prefix="knoxidx-fuzz-") as tmp:
        dump = Path(tmp) / "where.txt"
        workdir = Path(tmp) / "case"
        workdir.mkdir()
        if capped is None:
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                _replay_child(workdir, dump, language, data, None)
        else:
            case = Path(tmp) / "case.bin"
            case.write_bytes(data)
            pid = _start_capped_replay(language, case, dump, capped, workdir)
        while True:  # polled from here: the parse holds the child's GIL
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            peak = max(peak, resident_bytes_of(pid))
            if stopped_at is None and stop_past is not None and peak > stop_past:
                os.kill(pid, signal.SIGABRT)  # faulthandler writes where it is, then it ends
                stopped_at = time.monotonic()
            elif stopped_at is not None and time.monotonic() - stopped_at > 5:
                os.kill(pid, signal.SIGKILL)  # it outlived the first: this one has no handler
            time.sleep(0.002)
        where = _innermost_frame(dump.read_text(errors="replace")) if dump.exists() else ""
    return (None if stopped_at is not None else status), peak, where


def _replay_child(workdir: Path, dump: Path, language: str, data: bytes,
                  capped: int | None) -> NoReturn:  # pragma: no cover - runs in a child
    """A replay's child: ``check_case`` of ``data`` under faulthandler, capped at ``capped``
    bytes over its size when given; exits OUT_OF_MEMORY_EXIT when the reader caught a
    MemoryError, 0 otherwise (or dies of a signal)."""
    import faulthandler
    import resource

    from knoxidx.parse.reader import OUT_OF_MEMORY
    from knoxidx.parse.worker_limits import cpu_bound, limit_worker_memory

    try:
        with dump.open("w") as fh:
            faulthandler.enable(fh)
            # no core file of a child that dies, or that is stopped, a GB in
            resource.setrlimit(resource.RLIMIT_CORE,
                               (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
            if capped is not None:
                limit_worker_memory(capped >> 20)
            with cpu_bound(REPLAY_CPU_SECONDS):
                _, message, _ = check_case(workdir, language, data)
            if message == OUT_OF_MEMORY:  # a MemoryError the reader caught and said
                os._exit(OUT_OF_MEMORY_EXIT)
    finally:
        os._exit(0)


def _start_capped_replay(language: str, case: Path, dump: Path, capped: int,
                         workdir: Path) -> int:
    """Start ``_capped_replay`` in a new interpreter (posix_spawn: nothing of this process's
    heap goes with it); its pid. It imports bench and knoxidx from where this process did."""
    import knoxidx

    roots = [str(Path(__file__).resolve().parents[1]),
             str(Path(knoxidx.__file__).resolve().parents[1])]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*roots, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    code = "import sys; from bench.fuzz import _capped_replay; _capped_replay(*sys.argv[1:])"
    args = [language, str(case), str(dump), str(capped), str(workdir)]
    return os.posix_spawn(sys.executable, [sys.executable, "-c", code, *args], env)


def _capped_replay(language: str, case: str, dump: str, capped: str,
                   workdir: str) -> NoReturn:  # pragma: no cover - a new interpreter
    """The capped replay, in a new interpreter: a fixture file of the language is checked
    first, uncapped, so that what a worker has loaded by the time it meets a case (the
    grammar, its queries, the tokenizer) is part of the size the cap is set over, as it was
    in the worker; then the case, capped at ``capped`` bytes over that size."""
    warm = fixture_files(language)
    if warm:
        check_case(Path(workdir), language, warm[0].read_bytes())
    _replay_child(Path(workdir), Path(dump), language, Path(case).read_bytes(), int(capped))


def _innermost_frame(dump: str) -> str:
    """The first frame of faulthandler's traceback (most recent call first) as
    "file:line in function", or ""."""
    import re

    found = re.search(r'File "(.+)", line (\d+) in (\S+)', dump)
    return f"{found[1]}:{found[2]} in {found[3]}" if found else ""


def _merge(total: LanguageResult, part: LanguageResult) -> None:
    total.cases += part.cases
    total.repos += part.repos
    total.outcomes.update(part.outcomes)
    total.findings.extend(part.findings)
    total.bounded.extend(part.bounded)
    total.slowest = max(total.slowest, part.slowest)
    total.rss_warm_mib, total.rss_end_mib = part.rss_warm_mib, part.rss_end_mib
    total.held_warm_mib, total.held_end_mib = part.held_warm_mib, part.held_end_mib


def seed_files(language: str, corpus: Path | None) -> list[Path]:
    files = fixture_files(language)
    if corpus is not None:
        files += corpus_files(corpus, language)
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.fuzz", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=10.0, help="total, split over languages")
    ap.add_argument("--quick", action="store_true", help="20 seconds in all, fixtures only")
    ap.add_argument("--languages", nargs="+", default=list(LANGUAGE_NAMES),
                    choices=LANGUAGE_NAMES)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                    help="seed files from this corpus too (if present)")
    ap.add_argument("--no-corpus", action="store_true", help="seed from fixtures/ only")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--repo-every", type=int, default=200,
                    help="index a whole mutated repository every N cases (0: never)")
    ap.add_argument("--slow", type=float, default=10.0, help="a case slower than this is a "
                    "finding (seconds)")
    ap.add_argument("--hang", type=float, default=120.0, help="no progress for this long is a "
                    "hang (seconds)")
    ap.add_argument("--replay", metavar="LANG:SEED:N", help="rebuild one case and check it")
    ap.add_argument("--save", type=Path, help="with --replay: write the case's bytes here")
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args(argv)
    corpus = None if args.no_corpus or args.quick or not args.corpus.is_dir() else args.corpus
    if args.replay:
        return replay(args.replay, corpus, args.save)
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    seconds = (20.0 if args.quick else args.minutes * 60) / len(args.languages)
    print(f"fuzzing {', '.join(args.languages)} for {seconds:.0f} s each, seed {seed}, "
          f"seeds from fixtures/{' and ' + str(corpus) if corpus else ''}", file=sys.stderr)
    results = []
    for language in args.languages:
        seeds = seed_files(language, corpus)
        res = fuzz_language(language, seeds, seed, seconds, args.repo_every, args.slow,
                            args.hang)
        results.append(res)
        print(_line(res, len(seeds)), file=sys.stderr)
        for label, found in (("FINDING", res.findings), ("BOUNDED", res.bounded)):
            for finding in found:
                print(f"  {label} {finding}  (replay: python -m bench.fuzz --replay "
                      f"{language}:{seed}:{finding['case']}{'' if corpus else ' --no-corpus'})",
                      file=sys.stderr)
    findings = sum(len(r.findings) for r in results)
    print(f"{sum(r.cases for r in results)} cases, {sum(r.repos for r in results)} whole "
          f"repositories, {findings} finding(s)", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps({"seed": seed, "corpus": str(corpus) if corpus else None,
                                         "results": [_as_dict(r) for r in results]}, indent=1))
    return 1 if findings else 0


def _line(res: LanguageResult, seeds: int) -> str:
    growth = res.rss_end_mib - res.rss_warm_mib
    held = res.held_end_mib - res.held_warm_mib
    return (f"{res.language:10s} {res.cases:6d} cases {res.repos:4d} repos from {seeds} seeds; "
            f"{dict(res.outcomes)}; slowest {res.slowest[0]:.2f} s (case {res.slowest[1]}, "
            f"{res.slowest[2]} B); RSS {res.rss_warm_mib:.0f} -> {res.rss_end_mib:.0f} MiB "
            f"({growth:+.0f}), held {res.held_warm_mib:.0f} -> {res.held_end_mib:.0f} MiB "
            f"({held:+.0f}); {len(res.findings)} finding(s), {len(res.bounded)} bounded")


def _as_dict(res: LanguageResult) -> dict[str, Any]:
    return {"language": res.language, "cases": res.cases, "repos": res.repos,
            "outcomes": dict(res.outcomes), "findings": res.findings, "bounded": res.bounded,
            "slowest_seconds": res.slowest[0], "rss_warm_mib": res.rss_warm_mib,
            "rss_end_mib": res.rss_end_mib, "held_warm_mib": res.held_warm_mib,
            "held_end_mib": res.held_end_mib}


def replay(spec: str, corpus: Path | None, save: Path | None) -> int:
    language, seed, number = spec.split(":")
    seeds = [p.read_bytes() for p in seed_files(language, corpus)]
    data = make_case(language, seeds, int(seed), int(number))
    if save:
        save.write_bytes(data)
    import faulthandler

    faulthandler.enable()
    with tempfile.TemporaryDirectory(prefix="knoxidx-fuzz-") as tmp:
        status, message, took = check_case(Path(tmp), language, data)
    print(f"{len(data)} bytes: {status} in {took:.2f} s {message}")
    return 0 if status != "error" or "deadline" in message else 1


if __name__ == "__main__":
    raise SystemExit(main())
