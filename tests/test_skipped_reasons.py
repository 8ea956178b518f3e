"""``stats``, ``status`` (HTTP /status, MCP index_status) and an update's summary list the
same skipped files by reason, those the walk passes over (too_large) included."""

from __future__ import annotations

import json

from click.testing import CliRunner

from knoxidx.api.readers import status_of
from knoxidx.cli import main
from knoxidx.index import Index

LARGE = "x = 1\n" * 400  # over the 1000-byte limit the updates below pass


def _indexed(repo):
    root = repo({"app.py": "def run():\n    return 1\n", "big.py": LARGE,
                 "blob.py": b"\x00\x01\x02binary\x00"})
    with Index.open(root, create=True) as idx:
        report = idx.update(jobs=1, max_bytes=1000, retrieval=False)
    return root, report.skipped


def test_stats_and_status_list_what_the_update_skipped(repo) -> None:
    root, summary = _indexed(repo)
    assert summary == {"too_large": 1, "binary": 1}
    with Index.open(root) as idx:
        assert idx.stats()["skipped"] == summary
        assert idx.status()["skipped"] == summary
        assert status_of(idx, None)["skipped"] == summary


def test_the_stats_command_shows_them(repo) -> None:
    root, summary = _indexed(repo)
    as_json = CliRunner().invoke(main, ["stats", "--json", str(root)])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.output)["skipped"] == summary
    human = CliRunner().invoke(main, ["stats", str(root)])
    assert "  skipped: binary=1, too_large=1" in human.output


def test_a_file_no_longer_too_large_leaves_the_list(repo) -> None:
    root, _ = _indexed(repo)
    (root / "big.py").write_text("x = 1\n")
    with Index.open(root) as idx:
        idx.update(jobs=1, max_bytes=1000, retrieval=False)
        assert idx.stats()["skipped"] == {"binary": 1}
