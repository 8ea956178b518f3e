"""bench.graphsum: equal for two builds of the same tree, different once a call changes."""

from __future__ import annotations

import shutil
from pathlib import Path

from bench.graphsum import summarize
from tests.helpers import build

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "python"


def test_two_builds_of_one_tree_sum_equal_and_an_edit_shows(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    shutil.copytree(FIXTURE, one)
    shutil.copytree(FIXTURE, two)
    build(one)
    build(two, jobs=2)
    first = summarize(one / ".knoxidx" / "index.db")
    assert first == summarize(two / ".knoxidx" / "index.db")
    assert first["edges"][0] > 0 and first["nodes"][0] > 0
    config = two / "shop" / "config.py"
    config.write_text(config.read_text().replace("parse_config(", "parse_config_renamed(", 1))
    build(two)
    second = summarize(two / ".knoxidx" / "index.db")
    assert second["nodes"] != first["nodes"] and second["files"] != first["files"]
