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
