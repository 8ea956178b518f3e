"""Names in a repository that are not regular files: a FIFO named like an ignore file, a build
configuration, the settings file, or put in a source file's place after discovery.

Opening a FIFO for reading blocks until a writer comes, and a blocked open uses no CPU, so no
CPU bound ends it: each of these made `knoxidx index` (or a parse worker, or the process that
chunks and quotes source) wait for ever. Each case runs where a hang fails the test instead of
stopping the run: in a subprocess with a timeout, or under an alarm."""

from __future__ import annotations

import functools
import json
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from knoxidx.core.files import (
    FileTooLargeError,
    NotRegularFileError,
    read_regular,
    read_regular_text,
)
from tests.helpers import run_cli

HANG_SECONDS = 60


def index_json(root: Path, *args: str) -> tuple[int, dict, str]:
    code, out, err = run_cli("index", "--json", *args, str(root), timeout=HANG_SECONDS)
    return code, (json.loads(out) if out.strip() else {}), err


class Hung(BaseException):
    """Raised by the alarm; not an OSError, which the code under test would take for an
    unreadable file and go on to the next blocking open."""


@contextmanager
def no_hang(seconds: int = 10) -> Iterator[None]:
    """Fail instead of waiting for ever: the alarm interrupts a blocked open()."""

    def fail(_signum: int, _frame: object) -> None:
        raise Hung(f"still waiting after {seconds} s")

    previous = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_read_regular_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with no_hang():
        for path in (tmp_path / "pipe", tmp_path, Path("/dev/zero")):
            with pytest.raises(NotRegularFileError):
                read_regular(path)
    (tmp_path / "ten").write_bytes(b"0123456789")
    assert read_regular(tmp_path / "ten", 10) == b"0123456789"
    with pytest.raises(FileTooLargeError):
        read_regular(tmp_path / "ten", 9)
    (tmp_path / "empty").write_bytes(b"")
    assert read_regular(tmp_path / "empty") == b""
    (tmp_path / "crlf").write_bytes(b"a\r\nb\rc\n\xff")
    assert read_regular_text(tmp_path / "crlf") == "a\nb\nc\n\ufffd"  # as open() reads text


def test_a_fifo_named_like_an_ignore_file_or_a_build_configuration_is_skipped_counted(
        repo) -> None:
    root = repo({
        "app/main.py": "def main():\n    return 1\n",
        "web/b.ts": "export function b() { return 1; }\n",
        "web/a.ts": "import { b } from './b';\nexport function a() { return b(); }\n",
    })
    os.mkfifo(root / "app" / ".gitignore")
    os.mkfifo(root / ".knoxidxignore")
    os.mkfifo(root / "tsconfig.json")
    os.mkfifo(root / "go.mod")
    os.symlink("/dev/zero", root / "web" / ".gitignore")  # read whole, it never ended
    code, report, err = index_json(root, "--graph-only")
    assert code == 0, err
    assert report["files"] == 3
    assert report["skipped"] == {"not_a_file": 5}
    again, report, err = index_json(root, "--graph-only")  # the walk cache's turn
    assert again == 0 and report["skipped"] == {"not_a_file": 5}, err


def test_a_settings_file_that_is_not_a_regular_file_is_a_clear_error(repo) -> None:
    """It was passed over as absent, and with it any never-send patterns it holds."""
    root = repo({"main.py": "def main():\n    return 1\n"})
    assert index_json(root)[0] == 0
    os.mkfifo(root / "knoxidx.toml")
    code, _, err = run_cli("search", "main", str(root), timeout=HANG_SECONDS)
    assert code != 0
    assert "knoxidx.toml: not a regular file" in err and "Traceback" not in err


def test_a_source_file_replaced_by_a_fifo_after_discovery_is_unreadable_not_waited_on(
        repo) -> None:
    from knoxidx.parse.discovery import discover
    from knoxidx.parse.reader import read_and_extract

    root = repo({"main.py": "def main():\n    return 1\n"})
    [found] = discover(root).files
    (root / "main.py").unlink()
    os.mkfifo(root / "main.py")
    with no_hang():
        result = read_and_extract((str(root), found, None, None, True))
    assert result.status == "unreadable" and result.message == "not a regular file"


def test_chunking_and_context_do_not_wait_on_a_fifo_in_an_indexed_file_s_place(repo) -> None:
    from knoxidx.answers.pack_files import Files
    from knoxidx.index import Index
    from knoxidx.update.chunk_refresh import chunk_one

    root = repo({"main.py": "def main():\n    return 1\n"})
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1)
        facts = idx.store.load_facts("main.py")
    (root / "main.py").unlink()
    os.mkfifo(root / "main.py")
    with no_hang():
        chunked = chunk_one(str(root), "main.py", "", facts, None)  # type: ignore[arg-type]
        lines = Files(root, None).lines("main.py")  # type: ignore[arg-type]
    assert chunked.error == "unreadable: not a regular file"
    assert lines == [""]


def test_a_parse_worker_chunks_a_file_as_the_retrieval_phase_would(repo) -> None:
    # the worker has the file's bytes with invalid UTF-8 replaced for extraction; its chunks
    # must quote the file as read from disk, as chunk_one does
    from knoxidx.core.facts import load_facts
    from knoxidx.graph.layout import build_layout
    from knoxidx.parse.discovery import discover
    from knoxidx.parse.reader import read_and_extract
    from knoxidx.retrieval.chunker import ChunkBudget
    from knoxidx.retrieval.store import chunk_rows
    from knoxidx.update.chunk_refresh import chunk_one, chunk_source

    root = repo({"main.py": "def main():\n    return 1\n"})
    (root / "main.py").write_bytes(
        b"class Shape:\n    def area(self):\n        return '\xff\xfe'\n\n"
        + b"".join(b"def f%d(x):\n    return x * %d\n\n" % (i, i) for i in range(40)))
    discovered = discover(root)
    [found] = discovered.files
    layout = build_layout(root, [found.path], discovered.config_paths)
    budget = ChunkBudget(max_tokens=64, merge_tokens=32, min_tokens=8, member_tokens=16,
                         definition_merge_tokens=16, overlap_tokens=8)
    result = read_and_extract((str(root), found, None, layout, True,
                               functools.partial(chunk_source, budget=budget)))
    assert result.status == "ok" and result.blob is not None, result.message
    made = result.chunked
    expected = chunk_one(str(root), "main.py", result.hash, load_facts(result.blob), budget)
    assert made.source_hash == expected.source_hash == result.hash
    assert made.chunks == expected.chunks and len(made.chunks) > 5
    assert made.rows == expected.rows == [chunk_rows(c) for c in expected.chunks]
    assert "\ufffd" in made.chunks[0].text
    assert read_and_extract((str(root), found, None, layout, True)).chunked is None
