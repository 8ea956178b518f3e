"""``python -m bench`` regenerates BENCHMARKS.md; sections other benchmarks appended stay."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from report import keep_other_sections  # bench/ is on sys.path (conftest.py)

REPO = Path(__file__).resolve().parents[2]


def test_regenerated_report_keeps_appended_sections() -> None:
    previous = ("# knoxidx benchmarks\n\nold intro\n\n## Query latency\n\nold table\n\n"
                "## PostgreSQL store\n\npg table\n| a | b |\n")
    rendered = "# knoxidx benchmarks\n\nnew intro\n\n## Query latency\n\nnew table\n"
    out = keep_other_sections(rendered, previous)
    assert out == ("# knoxidx benchmarks\n\nnew intro\n\n## Query latency\n\nnew table\n\n"
                   "## PostgreSQL store\n\npg table\n| a | b |\n")
    assert keep_other_sections(rendered, "") == rendered


@pytest.mark.slow
def test_postgres_bench_quick_runs_clean(tmp_path: Path) -> None:
    out = tmp_path / "pg.json"
    subprocess.run([sys.executable, "-m", "bench.postgres", "--quick", "--seconds", "3",
                    "--out", str(out)], cwd=REPO, check=True, capture_output=True, timeout=600)
    result = json.loads(out.read_text())
    assert result["load"]["errors"] == 0 and result["load"]["requests"] > 0
    assert result["index_and_query"]["postgres"]["files"] == \
        result["index_and_query"]["sqlite"]["files"]
