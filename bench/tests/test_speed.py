"""bench/speed.py's baselines on a fixture: they parse what knoxidx would index, and a failure
in a parallel parse process is reported, not taken for a fast parse."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.speed import bare_parse_seconds, main, parallel_parse_seconds, source_files

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "python"


def test_the_bare_parse_reads_every_indexed_file() -> None:
    files = source_files(FIXTURE)
    parse = bare_parse_seconds(FIXTURE, files)
    assert files and parse.seconds > 0 and parse.cpu_seconds > 0
    assert parse.lines == sum((FIXTURE / p).read_bytes().count(b"\n") for p, _ in files)


def test_the_parallel_parse_splits_the_files_over_processes() -> None:
    files = source_files(FIXTURE)
    assert parallel_parse_seconds(FIXTURE, files, 2) > 0
    assert parallel_parse_seconds(FIXTURE, files, 1) > 0


def test_a_parallel_parse_process_that_fails_is_an_error(tmp_path: Path) -> None:
    files = [*source_files(FIXTURE), ("gone.py", "python")]  # one process cannot read it
    with pytest.raises(RuntimeError, match="parallel parse"):
        parallel_parse_seconds(FIXTURE, files, 2)


def test_the_ratio_pairs_each_cold_build_with_its_own_parse(tmp_path: Path, capsys) -> None:
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo, ignore=shutil.ignore_patterns(".knoxidx"))
    assert main(["ratio", "--corpus", str(repo), "--pairs", "2", "--jobs", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[-1].startswith("median ratio ")
    assert all("ratio" in line and "'parse':" in line for line in lines[:2])
    # the build's CPU, its workers' included: more than the wall time of its one-process parse
    # share could explain, and a work ratio beside the wall ratio
    cpu = [float(line.split(", CPU ")[1].split(" s")[0]) for line in lines[:2]]
    assert all(c > 0.1 for c in cpu), lines
    assert "(CPU " in lines[-1]
    assert (repo / ".knoxidx" / "index.db").exists()  # a real build each time
    with pytest.raises(SystemExit, match="no corpus"):
        main(["ratio", "--corpus", str(tmp_path / "missing")])


def test_the_fetch_scripts_downloads_are_not_measured_as_corpus(tmp_path: Path, capsys) -> None:
    """get-corpus.sh keeps its downloads in <corpus>/.downloads: the ratio counted their
    unpacked sources as corpus files (14,267 files instead of 5,422) until they were moved."""
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(FIXTURE, corpus / "python" / "app",
                    ignore=shutil.ignore_patterns(".knoxidx"))
    unpacked = corpus / ".downloads" / "x_pkg"
    shutil.copytree(FIXTURE, unpacked, ignore=shutil.ignore_patterns(".knoxidx"))
    files = len(source_files(corpus / "python"))
    assert main(["ratio", "--corpus", str(corpus), "--pairs", "1", "--jobs", "1"]) == 0
    out = capsys.readouterr()
    assert out.out.splitlines()[-1].endswith(f" {files} files")
    assert not (corpus / ".downloads").exists()
    assert (tmp_path / "corpus-downloads" / "x_pkg").is_dir()  # moved, not deleted
    assert "corpus-downloads" in out.err


@pytest.mark.heavy
def test_ab_interleaves_the_builds_of_two_checkouts(tmp_path: Path, capsys) -> None:
    """``ab``: builds by the base tree's knoxidx and by this one, ABBA; the base's really are
    its own (a tree whose knoxidx cannot be imported fails its builds)."""
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo, ignore=shutil.ignore_patterns(".knoxidx"))
    this_tree = FIXTURE.parents[1]
    assert main(["ab", "--corpus", str(repo), "--base", str(this_tree), "--rounds", "1",
                 "--jobs", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["base", "this"]
    assert all(len(line.split("(walls ")[1].split()) == 2 for line in lines)
    broken = tmp_path / "broken"
    (broken / "knoxidx").mkdir(parents=True)
    (broken / "knoxidx" / "__init__.py").write_text("raise ImportError('the base tree')\n")
    with pytest.raises(RuntimeError, match="knoxidx index failed"):
        main(["ab", "--corpus", str(repo), "--base", str(broken), "--rounds", "1",
              "--jobs", "1"])
    with pytest.raises(SystemExit, match="needs --base"):
        main(["ab", "--corpus", str(repo)])
