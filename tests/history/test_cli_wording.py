"""What the CLI prints says what is true of one: one file, one commit, one author in the
singular; a count with nothing to count as "none", not an empty line; a definition no commit
holds yet says so instead of printing its header alone."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import run_cli
from tests.history.gitrepo import Repo


def test_one_of_a_thing_is_singular_and_nothing_is_none(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit("one", {"a.py": "def f():\n    return 1\n"})
    code, indexed, err = run_cli("index", str(repo.root), "--no-embed")
    assert code == 0, err
    assert "1 file, 1 changed" in indexed and "search: 1 chunk (" in indexed
    assert "history: 1 commit (1 read" in indexed
    code, embedded, err = run_cli("embed", str(repo.root))
    assert code == 0, err
    assert embedded.startswith("embedded 1 chunk (") and ", 1 chunk in all" in embedded
    code, history, err = run_cli("history", "f", str(repo.root))
    assert code == 0, err
    assert "1 commit (0 after creation) by 1 author, " in history
    code, show, err = run_cli("show", "f", str(repo.root))
    assert code == 0, err
    assert "0 modifications by 1 author, " in show
    code, stats, err = run_cli("stats", str(repo.root))
    assert code == 0, err
    assert "  calls_by_confidence: none\n" in stats and "  unresolved_calls: none\n" in stats
    assert not [line for line in stats.splitlines() if line.endswith(":")]


def test_history_of_a_definition_no_commit_holds_says_so(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit("one", {"a.py": "def f():\n    return 1\n"})
    (repo.root / "b.py").write_text("def fresh():\n    return 2\n", encoding="utf-8")
    code, _, err = run_cli("index", str(repo.root), "--no-embed")
    assert code == 0, err
    code, out, err = run_cli("history", "fresh", str(repo.root))
    assert code == 0, err
    assert out.splitlines() == ["Function b.fresh  b.py:1",
                                "no commit yet: no commit the index has read holds its lines"]
