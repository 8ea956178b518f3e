"""Damage inside stored values, where SQLite's own checks see nothing (bytes flipped in a
file's facts blob, in a text column, in a chunk's JSON): whatever reads the value says the
index is damaged and names the fix (exit 6, HTTP ``corrupt_index``), never a traceback, a
wrong exit code, or an update that goes on from the damaged value and exits 0."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bench.reliability.common import clear_error, run_cli, verify
from knoxidx.index import Index
from tests.helpers import write_tree
from tests.reliability.test_storage_faults import REBUILD, checkpointed, cli, db

FILES = {
    "pkg/__init__.py": "",
    "pkg/base.py": "class Widget:\n    def render_widget(self):\n        return 1\n",
    "pkg/shapes.py": ("from pkg.base import Widget\n\n\nclass Gadget(Widget):\n"
                      "    def spin_gadget(self):\n        return self.render_widget()\n"),
    "pkg/use.py": ("from pkg.shapes import Gadget\n\n\n"
                   "def assemble_gadget():\n    return Gadget().spin_gadget()\n"),
}


@pytest.fixture
def indexed(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "repo", FILES)
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1)
    checkpointed(root)  # every value in the database file itself, where it is damaged
    return root


def stored(root: Path, sql: str) -> bytes:
    conn = sqlite3.connect(db(root))
    try:
        value = conn.execute(sql).fetchone()[0]
    finally:
        conn.close()
    return value if isinstance(value, bytes) else str(value).encode()


def flip(root: Path, value: bytes, offset: int, new: bytes) -> None:
    """Overwrite ``value``'s bytes at ``offset`` in the database file, where it is stored
    once (as bit rot or a stray write would)."""
    data = db(root).read_bytes()
    at = data.find(value)
    assert at >= 0 and data.find(value, at + 1) < 0, "the value is not stored exactly once"
    with open(db(root), "r+b") as fh:
        fh.seek(at + offset)
        fh.write(new)


# The function's signature in its row of the nodes table, after its language and family
# (a column no index holds a copy of, which a query would read instead)
NODE_ROW = b"pythonpythondef assemble_gadget()"
NAME_AT = len(b"pythonpythondef ")


def no_quick_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """As for an index above the size an update checks whole first (8 MiB)."""
    monkeypatch.setattr("knoxidx.index_writing.QUICK_CHECK_MAX_BYTES", 0)


@pytest.mark.parametrize("how", ["inside a name", "a type code"])
def test_a_damaged_facts_blob_fails_the_update_that_reads_it(
        indexed: Path, how: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An update resolving pkg/use.py reads pkg/shapes.py's stored facts. Damage that still
    unmarshals (a letter of a name) made a graph that differs from a rebuild, and exit 0;
    damage that does not gave a traceback (ValueError: bad marshal data)."""
    no_quick_check(monkeypatch)
    blob = stored(indexed, "SELECT facts FROM files WHERE path = 'pkg/shapes.py'")
    if how == "inside a name":
        at = blob.find(b"spin_gadget")
        flip(indexed, blob, at, b"S")
    else:
        flip(indexed, blob, len(blob) // 2, b"\xf3")
    (indexed / "pkg" / "use.py").write_text(FILES["pkg/use.py"] + "\n\ndef more():\n"
                                            "    return assemble_gadget()\n")
    proc = cli(capsys, monkeypatch, "index", str(indexed))
    assert clear_error(proc, 6, REBUILD, "stored facts") is None, proc.stderr
    fixed = cli(capsys, monkeypatch, "index", "--rebuild", str(indexed))
    assert fixed.returncode == 0, fixed.stderr
    assert verify(indexed)["equal"]


def test_a_text_column_that_is_not_utf8_is_a_damaged_index(
        indexed: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite stores text unchecked; Python's sqlite3 refuses to decode it ("Could not decode
    to UTF-8 column 'iface'"), which the CLI reported as an unknown failure (exit 1)."""
    no_quick_check(monkeypatch)
    iface = stored(indexed, "SELECT iface FROM files WHERE path = 'pkg/base.py'")
    flip(indexed, iface, 3, b"\xff")
    flip(indexed, NODE_ROW, NAME_AT + 2, b"\xfe")
    (indexed / "pkg" / "use.py").write_text(FILES["pkg/use.py"] + "\n# touched\n")
    for args in (("index",), ("symbols", "assemble"), ("callers", "pkg.shapes.Gadget")):
        proc = cli(capsys, monkeypatch, *args, str(indexed))
        assert clear_error(proc, 6, REBUILD, "damaged") is None, (args, proc.stderr)


def test_a_chunk_whose_json_does_not_decode_is_a_damaged_index(
        indexed: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    symbols = stored(indexed, "SELECT symbols FROM chunk WHERE path = 'pkg/use.py'")
    assert symbols.startswith(b"[")
    flip(indexed, symbols, 0, b"{")
    proc = cli(capsys, monkeypatch, "search", "assemble gadget", str(indexed))
    assert clear_error(proc, 6, REBUILD, "stored chunk") is None, proc.stderr


def test_http_answers_damaged_stored_data_with_the_fix(indexed: Path) -> None:
    from starlette.testclient import TestClient

    from knoxidx.api.http import create_app

    flip(indexed, NODE_ROW, NAME_AT + 2, b"\xfe")
    with TestClient(create_app(indexed), base_url="http://127.0.0.1") as client:
        response = client.get("/symbols?q=assemble")
    assert response.status_code == 500, response.text
    error = response.json()["error"]
    assert error["code"] == "corrupt_index" and REBUILD in error["message"], error


@pytest.mark.heavy
def test_damage_met_by_a_forked_resolver_fails_the_update_without_a_traceback(
        tmp_path: Path) -> None:
    """Over 200 files to resolve, forked children resolve beside the parent: whichever meets
    the damage, the update fails whole (before: exit 0, each file's resolution recorded as
    failed with "bad marshal data"; a child raising instead would have died with a traceback
    and "a resolver worker process died")."""
    files = {"pkg/__init__.py": "", "pkg/base.py": "def shared_base_fn():\n    return 1\n"}
    users = {f"pkg/u{i}.py": f"from pkg.base import shared_base_fn\n\n\ndef u{i}():\n"
             f"    return shared_base_fn() + {i}\n" for i in range(240)}
    root = write_tree(tmp_path / "repo", {**files, **users})
    assert run_cli("index", "--jobs", "2", str(root)).returncode == 0
    checkpointed(root)
    blob = stored(root, "SELECT facts FROM files WHERE path = 'pkg/base.py'")
    flip(root, blob, blob.find(b"shared_base_fn") + 3, b"X")
    for path, text in users.items():
        (root / path).write_text(text + "\n# touched\n")
    proc = run_cli("index", "--jobs", "2", str(root))
    assert clear_error(proc, 6, REBUILD, "stored facts") is None, proc.stderr


def test_the_servers_readers_answer_damage_with_the_fix(indexed: Path) -> None:
    """HTTP and MCP call through the reader pool: a query's SQLite error is the damaged
    index, named with the fix, for both (MCP passed the bare sqlite3 error on)."""
    from knoxidx.api.readers import ReaderPool
    from knoxidx.core.errors import CorruptIndexError

    flip(indexed, NODE_ROW, NAME_AT + 2, b"\xfe")
    pool = ReaderPool(indexed, workers=1)
    try:
        with pytest.raises(CorruptIndexError, match="rebuild"):
            pool.call(lambda idx: idx.symbols("assemble"))
    finally:
        pool.close()
