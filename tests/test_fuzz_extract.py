"""Fuzzing the extractor of every language through the real path (a file on disk, then
``read_and_extract``, as an index worker does): mutated fixture files and random bytes never
crash it, never hang it (every parse has a CPU deadline, queries a depth bound), and memory does
not grow with use. The long form is ``python -m bench.fuzz --minutes N`` (and the slow test
below); this is its quick form, about 20 s in all.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.fuzz import check_case, check_repo, main, make_case, rss_mib
from bench.mutate import LANGUAGE_NAMES, OP_KINDS, TOKENS, apply, fixture_files
from knoxidx.parse.extract import ParseTimeoutError, extract
from knoxidx.parse.tree_parse import parse_budget

SEEDS = {lang: [p.read_bytes() for p in fixture_files(lang)] for lang in LANGUAGE_NAMES}
OPS = st.lists(
    st.tuples(st.sampled_from(OP_KINDS), st.integers(0, 1 << 20), st.integers(0, 1 << 16),
              st.integers(0, 1 << 24)),
    min_size=1, max_size=6,
)
FUZZ = settings(max_examples=20, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
# What one case may cost: the parse's CPU budget, plus the (linear) rest of extraction.
SLACK_SECONDS = 3.0


def check(tmp_path: Path, language: str, data: bytes) -> None:
    cpu = time.thread_time()
    status, message, _ = check_case(tmp_path, language, data)
    cpu = time.thread_time() - cpu
    assert status in ("ok", "binary", "timeout"), (status, message)
    assert cpu < 2 * parse_budget(len(data)) + SLACK_SECONDS, (cpu, len(data))


def test_every_language_has_seed_files() -> None:
    assert all(len(SEEDS[lang]) >= 2 for lang in LANGUAGE_NAMES), \
        {lang: len(s) for lang, s in SEEDS.items()}


@pytest.mark.parametrize("language", LANGUAGE_NAMES)
@FUZZ
@given(data=st.data())
def test_mutated_sources(tmp_path: Path, language: str, data: st.DataObject) -> None:
    seeds = SEEDS[language]
    base = seeds[data.draw(st.integers(0, len(seeds) - 1), label="seed file")]
    check(tmp_path, language, apply(base, data.draw(OPS, label="ops"), seeds))


@pytest.mark.parametrize("language", LANGUAGE_NAMES)
@settings(FUZZ, max_examples=4)
@given(noise=st.binary(max_size=4096))
def test_random_bytes(tmp_path: Path, language: str, noise: bytes) -> None:
    check(tmp_path, language, noise)
    try:  # NUL bytes make the reader skip a file as binary: the extractor must survive them too
        extract("noise", noise, language)
    except ParseTimeoutError:
        pass


@pytest.mark.parametrize("language", LANGUAGE_NAMES)
def test_token_soup(tmp_path: Path, language: str) -> None:
    """Every token the mutator knows, repeated and interleaved: brackets, quotes, comment
    markers and keywords that leave every construct open."""
    soup = b"".join(TOKENS) * 20
    check(tmp_path, language, soup)
    check(tmp_path, language, b" ".join(reversed(TOKENS)) * 20)


@pytest.mark.parametrize("language", LANGUAGE_NAMES)
def test_fuzzed_repository_indexes_resolves_and_verifies(tmp_path: Path, language: str) -> None:
    """A whole index + resolve of a repository of mutated files (and two pristine ones that
    import each other): it completes, every file is recorded, and it equals a clean rebuild."""
    seeds = SEEDS[language]
    files = [make_case(language, seeds, 7, n) for n in range(6)] + seeds[:2]
    assert check_repo(tmp_path, language, files) == ""


@pytest.mark.slow
def test_memory_stays_flat_over_many_cases(tmp_path: Path) -> None:
    """The same mutated inputs extracted again and again: nothing accumulates per file (trees,
    parsers, caches). 42 inputs of up to 16 KB, 10 times; RSS after a warm-up and at the end."""
    cases = [(lang, make_case(lang, SEEDS[lang], 3, n)[:16384]) for lang in LANGUAGE_NAMES
             for n in range(6)]
    for language, data in cases:  # warm-up: every grammar and query loaded
        check_case(tmp_path, language, data)
    warm = rss_mib()
    for _ in range(9):
        for language, data in cases:
            check_case(tmp_path, language, data)
    assert rss_mib() - warm < 16, (warm, rss_mib())


@pytest.mark.slow
def test_long_fuzz_run(tmp_path: Path) -> None:
    """The long form: the runner for KNOXIDX_FUZZ_MINUTES (default 5) over fixtures and, when
    present, the benchmark corpus; no finding, and what each language's worker holds grows by
    under 64 MiB from its warm-up to its end. Held memory (``bench.fuzz.held_mib``) is the
    resident memory with the bounded caches emptied and the free heap handed back: the caches
    fill with the fuzzed names for as long as the run goes on, and glibc keeps what a worker
    freed, so the plain RSS grows with the run's length though nothing leaks (seed 20261130,
    5 minutes on a loaded machine, 880 to 2,591 cases a language: RSS +30 to +53 MiB, held +16
    to +32, what is left being the high-water mark of Python's small-object arenas)."""
    import json

    minutes = os.environ.get("KNOXIDX_FUZZ_MINUTES", "5")
    out = tmp_path / "fuzz.json"
    code = main(["--minutes", minutes, "--seed", "20261130", "--json", str(out)])
    results = json.loads(out.read_text())["results"]
    assert code == 0, [r["findings"] for r in results]
    for r in results:
        assert r["cases"] > 50, r
        assert r["held_end_mib"] - r["held_warm_mib"] < 64, r
