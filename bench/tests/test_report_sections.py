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


def test_a_partial_run_replaces_its_own_sections_in_place() -> None:
    """``python -m bench --skip speed ...`` moved the incremental section above the cold-index
    one and dated the whole file with its own day; now each section keeps its place and its
    own "Measured" line."""
    previous = ("# knoxidx benchmarks\n\nintro\n\n## Cold index\n\nMeasured day 1.\n\n"
                "## Incremental\n\nMeasured day 1.\nold\n\n## PostgreSQL store\n\npg\n")
    rendered = ("# knoxidx benchmarks\n\nintro\n\n## Incremental\n\nMeasured day 2.\nnew\n\n"
                "## Growth\n\nMeasured day 2.\n")
    assert keep_other_sections(rendered, previous) == (
        "# knoxidx benchmarks\n\nintro\n\n## Cold index\n\nMeasured day 1.\n\n"
        "## Incremental\n\nMeasured day 2.\nnew\n\n## PostgreSQL store\n\npg\n\n"
        "## Growth\n\nMeasured day 2.\n")


def test_every_generated_section_says_when_it_was_measured() -> None:
    from report import render

    result = {"date": "2026-12-01", "runs": 3, "machine": {"cpu": "CPU", "cores": 2,
                                                          "python": "3.11.7"},
              "incremental": {"corpus": "c", "1": {"in_process_s": 0.2, "command_s": 0.5}}}
    text = render(result)
    assert "Measured 2026-12-01" not in text.split("## ")[0]
    assert "## Incremental re-index (c)\n\nMeasured 2026-12-01 on CPU (2 cores)" in text


@pytest.mark.slow
def test_postgres_bench_quick_runs_clean(tmp_path: Path) -> None:
    out = tmp_path / "pg.json"
    subprocess.run([sys.executable, "-m", "bench.postgres", "--quick", "--seconds", "3",
                    "--out", str(out)], cwd=REPO, check=True, capture_output=True, timeout=600)
    result = json.loads(out.read_text())
    assert result["load"]["errors"] == 0 and result["load"]["requests"] > 0
    assert result["index_and_query"]["postgres"]["files"] == \
        result["index_and_query"]["sqlite"]["files"]


def test_skip_takes_sections_listed_with_commas() -> None:
    import argparse

    from bench.run import _sections

    assert _sections("speed,accuracy") == ["speed", "accuracy"]
    assert _sections("growth") == ["growth"]
    with pytest.raises(argparse.ArgumentTypeError, match="unknown section sped"):
        _sections("sped,queries")


def test_a_partial_run_keeps_the_skipped_sections_raw_figures(tmp_path: Path) -> None:
    """``python -m bench --skip incremental,...`` on a day whose results file holds every
    section overwrote it with the sections it ran: the others' raw figures were gone."""
    from bench.run import with_skipped_sections

    earlier = tmp_path / "2026-12-05.json"
    earlier.write_text(json.dumps({"runs": 3, "machine": {"cpu": "A"}, "speed": {"old": 1},
                                   "speed_all": {"old": 2}, "incremental": {"1": 0.1},
                                   "accuracy": {"p": 0.9}}))
    now = {"runs": 5, "machine": {"cpu": "A"}, "speed": {"new": 1}, "speed_all": {"new": 2}}
    merged = with_skipped_sections(now, earlier, {"incremental", "queries", "accuracy"})
    assert merged["speed"] == {"new": 1} and merged["incremental"] == {"1": 0.1}
    assert merged["accuracy"] == {"p": 0.9} and "queries" not in merged
    assert merged["earlier"] == {key: {"runs": 3, "machine": {"cpu": "A"}}
                                 for key in ("accuracy", "incremental")}
    # kept again by the next partial run, still as the first run's; dropped once re-measured
    earlier.write_text(json.dumps(merged))
    again = with_skipped_sections({"runs": 1, "incremental": {"1": 0.2}}, earlier,
                                  {"speed", "accuracy"})
    assert again["earlier"] == {key: {"runs": 3, "machine": {"cpu": "A"}} for key in
                                ("accuracy",)} | {key: {"runs": 5, "machine": {"cpu": "A"}}
                                                  for key in ("speed", "speed_all")}
    assert again["incremental"] == {"1": 0.2}
    assert with_skipped_sections(now, tmp_path / "none.json", {"accuracy"}) == now


def test_a_carried_over_section_says_the_runs_it_was_measured_with() -> None:
    """A ``--skip`` run's results keep the skipped sections' figures under ``"earlier"`` with
    their own runs; their tables said the new run's count (5) for figures measured with 3."""
    from report import render

    machine = {"cpu": "CPU", "cores": 2, "python": "3.11.7", "compiled": True}
    result = {"date": "2026-12-05", "runs": 5, "machine": machine,
              "incremental": {"corpus": "c", "1": {"in_process_s": 0.2, "command_s": 0.5}},
              "growth": {"points": [{"lines": 10, "seconds": 1.0, "peak_mib": 5.0}]},
              "earlier": {"incremental": {"runs": 3, "machine": machine}}}
    incremental, growth = render(result).split("## Incremental")[1].split("## Growth")
    assert "compiled build, medians of 3 run(s)." in incremental
    assert "compiled build, medians of 5 run(s)." in growth
