"""A ``.knoxidx`` symlink that the repository commits is refused by every face; one the user
made (untracked, or outside git) keeps working."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from knoxidx.graph import index_link
from knoxidx.graph.index_link import CommittedIndexError, CommittedIndexLinkError
from knoxidx.index import Index
from tests.helpers import build, run_cli, write_tree


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


def _repo_committing_link(root: Path, target: Path) -> Path:
    write_tree(root, {"app.py": "def run():\n    return 1\n"})
    (root / ".knoxidx").symlink_to(target)
    _git(root, "init", "-q")
    _git(root, "add", "app.py", ".knoxidx")
    _git(root, "commit", "-qm", "app with its own index folder")
    return root


def test_the_cli_refuses_a_committed_link_and_writes_nothing_behind_it(tmp_path) -> None:
    target = tmp_path / "users_dir"
    target.mkdir()
    root = _repo_committing_link(tmp_path / "clone", target)
    code, _out, err = run_cli("index", "--no-embed", str(root))
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "symlink committed to the repository" in err and "remove the link" in err
    assert list(target.iterdir()) == []


def test_a_committed_link_to_an_existing_index_is_not_read(repo, tmp_path) -> None:
    """The servers' and the watcher's opens go through the same check as the CLI's."""
    elsewhere = repo({"lib.py": "def helper():\n    return 2\n"})
    build(elsewhere)
    root = _repo_committing_link(tmp_path / "clone", elsewhere / ".knoxidx")
    for open_index in (Index.open_reader, Index.open, lambda p: Index.open(p, create=True)):
        with pytest.raises(CommittedIndexLinkError):
            open_index(root)


def test_the_repository_config_runs_nothing_while_git_is_asked(tmp_path) -> None:
    target = tmp_path / "users_dir"
    target.mkdir()
    root = _repo_committing_link(tmp_path / "clone", target)
    marker = tmp_path / "ran"
    _git(root, "config", "core.fsmonitor", f"touch {marker}; false")
    with pytest.raises(CommittedIndexLinkError):
        build(root)
    assert not marker.exists()


def test_an_untracked_link_keeps_working(repo, tmp_path) -> None:
    target = tmp_path / "indexes" / "app"
    target.mkdir(parents=True)
    root = repo({"app.py": "def run():\n    return 1\n"})
    _git(root, "init", "-q")
    _git(root, "add", "app.py")
    _git(root, "commit", "-qm", "app")
    (root / ".knoxidx").symlink_to(target)
    build(root)
    assert (target / "index.db").exists()
    with Index.open_reader(root) as index:
        assert index.root == root.resolve()


def test_a_link_outside_any_git_repository_keeps_working(repo, tmp_path) -> None:
    target = tmp_path / "indexes" / "app"
    target.mkdir(parents=True)
    root = repo({"app.py": "def run():\n    return 1\n"})
    (root / ".knoxidx").symlink_to(target)
    build(root)
    assert (target / "index.db").exists()


def _repo_committing_index(root: Path, other: Path) -> Path:
    """A clone whose history carries an index built from other code (``git add -f``: knoxidx's
    own ``.knoxidx/.gitignore`` keeps its files out of git otherwise)."""
    write_tree(root, {"app.py": "def run():\n    return 1\n"})
    build(other)
    (root / ".knoxidx").mkdir()
    for item in (other / ".knoxidx").iterdir():
        if item.is_file():
            (root / ".knoxidx" / item.name).write_bytes(item.read_bytes())
    _git(root, "init", "-q")
    _git(root, "add", "-f", "app.py", ".knoxidx")
    _git(root, "commit", "-qm", "app with the index it brings")
    return root


def test_a_committed_index_folder_is_not_read_or_updated(repo, tmp_path) -> None:
    other = repo({"lib.py": "def helper():\n    return 2\n"})
    root = _repo_committing_index(tmp_path / "clone", other)
    shipped = (root / ".knoxidx" / "index.db").read_bytes()
    for open_index in (Index.open_reader, Index.open, lambda p: Index.open(p, create=True)):
        with pytest.raises(CommittedIndexError):
            open_index(root)
    code, _out, err = run_cli("index", "--no-embed", str(root))
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "committed to the repository" in err and "git rm -r -q --cached .knoxidx" in err
    code, _out, err = run_cli("symbols", "helper", str(root))
    assert code == 2 and "committed to the repository" in err
    assert (root / ".knoxidx" / "index.db").read_bytes() == shipped


def test_an_index_folder_taken_out_of_git_works_again(repo, tmp_path) -> None:
    other = repo({"lib.py": "def helper():\n    return 2\n"})
    root = _repo_committing_index(tmp_path / "clone", other)
    with pytest.raises(CommittedIndexError):
        build(root)
    _git(root, "rm", "-r", "-q", "--cached", ".knoxidx")
    shutil.rmtree(root / ".knoxidx")
    build(root)
    with Index.open_reader(root) as index:
        assert [s["name"] for s in index.symbols("run")] == ["run"]


def test_an_untracked_index_folder_in_a_repository_costs_one_git_call(repo, tmp_path,
                                                                        monkeypatch) -> None:
    root = repo({"app.py": "def run():\n    return 1\n"})
    _git(root, "init", "-q")
    _git(root, "add", "app.py")
    _git(root, "commit", "-qm", "app")
    build(root)
    calls: list[tuple[str, ...]] = []
    real = index_link.run_git
    monkeypatch.setattr(index_link, "run_git", lambda r, *a: calls.append(a) or real(r, *a))
    index_link._UNTRACKED.clear()
    for _ in range(3):
        with Index.open_reader(root):
            pass
    assert len(calls) == 1
