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


def test_facts_stored_in_other_bytes_but_equal_sum_equal(tmp_path: Path) -> None:
    """marshal writes a value shared by reference where its reference count says so: two
    builds' facts could be equal and their bytes not, the references' (marshalled on their own
    inside the facts) included. Found comparing two builds of the benchmark corpus."""
    import marshal
    import sqlite3

    from knoxidx.core.facts import blob_fields

    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    build(repo)
    db_path = repo / ".knoxidx" / "index.db"
    before = summarize(db_path)
    db = sqlite3.connect(db_path)
    with db:
        for file_id, blob in db.execute("SELECT id, facts FROM files").fetchall():
            facts = blob_fields(blob)
            refs = marshal.loads(facts[10])  # the references; the node ids follow
            # version 2 writes no back-references: other bytes, the same values
            recoded = marshal.dumps((*facts[:10], marshal.dumps(refs, 2), *facts[11:]), 2)
            assert recoded != blob
            db.execute("UPDATE files SET facts=? WHERE id=?", (recoded, file_id))
    db.close()
    assert summarize(db_path) == before
