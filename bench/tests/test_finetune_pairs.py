"""The adapter's training pairs: a documented function's summary, and the texts the index
embeds for the chunk that answers it, from a copy with that doc comment stripped; copies of
the benchmark's doc comments and vendored code left out; benchmark projects refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.finetune.pairs import main, parse_source, project_pairs

TIDE = '''
def tide_height(hour, amplitude):
    """Estimate the harbour water level from the lunar cycle and the local amplitude."""
    phase = hour / 12.42
    return amplitude * phase


def moon_phase(day):
    """Approximate the illuminated fraction of the moon for a calendar day number."""
    cycle = day % 29.53
    return cycle / 29.53
'''


def project(tmp_path: Path) -> Path:
    root = tmp_path / "harbour"
    (root / "vendor").mkdir(parents=True)
    (root / "tides.py").write_text(TIDE)
    (root / "vendor" / "copied.py").write_text(TIDE.replace("tide_height", "tide_level")
                                                   .replace("moon_phase", "lunar_phase")
                                                   .replace("harbour", "port")
                                                   .replace("calendar", "julian"))
    return root


def test_pairs_hold_the_stripped_chunk_and_declaration_texts(tmp_path: Path) -> None:
    pairs = list(project_pairs(project(tmp_path), "harbour", "python", per_project=10, seed=1))
    by_name = {p["qualname"]: p for p in pairs}
    assert set(by_name) == {"tide_height", "moon_phase"}  # not the vendored copies
    tide = by_name["tide_height"]
    assert tide["query"].startswith(
        "Estimate the harbour water level from the lunar cycle and the local amplitude.\n")
    assert "tide height" in tide["chunk"] and "amplitude" in tide["chunk"]
    assert "lunar cycle" not in tide["chunk"]  # the doc comment was stripped before chunking
    assert tide["decl"].startswith("function tide height in tides")
    assert all("tide height" not in n for n in tide["negatives"])
    assert tide["language"] == "python" and tide["path"] == "tides.py"


def test_a_summary_the_benchmark_holds_is_left_out(tmp_path: Path) -> None:
    exclude = {"approximate the illuminated fraction of the moon for a calendar day number"}
    pairs = list(project_pairs(project(tmp_path), "harbour", "python", per_project=10, seed=1,
                               exclude=exclude))
    assert [p["qualname"] for p in pairs] == ["tide_height"]


def test_sources_and_benchmark_projects(tmp_path: Path) -> None:
    assert parse_source("rust:regex:/x/regex-1.7.1:150") == ("rust", "regex",
                                                             Path("/x/regex-1.7.1"), 150)
    assert parse_source("go:mux:/x/mux") == ("go", "mux", Path("/x/mux"), None)
    with pytest.raises(SystemExit, match="tokio is a benchmark project"):
        parse_source("rust:tokio:/x/tokio")
    out = tmp_path / "pairs.jsonl"
    assert main(["--source", f"python:harbour:{project(tmp_path)}", "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 2


def test_a_benchmark_corpus_without_every_project_is_refused_before_any_pair(
        tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    out = tmp_path / "pairs.jsonl"
    with pytest.raises(SystemExit, match=r"benchmark project .* is not in .*corpus.*get-corpus"):
        main(["--source", f"python:harbour:{project(tmp_path)}", "--out", str(out),
              "--benchmark-corpus", str(corpus)])
    assert not out.exists()
