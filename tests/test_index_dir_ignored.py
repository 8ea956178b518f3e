"""A ``.knoxidx`` folder keeps itself out of ``git status`` with a ``.gitignore`` of its own,
never editing the repository's."""

from __future__ import annotations

import subprocess
from pathlib import Path

from knoxidx.graph.dbfile import IGNORE_ALL
from tests.helpers import build


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True).stdout


def _committed_repo(repo) -> Path:
    root = repo({"app.py": "def run():\n    return 1\n"})
    _git(root, "init", "-q")
    _git(root, "add", "app.py")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "app")
    return root


def test_a_new_index_is_not_in_git_status(repo) -> None:
    root = _committed_repo(repo)
    build(root)
    assert _git(root, "status", "--porcelain", "--untracked-files=all") == ""
    assert (root / ".knoxidx" / ".gitignore").read_text() == IGNORE_ALL
    assert not (root / ".gitignore").exists()


def test_an_index_made_before_gets_its_gitignore_at_the_next_write(repo) -> None:
    root = _committed_repo(repo)
    build(root)
    (root / ".knoxidx" / ".gitignore").unlink()
    assert ".knoxidx/" in _git(root, "status", "--porcelain")
    build(root)
    assert _git(root, "status", "--porcelain") == ""


def test_a_gitignore_already_there_is_kept(repo) -> None:
    root = _committed_repo(repo)
    (root / ".knoxidx").mkdir()
    (root / ".knoxidx" / ".gitignore").write_text("index.db\n")
    build(root)
    assert (root / ".knoxidx" / ".gitignore").read_text() == "index.db\n"


def test_a_link_placed_as_the_gitignore_is_not_followed(repo, tmp_path: Path) -> None:
    root = _committed_repo(repo)
    outside = tmp_path / "users_file"
    (root / ".knoxidx").mkdir()
    (root / ".knoxidx" / ".gitignore").symlink_to(outside)
    build(root)
    assert not outside.exists()


def test_a_symlinked_index_folder_is_left_alone(repo, tmp_path: Path) -> None:
    """Git lists the link itself, which no file behind it can hide; the folder it points to
    is not knoxidx's to mark."""
    root = _committed_repo(repo)
    elsewhere = tmp_path / "indexes" / "app"
    elsewhere.mkdir(parents=True)
    (root / ".knoxidx").symlink_to(elsewhere)
    build(root)
    assert (elsewhere / "index.db").exists()
    assert not (elsewhere / ".gitignore").exists()
    assert not (root / ".gitignore").exists()


def test_a_postgresql_store_leaves_the_repository_as_it_was(repo, pg_url: str) -> None:
    from tests.helpers import Backend

    root = _committed_repo(repo)
    Backend(pg_url).build(root)
    assert not (root / ".knoxidx").exists()
    assert _git(root, "status", "--porcelain", "--untracked-files=all") == ""
