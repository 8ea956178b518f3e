"""bench.fuzz's case check: a case goes through extraction and what search indexes of it."""

from __future__ import annotations

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


def test_a_case_past_the_indexers_cpu_bound_is_a_finding_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seed 1702 found a mangled Go file whose parse runs on without calling back (tree-sitter's
    stack merging): the fuzz worker waited on it until the hang timeout. The indexer gives one
    file a CPU bound and kills its worker past it; the fuzz worker now has the same bound, and
    such a case is reported as what it is."""
    import time

    from knoxidx.indexer import parse_pool

    def runaway(*_args: object) -> tuple[str, str, float]:
        start = time.process_time()
        while time.process_time() - start < 60:
            pass
        return "ok", "", 0.0

    monkeypatch.setattr(fuzz, "check_case", runaway)  # the forked worker inherits both
    monkeypatch.setattr(parse_pool, "READ_SECONDS", 1.0)
    seed = tmp_path / "a.py"
    seed.write_text("def f():\n    return 1\n")
    result = fuzz.fuzz_language("python", [seed], 1, seconds=4.0, repo_every=0, slow=30.0,
                                hang=30.0)
    assert result.findings and {f["kind"] for f in result.findings} == {"cpu-bound"}
