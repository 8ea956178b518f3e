"""bench/work.py on a fixture: both loops do the work a build does (every file read and
extracted; the index's edges resolved again), and callgrind's figures are read right."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from bench.speed import KNOXIDX
from bench.work import (
    chunk_work,
    extract_work,
    inclusive,
    main,
    resolve_work,
    total_instructions,
    write_work,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _copy(tmp_path: Path, name: str) -> Path:
    repo = tmp_path / name
    shutil.copytree(FIXTURES / name, repo, ignore=shutil.ignore_patterns(".knoxidx"))
    return repo


def test_extract_reads_every_step_th_file(tmp_path: Path) -> None:
    repo = _copy(tmp_path, "go")
    every = extract_work(repo, 1)
    assert every["files"] == every["ok"] == len([p for p in repo.rglob("*.go")])
    assert extract_work(repo, 2)["files"] == (every["files"] + 1) // 2


def test_chunk_makes_the_chunks_a_build_makes(tmp_path: Path) -> None:
    repo = _copy(tmp_path, "python")
    done = chunk_work(repo, 1)
    built = json.loads(subprocess.run([*KNOXIDX, "index", "--no-embed", "--json", str(repo)],
                                      check=True, capture_output=True, text=True).stdout)
    assert done["files"] == built["retrieval"]["files_chunked"] > 0
    assert done["chunks"] == built["retrieval"]["chunks"] > 0
    assert chunk_work(repo, 2)["files"] == (done["files"] + 1) // 2


_LEXICAL_ROWS = [
    "SELECT path, start_line, end_line, symbol, token_count, content_hash, text FROM chunk "
    "ORDER BY id", "SELECT rowid, body, symbols, path FROM chunk_fts ORDER BY rowid",
    "SELECT rowid, name, scope FROM chunk_name ORDER BY rowid",
    "SELECT id, text FROM chunk_declaration ORDER BY id",
    "SELECT chunk_id FROM embed_pending ORDER BY chunk_id", "SELECT * FROM chunk_source ORDER BY path",
]


def _rows(db_path: Path) -> list[list[tuple]]:
    db = sqlite3.connect(db_path)
    try:
        return [db.execute(query).fetchall() for query in _LEXICAL_ROWS]
    finally:
        db.close()


def test_write_writes_the_rows_a_build_writes(tmp_path: Path) -> None:
    repo = _copy(tmp_path, "python")
    done = write_work(repo, 1, tmp_path / "written.db")
    subprocess.run([*KNOXIDX, "index", "--no-embed", str(repo)], check=True,
                   capture_output=True)
    written, built = _rows(tmp_path / "written.db"), _rows(repo / ".knoxidx" / "index.db")
    assert done["chunks"] == len(built[0]) > 0 and done["files"] == len(built[5])
    assert written == built


def _indexed(repo: Path) -> tuple[int, int]:
    """The ok files and the resolved edges (not the module layer's: DependsOn, module -> file
    Contains) of ``repo``'s index."""
    db = sqlite3.connect(repo / ".knoxidx" / "index.db")
    try:
        files = db.execute("SELECT count(*) FROM files WHERE status = 'ok'").fetchone()[0]
        resolved = db.execute("SELECT count(*) FROM edges WHERE file_id IS NOT NULL"
                              ).fetchone()[0]
    finally:
        db.close()
    return files, resolved


def test_resolve_builds_the_index_and_resolves_what_it_holds(tmp_path: Path) -> None:
    repo = _copy(tmp_path, "python")
    done = resolve_work(repo)  # no index yet: built first
    files, resolved = _indexed(repo)
    assert done["files"] == files > 0
    assert done["edges"] == resolved > 0


def test_resolve_brings_an_index_up_to_date_first(tmp_path: Path) -> None:
    repo = _copy(tmp_path, "python")
    before = resolve_work(repo)
    with open(repo / "added.py", "w") as fh:  # a new file calling itself: one more edge
        fh.write("def again():\n    return again()\n")
    after = resolve_work(repo)
    files, resolved = _indexed(repo)
    assert after["files"] == files == before["files"] + 1
    assert after["edges"] == resolved > before["edges"]


def test_the_command_prints_its_figures(tmp_path: Path, capsys) -> None:
    repo = _copy(tmp_path, "rust")
    for what in ("extract", "write"):
        assert main([what, "--corpus", str(repo), "--step", "1"]) == 0
        assert capsys.readouterr().out.startswith("files ")
    with pytest.raises(SystemExit, match="no corpus"):
        main(["resolve", "--corpus", str(tmp_path / "missing")])


# the head of a callgrind output file and lines of callgrind_annotate --inclusive=yes, as
# valgrind 3.19 writes them
CALLGRIND_OUT = """# callgrind format
version: 1
creator: callgrind-3.19.0
cmd:  python -m bench.work extract
events: Ir
summary: 16916112420
"""
ANNOTATED = """\
16,916,112,420 (100.0%)  PROGRAM TOTALS
 7,058,942,085 (41.73%)  /project/tree_sitter/core/lib/src/./parser.c:ts_parser_parse [/x/_binding.so]
 5,232,532,850 (30.93%)  /project/tree_sitter/binding/query_cursor.c:query_cursor_matches [/x/_binding.so]
 1,346,314,627 ( 8.12%)  /project/tree_sitter/core/lib/src/./stack.c:ts_parser_parse
"""


def test_the_callgrind_figures_are_read() -> None:
    assert total_instructions(CALLGRIND_OUT) == 16_916_112_420
    assert total_instructions("totals: 12\n") == 12
    with pytest.raises(ValueError):
        total_instructions("events: Ir\n")
    assert inclusive(ANNOTATED, "ts_parser_parse") == 7_058_942_085  # not the inlined one
    assert inclusive(ANNOTATED, "query_cursor_matches") == 5_232_532_850
    assert inclusive(ANNOTATED, "query_cursor") is None  # a prefix names nothing


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_the_instructions_of_the_loop_are_counted(tmp_path: Path, capsys) -> None:
    repo = _copy(tmp_path, "go")
    out = tmp_path / "cg.out"
    assert main(["extract", "--corpus", str(repo), "--step", "1", "--instructions",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    total = total_instructions(out.read_text())
    assert f"instructions {total:,}" in printed
    assert 0 < total < 5_000_000_000  # the loop over a few files, not the interpreter's start
    # and the same count again: string hashes are seeded alike in every run
    assert main(["extract", "--corpus", str(repo), "--step", "1", "--instructions",
                 "--out", str(out)]) == 0
    assert total_instructions(out.read_text()) == total
