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
