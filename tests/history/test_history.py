"""Each definition's history from git, end to end on real repositories made here: what
``knoxidx index`` reads, what ``history`` and ``hotspots`` answer, and what must never happen
(stale history after a rewrite, a repository's programs run)."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest

from knoxidx.history.answers import HistoryUnavailableError
from knoxidx.history.gitlog import MAX_DIFF_BYTES
from knoxidx.history.store import HistoryTables
from knoxidx.index import Index
from tests.helpers import run_cli
from tests.history.gitrepo import Repo, git

GREET_V1 = """\
def greet(name):
    return "hello " + name


def farewell(name):
    return "bye " + name
"""
# greet changes; farewell's lines only move down (three lines added above it)
GREET_V2 = """\
def greet(name):
    prefix = "hello "
    suffix = "!"
    return prefix + name + suffix


def farewell(name):
    return "bye " + name
"""
GREET_V3 = """\
import sys


def greet(name):
    prefix = "hello "
    suffix = "!"
    return prefix + name + suffix


def farewell(name):
    sys.stdout.write("leaving")
    return "bye " + name
"""


def index(root: Path, **kwargs) -> dict:
    with Index.open(root, create=True) as idx:
        return idx.update(jobs=1, retrieval=False, **kwargs).history


def history(root: Path, symbol: str) -> dict:
    with Index.open(root) as idx:
        return idx.history(symbol)


def hashes(answer: dict) -> list[str]:
    return [c["commit"] for c in answer["changes"]]


@pytest.fixture
def greeting(tmp_path: Path) -> tuple[Repo, list[str]]:
    repo = Repo(tmp_path / "r")
    made = [repo.commit("add greetings", {"app.py": GREET_V1}, author="Ada"),
            repo.commit("louder greet", {"app.py": GREET_V2}, author="Bob"),
            repo.commit("farewell writes", {"app.py": GREET_V3}, author="Cy")]
    return repo, made


def test_creation_and_changes_follow_lines_that_move(greeting) -> None:
    repo, (c1, c2, c3) = greeting
    report = index(repo.root)
    assert report["available"] and report["mode"] == "full" and report["commits"] == 3

    greet = history(repo.root, "greet")
    assert hashes(greet) == [c2, c1]  # c3 moved it down two lines: not a change
    assert greet["created"]["commit"] == c1 and greet["created"]["author"] == "Ada"
    assert greet["totals"]["modifications"] == 1 and greet["totals"]["authors"] == 2
    assert greet["changes"][0]["added"] == 3 and greet["changes"][0]["removed"] == 1

    farewell = history(repo.root, "farewell")
    assert hashes(farewell) == [c3, c1]  # c2 moved it down three lines: not a change
    node = farewell["symbol"]
    assert hashes(farewell) == repo.log_l(node["start_line"], node["end_line"], "app.py")


def test_a_renamed_file_is_followed(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    c1 = repo.commit("add", {"old_name.py": GREET_V1})
    git(repo.root, "mv", "old_name.py", "new_name.py")
    c2 = repo.commit("rename", {})
    c3 = repo.commit("change", {"new_name.py": GREET_V2})
    index(repo.root)
    greet = history(repo.root, "greet")
    assert hashes(greet) == [c3, c1] and c2 not in hashes(greet)
    assert greet["renamed_from"] == ["old_name.py"]
    assert greet["changes"][-1]["path"] == "old_name.py"


def test_new_commits_are_read_alone_and_match_a_read_from_scratch(greeting) -> None:
    repo, _ = greeting
    index(repo.root)
    c4 = repo.commit("greet again", {"app.py": GREET_V3.replace('"!"', '"!!"')})
    report = index(repo.root)
    assert (report["mode"], report["commits_read"], report["commits"]) == ("incremental", 1, 4)
    assert hashes(history(repo.root, "greet"))[0] == c4
    assert index(repo.root)["mode"] == "unchanged"
    with Index.open(repo.root) as idx:
        kept = _rows(HistoryTables(idx.store.conn))
        idx.update(jobs=1, retrieval=False, rebuild=True)
        assert _rows(HistoryTables(idx.store.conn)) == kept


def _rows(tables: HistoryTables) -> tuple[list, list]:
    return (tables.conn.execute("SELECT * FROM history_commit ORDER BY seq").fetchall(),
            tables.conn.execute("SELECT * FROM history_change ORDER BY seq, path").fetchall())


@pytest.mark.parametrize("rewrite", ["amend", "reset"])
def test_a_rewritten_history_is_read_again_never_kept_stale(greeting, rewrite) -> None:
    repo, (c1, c2, c3) = greeting
    index(repo.root)
    if rewrite == "amend":  # a force-push: the last commit read is no longer in HEAD's history
        git(repo.root, "commit", "-q", "--amend", "-m", "farewell writes, amended",
            when=1_800_000_000)
    else:  # HEAD moved back to an ancestor
        git(repo.root, "reset", "-q", "--hard", c2)
    report = index(repo.root)
    assert report["mode"] == "full"
    head = git(repo.root, "rev-parse", "HEAD").strip()
    with Index.open(repo.root) as idx:
        stored = [r[0] for r in idx.store.conn.execute(
            "SELECT hash FROM history_commit ORDER BY seq")]
    assert c3 not in stored and stored[-1] == head
    assert stored == git(repo.root, "rev-list", "--first-parent", "--reverse", "HEAD").split()


def test_a_shallow_clone_reads_what_it_has(greeting, tmp_path: Path) -> None:
    repo, (c1, c2, c3) = greeting
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{repo.root}", str(clone)],
                   check=True, capture_output=True)
    report = index(clone)
    assert report["shallow"] and report["commits"] == 2
    greet = history(clone, "greet")
    assert hashes(greet) == [c2] and greet["shallow"]  # its creation lies beyond the clone


def test_a_detached_head_is_read_from_where_it_is(greeting) -> None:
    repo, (c1, c2, c3) = greeting
    git(repo.root, "checkout", "-q", "--detach", c2)
    assert index(repo.root)["commits"] == 2
    assert hashes(history(repo.root, "farewell")) == [c1]


def test_outside_git_everything_else_works_and_one_line_says_why(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(GREET_V1, encoding="utf-8")
    code, out, err = run_cli("index", "--graph-only", str(tmp_path))
    assert code == 0, err
    assert [line for line in out.splitlines() if "history" in line] == [
        "no history: not a git repository (or any of the parent directories): .git"]
    code, out, err = run_cli("history", "greet", str(tmp_path))
    assert code == HistoryUnavailableError.exit_code and "no history" in err
    code, out, _ = run_cli("symbols", "greet", str(tmp_path))
    assert code == 0 and "app.py:1" in out


def test_no_history_drops_what_was_read(greeting) -> None:
    repo, _ = greeting
    index(repo.root)
    report = index(repo.root, history=False)
    assert report == {"available": False, "reason": "no history: --no-history"}
    with pytest.raises(HistoryUnavailableError):
        history(repo.root, "greet")


def test_a_huge_generated_file_costs_no_patch(greeting) -> None:
    repo, _ = greeting
    line = "x = 1  # generated\n"
    big = line * (2 * MAX_DIFF_BYTES // len(line))
    repo.commit("generated", {"gen.py": big})
    repo.commit("regenerated", {"gen.py": big.replace("x = 1", "x = 2", 1000)})
    report = index(repo.root)
    assert report["commits"] == 5
    with Index.open(repo.root) as idx:
        rows = idx.store.conn.execute(
            "SELECT length(hunks) FROM history_change WHERE path='gen.py'").fetchall()
    assert all(size == 0 for (size,) in rows)  # diffed as binary by git: no hunks read


def test_the_repository_never_runs_its_programs(greeting, tmp_path: Path) -> None:
    repo, _ = greeting
    marker = tmp_path / "ran"
    touch = f"touch {marker}"
    for key, value in (("core.fsmonitor", touch), ("diff.external", touch),
                       ("core.pager", touch), ("diff.evil.textconv", touch),
                       ("log.showSignature", "true"), ("gpg.program", touch),
                       ("core.hooksPath", str(repo.root / "hooks"))):
        git(repo.root, "config", key, value)
    hooks = repo.root / "hooks"
    hooks.mkdir()
    for name in ("post-checkout", "post-index-change", "reference-transaction",
                 "pre-auto-gc", "post-rewrite"):
        (hooks / name).write_text(f"#!/bin/sh\n{touch}\n")
        (hooks / name).chmod(0o755)
    (repo.root / ".gitattributes").write_text("*.py diff=evil\n")
    before = sorted(p.name for p in (repo.root / ".git").iterdir())
    mtime = (repo.root / ".git" / "index").stat().st_mtime_ns
    assert index(repo.root)["available"]
    history(repo.root, "greet")
    assert not marker.exists()
    assert sorted(p.name for p in (repo.root / ".git").iterdir()) == before
    assert (repo.root / ".git" / "index").stat().st_mtime_ns == mtime


def test_an_index_of_a_subdirectory_maps_its_paths(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    c1 = repo.commit("add", {"pkg/app.py": GREET_V1})
    c2 = repo.commit("change", {"pkg/app.py": GREET_V2})
    index(repo.root / "pkg")
    assert hashes(history(repo.root / "pkg", "greet")) == [c2, c1]


def test_hotspots_rank_by_changes_and_size(greeting) -> None:
    repo, (c1, c2, c3) = greeting
    index(repo.root)
    with Index.open(repo.root) as idx:
        answer = idx.hotspots(since_days=None)
    ranked = {(h["qualified_name"], h["changes"], h["lines"]) for h in answer["definitions"]}
    assert ranked == {("app.greet", 2, 4), ("app.farewell", 2, 3)}
    assert answer["definitions"][0]["qualified_name"] == "app.greet"  # larger, as often
    assert answer["files"] == [{"path": "app.py", "changes": 3, "lines": 12, "weight": 12,
                                "score": round(3 * 3.7004, 2)}]
    greet = answer["definitions"][0]
    assert (greet["cyclomatic"], greet["loc"], greet["weight"]) == (1, 4, 4)
    with Index.open(repo.root) as idx:
        recent = idx.hotspots(since_days=0)  # the newest commit alone
    assert [h["qualified_name"] for h in recent["definitions"]] == ["app.farewell"]


STRAIGHT_AND_BRANCHY = """\
def straight(x):
    y = x + 1
    z = y * 2
    w = z - 3
    v = w / 4
    return v{}


def branchy(x):
    if x > 1:
        return 1
    elif x < 0:
        return 2{}
"""


def test_hotspots_weigh_a_function_by_its_complexity(tmp_path: Path) -> None:
    # changed as often, the shorter function with more paths through it ranks first
    repo = Repo(tmp_path / "r")
    for n, note in enumerate(("", "  # one", "  # two")):
        repo.commit(f"edit {n}", {"both.py": STRAIGHT_AND_BRANCHY.format(note, note)})
    index(repo.root)
    with Index.open(repo.root) as idx:
        answer = idx.hotspots(since_days=None, kind="Function")
    assert answer["formula"] == ("score = changes x log2(1 + weight); weight = cyclomatic x "
                                 "loc for a function, lines otherwise")
    ranked = [(h["qualified_name"], h["changes"], h["lines"], h["cyclomatic"], h["loc"],
               h["weight"]) for h in answer["definitions"]]
    assert ranked == [("both.branchy", 3, 5, 3, 5, 15), ("both.straight", 3, 6, 1, 6, 6)]
    assert answer["definitions"][0]["score"] == round(3 * math.log2(16), 2)
    with Index.open(repo.root) as idx:
        evolution = idx.find_symbols("branchy")["symbols"][0]["evolution"]
    assert evolution["hotspot"] == round(3 * math.log2(16), 2)


def test_hotspots_filter_by_kind_and_path(greeting, tmp_path: Path) -> None:
    repo, _ = greeting
    repo.commit("more", {"lib/util.py": "def helper():\n    return 1\n"})
    index(repo.root)
    with Index.open(repo.root) as idx:
        functions = idx.hotspots(kind="Function", since_days=None)
        assert {h["qualified_name"] for h in functions["definitions"]} == {
            "app.greet", "app.farewell", "util.helper"}
        under_lib = idx.hotspots(path="lib", since_days=None)
    assert [h["qualified_name"] for h in under_lib["definitions"]] == ["util.helper"]
    assert [f["path"] for f in under_lib["files"]] == ["lib/util.py"]


# b's first line could be the inserted "@Test" or the one above c: git log -L aligns it without
# the indent heuristic (-6,0 +7,5 with it, -7,0 +8,5 without), and so must the history.
JAVA_V1 = """\
class T {
    @Test
    void a() {
        x();
    }

    @Test
    void c() {
        z();
    }
}
"""
JAVA_V2 = JAVA_V1.replace("""    }

    @Test
    void c() {""", """    }

    @Test
    void b() {
        y();
    }

    @Test
    void c() {""")


def test_every_definition_matches_git_log_l_where_hunks_could_slide(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit("a and c", {"T.java": JAVA_V1, "README.md": "# T\n"})
    repo.commit("b between", {"T.java": JAVA_V2, "README.md": "# T, with b\n"})
    repo.commit("c calls more", {"T.java": JAVA_V2.replace("z();", "z();\n        w();")})
    index(repo.root)
    with Index.open(repo.root) as idx:
        nodes = idx.store.conn.execute(
            "SELECT qualified_name, start_line, end_line FROM nodes WHERE kind != 'File'"
            " AND start_line IS NOT NULL").fetchall()
        stored = {p for (p,) in idx.store.conn.execute("SELECT path FROM history_change")}
        assert len(nodes) >= 4
        for qualified, start, end in nodes:
            assert hashes(idx.history(qualified)) == repo.log_l(start, end, "T.java"), qualified
    assert stored == {"T.java"}  # a document's changes hold no definition: not kept


def test_verify_compares_the_history_with_a_read_from_scratch(greeting) -> None:
    from knoxidx.update.verify import verify_index

    repo, _ = greeting
    index(repo.root)
    repo.commit("later", {"app.py": GREET_V2})
    index(repo.root)
    with Index.open(repo.root) as idx:
        assert verify_index(idx)["history"] == {
            "equal": True, "head": git(repo.root, "rev-parse", "HEAD").strip(), "commits": 4,
            "clean_commits": 4}
        idx.store.conn.execute("DELETE FROM history_change WHERE seq = 1")  # a lost write
        result = verify_index(idx)
    assert not result["equal"] and not result["history"]["equal"]


def test_uncommitted_edits_move_lines_without_changing_history(greeting) -> None:
    repo, (c1, c2, c3) = greeting
    edited = GREET_V3.replace("import sys\n", "import sys\nimport os\n\n\ndef draft():\n"
                              "    return os.getcwd()\n")
    (repo.root / "app.py").write_text(edited, encoding="utf-8")
    index(repo.root)  # the graph has the edited lines; the history ends at c3
    assert hashes(history(repo.root, "farewell")) == [c3, c1]
    assert hashes(history(repo.root, "greet")) == [c2, c1]
    draft = history(repo.root, "draft")
    assert draft["changes"] == [] and draft["created"] is None


def test_a_repository_with_a_submodule(greeting, tmp_path: Path) -> None:
    repo, (c1, c2, c3) = greeting
    library = Repo(tmp_path / "lib")
    library.commit("lib", {"lib.py": "def lib():\n    return 1\n"})
    git(repo.root, "-c", "protocol.file.allow=always", "submodule", "add", "-q",
        str(library.root), "vendor/lib")
    c4 = repo.commit("vendor lib", {})
    report = index(repo.root)
    assert report["commits"] == 4
    assert hashes(history(repo.root, "farewell")) == [c3, c1]
    with Index.open(repo.root) as idx:
        paths = {p for (p,) in idx.store.conn.execute("SELECT path FROM history_change")}
    assert paths == {"app.py"} and c4


def recent(idx: Index) -> list[tuple[int, str, int, int]]:
    """What the last commits changed, as either store answers it (ids are the store's own)."""
    from knoxidx.history.answers import recent_changes

    return [(c.seq, c.path, c.start_line, c.end_line)
            for c in recent_changes(idx.store, idx.root, 30, 20)]


def referenced(idx: Index, text: str) -> list[tuple[int, str, int, int]]:
    """What the commits ``text`` names changed, as either store answers it."""
    from knoxidx.history.answers import referenced_changes

    return [(c.seq, c.path, c.start_line, c.end_line)
            for c in referenced_changes(idx.store, idx.root, text)[0]]


def similar(idx: Index, text: str) -> list[tuple[int, str, int, int]]:
    """What the past commits like ``text`` changed, as either store answers it."""
    from knoxidx.answers.precedents import similar_commits
    from knoxidx.history.answers import commit_changes
    from knoxidx.history.tables import tables_of

    tables = tables_of(idx.store)
    assert tables is not None
    seqs = similar_commits(tables, text, 3)
    return [(c.seq, c.path, c.start_line, c.end_line)
            for c in commit_changes(tables, idx.root, seqs, best_first=True)[0]]


def test_the_postgresql_store_keeps_the_same_history(greeting, pg_url) -> None:
    from knoxidx.update.verify import verify_index

    repo, (_, c2, _) = greeting
    local = history(repo.root, "greet") if index(repo.root) else None
    with Index.open(repo.root) as idx:
        local_hotspots = idx.hotspots(since_days=None)
        local_recent = recent(idx)
        local_referenced = referenced(idx, f"since {c2[:8]}")
        local_similar = similar(idx, "greet louder, then write a farewell")
    with Index.open(repo.root, create=True, store=pg_url) as idx:
        assert idx.update(jobs=1, retrieval=False).history["mode"] == "full"
        assert idx.history("greet") == local
        assert idx.hotspots(since_days=None) == local_hotspots  # complexity's weight too
        assert idx.find_symbols("farewell")["symbols"][0]["evolution"]["modifications"] == 1
        assert verify_index(idx)["history"]["equal"]
        assert recent(idx) == local_recent and local_recent  # context's recent changes
        assert referenced(idx, f"since {c2[:8]}") == local_referenced and local_referenced
        assert similar(idx, "greet louder, then write a farewell") == local_similar
        assert {seq for seq, *_ in local_similar} == {1, 2}  # "louder greet", "farewell writes"
    repo.commit("later (#7)", {"app.py": GREET_V1})
    with Index.open(repo.root, store=pg_url) as idx:
        report = idx.update(jobs=1, retrieval=False).history
        assert (report["mode"], report["commits_read"]) == ("incremental", 1)
        assert {seq for seq, *_ in referenced(idx, "after PR 7")} == {3}
        assert verify_index(idx)["history"]["equal"]
        assert idx.update(jobs=1, retrieval=False, history=False).history["available"] is False
        with pytest.raises(HistoryUnavailableError):
            idx.history("greet")


def test_a_repository_without_commits_has_no_history_yet(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    (repo.root / "app.py").write_text(GREET_V1, encoding="utf-8")
    assert index(repo.root) == {"available": False,
                                "reason": "no history: the repository has no commits yet"}
    c1 = repo.commit("first", {"app.py": GREET_V1})
    assert index(repo.root)["mode"] == "full"
    assert hashes(history(repo.root, "greet")) == [c1]


def test_a_clone_whose_head_branch_is_missing_says_which_branch_it_has(tmp_path: Path) -> None:
    """A bundle's clone checks out nothing when the bundle's HEAD names a branch it does not
    carry: the history says there are commits to check out, not that there are none."""
    repo = Repo(tmp_path / "r")
    repo.commit("first", {"app.py": GREET_V1})
    git(repo.root, "branch", "-m", "main", "trunk")
    git(repo.root, "symbolic-ref", "HEAD", "refs/heads/main")  # unborn: as such a clone is
    assert index(repo.root) == {
        "available": False, "reason": "no history: HEAD is on a branch with no commits, though "
        "the repository has others (trunk): check one out"}


def test_paths_git_quotes_are_read_back(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    name = "naïve dir/\"odd\" name.py"
    c1 = repo.commit("add", {name: GREET_V1})
    c2 = repo.commit("change", {name: GREET_V2})
    index(repo.root)
    assert hashes(history(repo.root, "greet")) == [c2, c1]


def test_a_merge_counts_once_as_its_first_parent_diff(greeting) -> None:
    repo, (c1, c2, c3) = greeting
    git(repo.root, "checkout", "-q", "-b", "topic")
    side = repo.commit("topic: greet shouts", {"app.py": GREET_V3.replace('"!"', '"!!!"')})
    git(repo.root, "checkout", "-q", "main")
    git(repo.root, "merge", "-q", "--no-ff", "-m", "merge topic", "topic", when=1_800_000_000)
    merge = git(repo.root, "rev-parse", "HEAD").strip()
    assert index(repo.root)["commits"] == 4  # the topic's own commit is not on the chain
    greet = history(repo.root, "greet")
    assert hashes(greet) == [merge, c2, c1] and side not in hashes(greet)
    node = greet["symbol"]
    assert hashes(greet) == repo.log_l(node["start_line"], node["end_line"], "app.py")


def test_git_failing_part_way_keeps_no_history_and_the_graph(greeting) -> None:
    repo, (c1, c2, c3) = greeting
    index(repo.root)
    old_blob = git(repo.root, "rev-parse", f"{c1}:app.py").strip()
    repo.commit("later", {"app.py": GREET_V1})
    (repo.root / ".git" / "objects" / old_blob[:2] / old_blob[2:]).unlink()  # a lost object
    with Index.open(repo.root) as idx:
        idx.store.conn.execute("DELETE FROM history_meta WHERE key='head'")  # read it all again
        report = idx.update(jobs=1, retrieval=False)
        assert not report.history["available"]
        assert report.history["reason"].startswith("no history: reading it failed: ")
        assert old_blob[:7] in report.history["reason"] or "unable" in report.history["reason"]
        assert idx.find_symbols("greet")["total"] == 1
        assert idx.store.conn.execute("SELECT count(*) FROM history_commit").fetchone() == (0,)
