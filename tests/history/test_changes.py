"""``knoxidx changes``: the definitions the work tree changed since a commit, read from real
git repositories, and what the graph says they may break, on every face."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import httpx
import pytest

from knoxidx.api.schemas import BY_TOOL
from knoxidx.core.errors import BadInputError, HistoryUnavailableError
from knoxidx.graph import traverse
from knoxidx.index import Index
from tests.agent.support import start_server
from tests.helpers import run_cli
from tests.history.gitrepo import Repo, git

SHAPES = """\
def area(w, h):
    return w * h


def perimeter(w, h):
    return 2 * (w + h)


def legacy(x):
    return x
"""
REPORT = """\
from shapes import area, legacy


def report(w, h):
    return f"area {area(w, h)}"


def old_report(x):
    return legacy(x)
"""
TESTS = """\
from report import report


def test_report():
    assert report(2, 3) == "area 6"
"""
OTHER = """\
def unrelated():
    return 1
"""


def _repo(root: Path) -> Repo:
    repo = Repo(root)
    repo.commit("start", {"shapes.py": SHAPES, "report.py": REPORT,
                          "tests/test_report.py": TESTS, "other.py": OTHER})
    return repo


def _edit(root: Path, rel: str, text: str) -> None:
    (root / rel).write_text(textwrap.dedent(text), encoding="utf-8")


def _index(root: Path) -> None:
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1, retrieval=False)


def _changed(answer: dict) -> dict[str, str]:
    return {c["qualified_name"]: c["change"] for c in answer["changed"] + answer["removed"]}


@pytest.fixture
def edited(tmp_path: Path) -> Path:
    """area's body changed, legacy removed, square added; nothing committed."""
    root = tmp_path / "r"
    _repo(root)
    _edit(root, "shapes.py", SHAPES.replace("return w * h", "return abs(w * h)").replace(
        "\n\ndef legacy(x):\n    return x\n", "\n\ndef square(s):\n    return s * s\n"))
    _index(root)
    return root


def test_modified_added_and_removed_definitions_and_what_they_break(edited: Path) -> None:
    with Index.open(edited) as idx:
        answer = idx.changes()
    assert _changed(answer) == {"shapes.area": "modified", "shapes.square": "added",
                                "shapes.legacy": "removed"}
    assert answer["files"] == [{"path": "shapes.py", "status": "modified", "lines_added": 3,
                                "lines_removed": 3}]
    area = next(c for c in answer["changed"] if c["name"] == "area")
    assert (area["path"], area["start_line"], area["lines_added"]) == ("shapes.py", 1, 1)
    # area <- report (depth 1) <- test_report (depth 2); the changed ones are not listed
    depths = {h["qualified_name"]: h["depth"] for h in answer["impacted"]}
    assert depths["report.report"] == 1 and depths["test_report.test_report"] == 2
    assert not {"shapes.area", "shapes.square"} & depths.keys()
    assert "other.unrelated" not in depths
    assert [t["qualified_name"] for t in answer["tests"]] == ["test_report.test_report"]
    assert answer["test_files"] == ["tests/test_report.py"] and answer["stale"] == []
    legacy = answer["removed"][0]
    assert (legacy["path"], legacy["start_line"], legacy["end_line"]) == ("shapes.py", 9, 10)
    # the call that resolved to it is left unresolved now: what the removal breaks
    assert legacy["still_called_total"] == 1
    assert legacy["still_called"] == [{"path": "report.py", "line": 9, "called_as": "legacy"}]


def test_lines_only_deleted_inside_a_definition_modify_it(tmp_path: Path) -> None:
    root = tmp_path / "r"
    _repo(root)
    _edit(root, "report.py", REPORT.replace('    return f"area {area(w, h)}"\n', "    pass\n")
          .replace("def old_report(x):\n    return legacy(x)\n", "def old_report(x):\n"))
    _index(root)
    with Index.open(root) as idx:
        answer = idx.changes()
    assert _changed(answer) == {"report.report": "modified", "report.old_report": "modified"}


def test_a_clean_work_tree_changed_nothing_and_an_older_base_shows_commits(tmp_path: Path) -> None:
    root = tmp_path / "r"
    repo = _repo(root)
    _index(root)
    with Index.open(root) as idx:
        clean = idx.changes()
    assert (clean["files"], clean["changed"], clean["removed"], clean["impacted"]) == \
        ([], [], [], [])
    repo.commit("perimeter in halves", {"shapes.py": SHAPES.replace(
        "return 2 * (w + h)", "return (w + h) + (w + h)")})
    _index(root)
    with Index.open(root) as idx:
        assert idx.changes()["changed"] == []
        since = idx.changes("HEAD~1")
    assert _changed(since) == {"shapes.perimeter": "modified"}
    assert since["base"]["commit"] == git(root, "rev-parse", "HEAD~1").strip()


def test_a_deleted_file_removes_its_definitions(tmp_path: Path) -> None:
    root = tmp_path / "r"
    _repo(root)
    (root / "other.py").unlink()
    (root / "notes.txt").write_text("not source\n", encoding="utf-8")
    _index(root)
    with Index.open(root) as idx:
        answer = idx.changes()
    assert _changed(answer) == {"unrelated": "removed"}
    assert {"path": "other.py", "status": "deleted", "lines_added": 0,
            "lines_removed": 2} in answer["files"]


def test_a_file_edited_after_indexing_is_reported_stale(edited: Path) -> None:
    _edit(edited, "report.py", REPORT + "\n\ndef later():\n    return 2\n")
    with Index.open(edited) as idx:
        answer = idx.changes()
    assert answer["stale"] == ["report.py"]
    code, _, err = run_cli("changes", str(edited))
    assert code == 0 and "warning: 1 file changed since the last `knoxidx index`" in err


def test_an_index_of_a_subdirectory_compares_its_own_files(tmp_path: Path) -> None:
    top = tmp_path / "top"
    repo = Repo(top)
    repo.commit("start", {"pkg/shapes.py": SHAPES, "pkg/report.py": REPORT,
                          "elsewhere/x.py": OTHER})
    _edit(top, "pkg/shapes.py", SHAPES.replace("return w * h", "return w * h * 1"))
    _index(top / "pkg")
    with Index.open(top / "pkg") as idx:
        answer = idx.changes()
    assert _changed(answer) == {"shapes.area": "modified"}
    assert [f["path"] for f in answer["files"]] == ["shapes.py"]


def test_bad_revisions_are_refused_before_git_sees_them(edited: Path, tmp_path: Path) -> None:
    with Index.open(edited) as idx:
        for revision in ("--output=/tmp/x", "-p", "", "HEAD\nx", "a b"):
            with pytest.raises(BadInputError, match="not a revision"):
                idx.changes(revision)
        with pytest.raises(BadInputError, match="no commit 'nope'"):
            idx.changes("nope")
        with pytest.raises(BadInputError, match="depth"):
            idx.changes(depth=0)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text(OTHER, encoding="utf-8")
    _index(plain)
    with Index.open(plain) as idx, pytest.raises(HistoryUnavailableError):
        idx.changes()
    code, _, err = run_cli("changes", str(edited), "--base", "-p")
    assert code == 2 and "not a revision" in err


def test_the_repositorys_own_git_settings_run_nothing(edited: Path) -> None:
    """A cloned repository is untrusted: its config and attributes name programs that a
    git diff of the work tree would run (textconv, a clean filter, an external diff)."""
    marker = edited / "RAN"
    git(edited, "config", "diff.external", f"touch {marker}")
    git(edited, "config", "core.fsmonitor", f"touch {marker}")
    git(edited, "config", "filter.evil.clean", f"touch {marker}; cat")
    git(edited, "config", "diff.evil.textconv", f"touch {marker}; cat")
    (edited / ".gitattributes").write_text("*.py filter=evil diff=evil\n", encoding="utf-8")
    with Index.open(edited) as idx:
        answer = idx.changes()
    assert _changed(answer)["shapes.area"] == "modified"
    assert not marker.exists()


def test_walking_from_several_nodes_lists_none_of_them() -> None:
    class Reads:  # a -> b -> c: who calls b and c
        nodes = {i: {"id": i, "kind": "Function", "name": n, "qualified_name": n, "path": "m",
                     "start_line": i, "end_line": i} for i, n in ((1, "a"), (2, "b"), (3, "c"))}

        def edges(self, ids, direction, types):
            calls = [(1, 2), (2, 3)]
            return [{"source": s, "target": t, "type": "Calls", "path": "m", "line": s,
                     "confidence": "exact"} for s, t in calls if t in ids]

        def nodes_by_id(self, ids):
            return {i: self.nodes[i] for i in ids}

    hits = traverse.walk(Reads(), [2, 3], "in", ("Calls",), 3, starts_listed=False)
    assert [(h["qualified_name"], h["depth"]) for h in hits] == [("a", 1)]
    assert traverse.walk(Reads(), [], "in", ("Calls",), 3) == []


def test_every_face_answers_the_same(edited: Path) -> None:
    operation = BY_TOOL["detect_changes"]
    with Index.open(edited) as idx:
        expected = json.loads(json.dumps(idx.changes(limit=1)))
        got = operation.call(idx, operation.parse({"limit": 1}, from_text=False))
        assert json.loads(json.dumps(got)) == expected and expected["truncated"]
    proc, url = start_server(edited)
    try:
        reply = httpx.get(url + "/changes", params={"limit": "1"}, timeout=30)
        assert reply.status_code == 200 and reply.json() == expected
        reply = httpx.get(url + "/changes", params={"base": "nope"}, timeout=30)
        assert reply.status_code == 400 and "no commit" in reply.json()["error"]["message"]
    finally:
        assert proc.stop() == 0
    code, out, err = run_cli("changes", str(edited), "--limit", "1")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("since HEAD (") and lines[0].endswith(
        "1 file, 3 definitions changed")
    assert lines[1:4] == ["  modified Function  shapes.area  shapes.py:1  +1 -1",
                          "  added    Function  shapes.square  shapes.py:9  +2 -0",
                          "  removed  Function  shapes.legacy  shapes.py:9 (base)  +0 -2"]
    assert "          still called at 1 sites: report.py:9" in out
    assert "tests reached: 1 in 1 file: tests/test_report.py" in out
    code, out, _ = run_cli("changes", str(edited), "--json")
    assert json.loads(out)["changed_total"] == 2
