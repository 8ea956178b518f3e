"""Answers read files the index listed, maybe long before: a file turned since into a symlink
out of the repository (by a pull or a checkout; `/proc/self/environ` holds the API key) or
into a FIFO must be neither quoted nor waited on, by the CLI, HTTP or MCP (all read through
:func:`knoxidx.core.files.confined`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from knoxidx.core.files import OutsideRootError, confined
from knoxidx.index import Index
from tests.helpers import build, run_cli, write_tree

SOURCE = "def alpha_beta():\n    return 1\n\n\ndef gamma():\n    return alpha_beta()\n"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


@pytest.fixture
def indexed(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "repo", {"a.py": SOURCE})
    _git(root, "init", "-q", ".")
    _git(root, "add", "a.py")
    _git(root, "commit", "-qm", "one")
    build(root)
    return root


def test_context_does_not_quote_a_file_turned_into_a_link_out(indexed: Path,
                                                                tmp_path: Path) -> None:
    secret = tmp_path / "outside.py"
    secret.write_text("OUTSIDE_SECRET = 'hunter2-hunter2'\n" * 6)
    (indexed / "a.py").unlink()
    (indexed / "a.py").symlink_to(secret)
    with Index.open(indexed) as idx:
        answer = idx.context("alpha_beta", 2000)
    assert "OUTSIDE_SECRET" not in answer["markdown"]
    code, out, err = run_cli("context", "alpha_beta", str(indexed))
    assert code == 0 and "OUTSIDE_SECRET" not in out + err


def test_a_link_to_the_environment_is_not_read(indexed: Path) -> None:
    (indexed / "a.py").unlink()
    (indexed / "a.py").symlink_to("/proc/self/environ")
    code, out, err = run_cli("context", "alpha_beta", str(indexed),
                             env={"VOYAGE_API_KEY": "pa-not-a-real-key-0123456789"})
    assert code == 0 and "pa-not-a-real-key" not in out + err and "PATH=" not in out


@pytest.mark.parametrize("args", [["changes", "{root}"], ["hotspots", "{root}"],
                                  ["context", "alpha_beta", "{root}"], ["show", "gamma", "{root}"]])
def test_an_indexed_file_turned_into_a_fifo_is_not_waited_on(indexed: Path,
                                                             args: list[str]) -> None:
    (indexed / "a.py").unlink()
    os.mkfifo(indexed / "a.py")
    # a blocked open would hang here until the timeout fails the test
    code, out, err = run_cli(*(a.format(root=indexed) for a in args), timeout=60)
    assert code == 0, err


def test_confined(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "r", {"a.py": "x\n", "sub/b.py": "y\n", ".git/config": "[c]\n"})
    (root / "inner.py").symlink_to(root / "sub" / "b.py")
    (root / "git.py").symlink_to(root / ".git" / "config")
    (root / "out.py").symlink_to(tmp_path)
    assert confined(root, "a.py") == os.path.realpath(root / "a.py")
    assert confined(root, "inner.py") == os.path.realpath(root / "sub" / "b.py")
    for rel in ("../r/a.py/../../x", "/etc/passwd", "git.py", "out.py", ".knoxidx/index.db",
                "..", ""):
        with pytest.raises(OutsideRootError):
            confined(root, rel)
