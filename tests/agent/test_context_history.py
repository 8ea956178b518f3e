"""Context's recently changed functions: read from the index's stored git history (real git,
a real index), gathered only when weighed, and nothing without a history."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from knoxidx.answers.context import ContextWeights, build_context, gather, rank
from knoxidx.answers.precedents import similar_commits
from knoxidx.history.answers import commit_references, recent_changes, referenced_changes
from knoxidx.history.tables import tables_of
from knoxidx.index import Index
from tests.history.gitrepo import Repo

QUERY = "render the report table"
RECENT = ContextWeights(recent=0.5, recent_commits=1, recent_functions=4)


def _padding(name: str) -> str:
    """A function long enough to be a chunk of its own, matching no question here."""
    return f"\n\ndef {name}(x):\n" + "".join(f"    x = x * {k} + 1\n" for k in range(12)) \
        + "    return x\n"


REPORT = ('def render_report(rows):\n    """Render the report rows as a table."""\n'
          '    return "\\n".join(" | ".join(row) for row in rows)\n'
          + "".join(_padding(f"report_padding_{n}") for n in range(3)))


def _cache(evict_body: str) -> str:
    return ("".join(_padding(f"cache_padding_{n}") for n in range(3))
            + f"\n\ndef evict_stale_entries(entries, now):\n    {evict_body}\n"
            + "\n\ndef warm_entries(entries):\n    return dict(entries)\n")


@pytest.fixture()
def repo(tmp_path: Path) -> Repo:
    """report.py matches the question; cache.py does not, and its evict_stale_entries is
    what the newest commit changed (warm_entries only the first)."""
    repo = Repo(tmp_path / "repo")
    repo.commit("start", {"app/__init__.py": "", "app/report.py": REPORT,
                          "app/cache.py": _cache("return entries")})
    repo.commit("evict by age", {"app/cache.py": _cache(
        "return {k: v for k, v in entries.items() if v > now}")})
    return repo


def _recent(answer_or_gathered: object) -> set[str]:
    if isinstance(answer_or_gathered, dict):
        return {i["qualified_name"] for i in answer_or_gathered["items"]
                if i["relation"] == "recent"}
    return {c.name for c in answer_or_gathered.candidates.values()  # type: ignore[attr-defined]
            if any(r == "recent" for r, _ in c.links)}


def test_the_installed_weights_gather_what_the_last_commits_changed(repo: Repo) -> None:
    with Index.open(repo.root, create=True) as idx:
        idx.update(jobs=1)
        answer = idx.context(QUERY, max_tokens=8000)
    recent = {i["qualified_name"]: i for i in answer["items"] if i["relation"] == "recent"}
    assert "app.cache.evict_stale_entries" in recent
    assert recent["app.cache.evict_stale_entries"]["included"] is not None
    assert len(recent) <= ContextWeights().recent_functions


def test_a_function_the_last_commit_changed_is_gathered_when_weighed(repo: Repo) -> None:
    with Index.open(repo.root, create=True) as idx:
        idx.update(jobs=1)
        weighed = build_context(idx, QUERY, max_tokens=8000, weights=RECENT)
        unweighed = build_context(idx, QUERY, max_tokens=8000,
                                  weights=replace(RECENT, recent=0.0))
        two_commits = gather(idx, QUERY, replace(RECENT, recent_commits=2))
    assert _recent(weighed) == {"app.cache.evict_stale_entries"}
    evict = next(i for i in weighed["items"] if i["relation"] == "recent")
    assert evict["included"] is not None  # room enough at 8,000 tokens: it is shown
    assert "app.cache.evict_stale_entries" not in {i["qualified_name"]
                                                   for i in unweighed["items"]}
    # the first commit changed every function: the newest change first, then the best
    # matching of the first commit's, four in all (warm_entries matches nothing: left out)
    further = _recent(two_commits)
    assert {"app.cache.evict_stale_entries", "app.report.render_report"} <= further
    assert len(further) == RECENT.recent_functions and "app.cache.warm_entries" not in further


def test_a_recent_function_ranks_below_the_hits_it_lags(repo: Repo) -> None:
    with Index.open(repo.root, create=True) as idx:
        idx.update(jobs=1)
        gathered = gather(idx, QUERY, replace(RECENT, recent_lag=0))
    ranked = rank(gathered, replace(RECENT, recent_lag=0))
    first_hit = min((c for c in ranked if c.hit_rank is not None), key=lambda c: c.hit_rank or 0)
    evict = next(c for c in ranked if c.name == "app.cache.evict_stale_entries")
    assert evict.relation == "recent"
    assert ranked.index(evict) > ranked.index(first_hit)
    assert evict.score <= first_hit.score


def test_without_a_history_nothing_is_gathered_and_nothing_fails(repo: Repo,
                                                                 tmp_path: Path) -> None:
    with Index.open(repo.root, create=True) as idx:
        idx.update(jobs=1, history=False)
        assert recent_changes(idx.store, idx.root, 5) == []
        assert _recent(gather(idx, QUERY, RECENT)) == set()
    plain = tmp_path / "not-git"  # the same files, never committed
    for path in ("app/__init__.py", "app/report.py", "app/cache.py"):
        (plain / path).parent.mkdir(parents=True, exist_ok=True)
        (plain / path).write_bytes((repo.root / path).read_bytes())
    with Index.open(plain, create=True) as idx:
        idx.update(jobs=1)
        answer = build_context(idx, QUERY, max_tokens=4000, weights=RECENT)
    assert _recent(answer) == set() and answer["blocks"]


def test_recent_changes_are_found_at_their_lines_now(repo: Repo) -> None:
    cache = repo.root / "app" / "cache.py"
    cache.write_text("# a note\n# another\n# a third\n" + cache.read_text())  # not committed
    with Index.open(repo.root, create=True) as idx:
        idx.update(jobs=1)
        newest = recent_changes(idx.store, idx.root, 1)
        both = recent_changes(idx.store, idx.root, 2)
        node = idx.find("evict_stale_entries")
    assert [(c.path, c.start_line, c.end_line) for c in newest] == \
        [("app/cache.py", node["start_line"], node["end_line"])]
    lines_now = cache.read_text().split("\n")
    assert newest[0].start_line == lines_now.index("def evict_stale_entries(entries, now):") + 1
    assert newest[0].seq == 1 and both[0] == newest[0]  # newest first
    assert {c.seq for c in both[1:]} == {0}


def test_a_commit_of_more_files_than_allowed_is_passed_over(repo: Repo) -> None:
    swept = {"app/report.py": REPORT.replace("as a table", "as one table"),
             "app/cache.py": _cache("return {k: v for k, v in entries.items() if v > now}")
             .replace("return dict(entries)", "return dict(entries or {})")}
    repo.commit("sweep", swept)
    with Index.open(repo.root, create=True) as idx:
        idx.update(jobs=1)
        every = recent_changes(idx.store, idx.root, 2)
        narrow = recent_changes(idx.store, idx.root, 2, max_files=1)
    assert {c.seq for c in every} == {2, 1}  # the sweep (two files) and the eviction
    assert [c.seq for c in narrow] == [1]  # the sweep passed over: only the eviction is left
    assert narrow[0].path == "app/cache.py"


def test_commit_references_are_ids_and_pull_request_numbers() -> None:
    assert commit_references("Touch up PR 1135") == ([], [1135])
    assert commit_references("[fix] parsing of mixed-case tags after B934C5D") == \
        (["b934c5d"], [])
    assert commit_references("fixes #12, see GH-7 and pull request #9") == ([], [12, 7, 9])
    assert commit_references("the #1 cause, but PR #3") == ([], [3])
    # words of hex letters alone, hex with a prefix, paths, HTML entities: no reference
    assert commit_references("a deadbeefcafe value 0x1234abcd in src/1a2b3c4d.rs &#1234;") \
        == ([], [])


def test_what_a_commit_the_question_names_changed_follows_the_top_hit(repo: Repo) -> None:
    merged = repo.commit("Merge pull request #12 from ada/evict", {"app/cache.py": _cache(
        "return {k: v for k, v in entries.items() if v >= now}")})
    repo.commit("Render empty reports (#120)", {
        "app/report.py": REPORT.replace("return", "return '' if not rows else", 1)})
    with Index.open(repo.root, create=True) as idx:
        idx.update(jobs=1)
        by_number = idx.context(QUERY + ", touch up PR 12", max_tokens=8000)
        by_id = idx.context(QUERY + f" (after {merged[:8]})", max_tokens=8000)
        other = idx.context(QUERY + ", touch up PR 13", max_tokens=8000)
        changes, commits = referenced_changes(idx.store, idx.root, "touch up PR 12")
    assert [c.path for c in changes] == ["app/cache.py"]
    assert commits[changes[0].seq]["commit"] == merged
    for answer in (by_number, by_id):
        items = answer["items"]
        named = [i for i in items if i["relation"] == "referenced"]
        assert [i["qualified_name"] for i in named] == ["app.cache.evict_stale_entries"]
        assert named[0]["included"] is not None
        assert items.index(named[0]) == 1  # right after the top hit
    assert not any(i["relation"] == "referenced" for i in other["items"])


def _precedented(repo: Repo) -> None:
    """A past commit on eviction by age (cache.py), one on tables touching only a README, and
    a sweep of both source files, then a change on neither subject."""
    repo.commit("Evict cache entries by their age", {"app/cache.py": _cache(
        "return {k: v for k, v in entries.items() if v >= now}")})
    repo.commit("Describe the report tables", {"README.md": "tables\n"})
    repo.commit("Sweep: tables and entries renamed", {
        "app/report.py": REPORT.replace("as a table", "as one table"),
        "app/cache.py": _cache("return {k: v for k, v in entries.items() if v > now}")})
    repo.commit("Warm the cache at start", {"app/cache.py": _cache(
        "return {k: v for k, v in entries.items() if v > now}")
        .replace("return dict(entries)", "return dict(entries or {})")})


def test_past_commits_like_the_question_are_ranked_by_their_rarest_shared_words(
        repo: Repo) -> None:
    _precedented(repo)
    with Index.open(repo.root, create=True) as idx:
        idx.update(jobs=1)
        tables = tables_of(idx.store)
        assert tables is not None
        subjects = {seq: c["subject"] for seq, c in tables.commits(range(6)).items()}
        found = [subjects[s] for s in similar_commits(tables, "Evicted entries stay in the "
                                                      "cache past their age", 10)]
        narrow = [subjects[s] for s in similar_commits(tables, "rename the tables", 10,
                                                       max_files=1)]
        assert similar_commits(tables, "how is it done?", 10) == []  # no content word
    # "evict" and "age" are rare: that commit first; "entries" and "cache" bring in the
    # others that share them, the first commit ("evict by age") among them
    assert found[0] == "Evict cache entries by their age"
    assert set(found) == {"Evict cache entries by their age", "evict by age",
                          "Sweep: tables and entries renamed", "Warm the cache at start"}
    # the README's commit changed no source file, and the sweep more files than allowed
    assert narrow == []


def test_what_a_past_commit_like_the_question_changed_is_gathered_when_weighed(
        repo: Repo) -> None:
    _precedented(repo)
    weights = replace(ContextWeights(), similar=0.5, recent=0.0)
    question = "evicted entries outlive their age"
    with Index.open(repo.root, create=True) as idx:
        idx.update(jobs=1)
        answer = build_context(idx, question, max_tokens=8000, weights=weights)
        unweighed = build_context(idx, question, max_tokens=8000,
                                  weights=replace(weights, similar=0.0))
    similar = {i["qualified_name"]: i for i in answer["items"] if i["relation"] == "similar"}
    assert "app.cache.evict_stale_entries" in similar
    reason = similar["app.cache.evict_stale_entries"]["reasons"][0]
    assert "(Evict cache entries by their age), a past commit like the question" in reason
    assert not any(i["relation"] == "similar" for i in unweighed["items"])
