"""Reading code for a client stays inside the repository (the library side; the HTTP and MCP
faces are tested against the same cases in test_http.py and test_mcp.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from knoxidx.core.errors import BadPathError, LineRangeError
from knoxidx.index import Index
from knoxidx.parse.source import ForbiddenPathError, SourceNotFoundError, read_source
from tests.agent.support import make_hostile_repo

BAD = [
    "../etc/passwd", "app/../../etc/passwd", "app/../util.py", "/etc/passwd", "~/x.py",
    "%2e%2e/etc/passwd", "%2E%2E%2Fetc%2Fpasswd", "app%2futil.py", "..\\etc\\passwd",
    "app/\x00.py", "", "   ", ".", "./",
]
FORBIDDEN = [
    ".git/config", ".knoxidx/index.db", "secrets/token.py", "debug.log", "node_modules/m/i.js",
    "escape/secret.py", "evil.py", "app/.git/HEAD",
    # a case-insensitive file system (macOS, Windows) opens these as .git/config, .knoxidx/...
    ".GIT/config", ".Knoxidx/index.db", "app/.Git/HEAD",
]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_hostile_repo(tmp_path_factory.mktemp("source"))


@pytest.mark.parametrize("path", BAD)
def test_malformed_paths_are_refused(root: Path, path: str) -> None:
    with pytest.raises(BadPathError) as info:
        read_source(root, path)
    assert not isinstance(info.value, ForbiddenPathError)


@pytest.mark.parametrize("path", FORBIDDEN)
def test_paths_outside_what_may_be_read_are_forbidden(root: Path, path: str) -> None:
    with pytest.raises(ForbiddenPathError):
        read_source(root, path)


def test_reads_lines_and_pages(root: Path) -> None:
    with Index.open(root) as idx:
        whole = idx.read_source("app/util.py")
        assert whole["start_line"] == 1 and whole["end_line"] == whole["total_lines"] == 9
        assert whole["text"].startswith("def read_text(path):") and not whole["truncated"]
        part = idx.read_source("app/util.py", 7, 8)
        assert part["text"] == 'def normalise(text):\n    """Strip surrounding whitespace."""'
        paged = idx.read_source("app/util.py", 2, None, max_lines=3)
        assert (paged["start_line"], paged["end_line"], paged["truncated"]) == (2, 4, True)
        assert idx.read_source("app/util.py", 8, 500)["end_line"] == 9
        assert idx.read_source("docs/notes.txt")["language"] is None  # not code: still readable
        assert idx.read_source("alias.py")["text"] == whole["text"]
        assert idx.read_source("./app//util.py")["path"] == "app/util.py"


@pytest.mark.parametrize("start,end", [(0, None), (10, None), (5, 4)])
def test_bad_ranges(root: Path, start: int, end: int | None) -> None:
    """A range the file does not have is bad input, not a bad path (HTTP 400 bad_range)."""
    with pytest.raises(LineRangeError) as info:
        read_source(root, "app/util.py", start, end)
    assert not isinstance(info.value, BadPathError)


def test_missing_directory_and_binary(root: Path) -> None:
    with pytest.raises(SourceNotFoundError):
        read_source(root, "app/nope.py")
    with pytest.raises(BadPathError, match="directory"):
        read_source(root, "app")
    with pytest.raises(BadPathError, match="binary"):
        read_source(root, "data/blob.py")


def test_a_link_into_the_internals_is_forbidden_whatever_its_target_is_named(
        tmp_path: Path) -> None:
    """The target's name is checked as the file system has it: a name that is not UTF-8
    under .git hid where the link led, and the file was read."""
    root = make_hostile_repo(tmp_path)
    os.symlink(".git/config", root / "peek.py")
    hidden = os.path.join(os.fsencode(root), b".git", b"\xffkeys")
    with open(hidden, "wb") as out:
        out.write(b"token = 1\n")
    os.symlink(hidden, root / "odd.py")
    for path in ("peek.py", "odd.py"):
        with pytest.raises(ForbiddenPathError, match="internals"):
            read_source(root, path)


def test_a_name_spelled_in_another_case_is_not_read(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A case-insensitive file system (macOS, Windows) opens SECRETS/token.py as the ignored
    secrets/token.py, and .ENV as a never-send .env: the rules match names in their case."""
    import knoxidx.parse.source as source

    top = os.path.realpath(root)
    opened = source.read_regular
    # realpath keeps the spelling asked for; the open finds the file in any case
    monkeypatch.setattr(source, "confined", lambda base, rel: os.path.join(top, rel))
    monkeypatch.setattr(source, "read_regular", lambda path, limit: opened(
        os.path.join(top, os.path.relpath(path, top).lower()), limit))
    for path in ("SECRETS/token.py", "App/util.py", "app/UTIL.py"):
        with pytest.raises(SourceNotFoundError, match="in their case"):
            read_source(root, path)
    assert read_source(root, "app/util.py")["total_lines"] == 9
