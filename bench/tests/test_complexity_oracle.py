"""bench.complexity's matching and tallies on a corpus small enough to check by hand, against
the real lizard and radon (the ``bench`` extra)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("lizard")
pytest.importorskip("radon")

from bench import complexity  # noqa: E402


def test_tallies_against_lizard_and_radon(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "python").mkdir()
    # g: 1 + if + and = 3 for all three; h: `for ... else`, which radon counts and the others
    # do not (2 against 3)
    (tmp_path / "python" / "a.py").write_text(
        "def g(a, b):\n    if a and b:\n        return 1\n    return 2\n\n\n"
        "def h(x):\n    for i in x:\n        pass\n    else:\n        pass\n")
    (tmp_path / "python" / "stub.pyi").write_text("def s(x: int) -> int: ...\n")  # left out
    (tmp_path / "rust").mkdir()
    # a `where` clause: lizard counts it, knoxidx does not
    (tmp_path / "rust" / "a.rs").write_text(
        "fn f<T>(t: T) -> T\nwhere\n    T: Clone,\n{\n    t\n}\n")
    assert complexity.main([str(tmp_path), "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert table["lizard"]["python"] == {
        "files": 1, "oracle_failed": 0, "knoxidx_functions": 2, "oracle_functions": 2,
        "matched": 2, "oracle_overran": 0, "matched_share": 1.0, "exact_share": 1.0,
        "mean_abs_diff": 0.0}
    assert table["radon"]["python"]["exact_share"] == 0.5
    assert table["radon"]["python"]["mean_abs_diff"] == 0.5
    assert table["lizard"]["rust"]["exact_share"] == 0.0  # 1 here, 2 in lizard
