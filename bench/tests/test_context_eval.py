"""The context benchmark's parts: task mining on a real git history made here, the coverage
rule, BM25 windows and question cleaning."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench.context_eval.bm25 import BM25Windows, tokenize, windows
from bench.context_eval.coverage import Shown, covers, first_cover, names_gold, score_pack
from bench.context_eval.mining import (
    Definition,
    Hunk,
    clean_question,
    is_chore,
    mine_tasks,
    parse_hunks,
    touched_definitions,
)
from bench.context_eval.systems import LineTokens, RangePacker

APP_V1 = '''import os


def load(path):
    with open(path) as f:
        return f.read()


def save(path, text):
    with open(path, "w") as f:
        f.write(text)


class Store:
    def get(self, key):
        return self.data[key]

    def put(self, key, value):
        self.data[key] = value
'''


def _git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(repo), "PATH": "/usr/bin:/bin"}
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout


def _commit(repo: Path, files: dict[str, str], message: str, day: int) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message, date=f"2024-01-{day:02d}T12:00:00+00:00")
    return _git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    shas = {"root": _commit(repo, {"app.py": APP_V1, "README.md": "hi\n"}, "Initial", 1)}
    shas["fix_put"] = _commit(repo, {"app.py": APP_V1.replace(
        "self.data[key] = value", "self.data[key] = value\n        self.dirty = True"),
        "tests/test_app.py": "def test_put():\n    pass\n"},
        "Mark the store dirty after put (#42)\n\nA put must be saved later.\n\n"
        "Signed-off-by: t <t@example.com>", 2)
    shas["typo"] = _commit(repo, {"app.py": (repo / "app.py").read_text().replace(
        "return f.read()", "return f.read()  # the whole file")}, "Fix typo", 3)
    shas["docs"] = _commit(repo, {"README.md": "hello\n"}, "Explain loading in the readme", 4)
    shas["spaces"] = _commit(repo, {"app.py": (repo / "app.py").read_text().replace(
        "    return self.data[key]", "    return self.data[key]   ")},
        "Tidy the getter", 5)
    shas["new_file"] = _commit(repo, {"util.py": "def helper():\n    return 1\n",
                                      "app.py": (repo / "app.py").read_text().replace(
                                          "f.write(text)", "f.write(text.strip())")},
                               "Strip text before saving and add a helper", 6)
    shas["two"] = _commit(repo, {"app.py": (repo / "app.py").read_text().replace(
        "with open(path) as f:", "with open(path, encoding='utf-8') as f:").replace(
        "return self.data[key]", "return self.data.get(key)")},
        "Read files as UTF-8 and let get miss quietly, fixes GH-7", 7)
    return repo, shas


def test_mining_keeps_changes_to_existing_functions_and_drops_chores(history):
    repo, shas = history
    tasks, info = mine_tasks(repo, "repo", "HEAD", 30)
    assert info["family"] == "python"
    assert [t.commit for t in tasks] == [shas["fix_put"], shas["two"]]
    fix_put, two = tasks
    assert fix_put.parent == shas["root"]
    assert fix_put.question == "Mark the store dirty after put A put must be saved later."
    assert fix_put.files == ("app.py",)  # the test file is not a source file
    assert [(g.name, g.start, g.end) for g in fix_put.gold] == [("Store.put", 18, 19)]
    assert [g.name for g in two.gold] == ["load", "Store.get"]
    assert two.question == "Read files as UTF-8 and let get miss quietly"


def test_mining_spreads_tasks_over_time_and_is_deterministic(history):
    repo, shas = history
    first, _ = mine_tasks(repo, "repo", "HEAD", 1)
    again, _ = mine_tasks(repo, "repo", "HEAD", 1)
    assert first == again and len(first) == 1


def test_an_insertion_counts_for_the_function_it_lands_in_or_extends():
    old = ["def f():", "    def inner():", "        pass", "    x = 1", "    return x", "",
           "def g():", "    pass", "    return"]
    functions = [Definition("a.py", "f", 1, 5), Definition("a.py", "g", 7, 9),
                 Definition("a.py", "f.inner", 2, 3)]
    hunks = parse_hunks("@@ -3,0 +4,2 @@\n+    y = 2\n@@ -5,0 +7 @@\n+    log()\n"
                        "@@ -5,0 +8 @@\n+def h():\n@@ -2 +10 @@\n-    def inner():\n"
                        "+    def inner2():\n@@ -9,2 +11,0 @@\n-x")
    assert hunks == [Hunk(4, 3, "    y = 2"), Hunk(6, 5, "    log()"), Hunk(6, 5, "def h():"),
                     Hunk(2, 2, "    def inner2():"), Hunk(9, 10, "")]
    # after line 3: inside f, past inner's end; after f's last line: indented, so f's body
    assert touched_definitions(functions, hunks[:1], old) == [functions[0]]
    assert touched_definitions(functions, hunks[1:2], old) == [functions[0]]
    assert touched_definitions(functions, hunks[2:3], old) == []  # a new top-level function
    assert touched_definitions(functions, hunks[3:4], old) == [functions[2]]


def test_coverage_needs_half_the_lines_or_twenty():
    short = Definition("a.py", "f", 10, 19)  # 10 lines
    long = Definition("a.py", "g", 100, 199)  # 100 lines
    assert covers(Shown("a.py", 15, 40), short)  # 5 of 10
    assert not covers(Shown("a.py", 16, 40), short)  # 4 of 10
    assert not covers(Shown("b.py", 10, 19), short)
    assert covers(Shown("a.py", 180, 260), long)  # 20 of 100
    assert not covers(Shown("a.py", 181, 260), long)  # 19 of 100
    pack = [Shown("b.py", 1, 50), Shown("a.py", 12, 12), Shown("a.py", 1, 30)]
    assert first_cover(pack, short) == 3
    scored = score_pack(pack, (short, long))
    assert (scored["covered"], scored["success"], scored["any_hit"], scored["file_hit"],
            scored["first_rank"]) == (1, False, True, True, 3)


def test_a_question_names_a_definition_by_its_short_name_as_a_word():
    gold = (Definition("a.py", "Store.put", 1, 2),)
    assert names_gold("make put mark the store dirty", gold)
    assert not names_gold("make output mark the store dirty", gold)
    assert not names_gold("make put_all work", gold)


def test_question_cleaning_removes_issue_and_pr_numbers():
    assert clean_question("Fix parsing of flags (#123)\n\nFixes #12. Flags with = parse.") == \
        "Fix parsing of flags . Flags with = parse."
    assert clean_question("Handle GH-9 and org/repo#4 ([#5], #6)") == "Handle and ([], )" or \
        "#" not in clean_question("Handle GH-9 and org/repo#4 (#5, #6)")
    assert clean_question("Support envvar lists\n\nSigned-off-by: a <a@b>\n\nMore text") == \
        "Support envvar lists More text"
    assert clean_question("Merge fix (closes #77, #78)") == "Merge fix"
    assert is_chore("Bump version to 2.0") and is_chore("docs: explain") and is_chore("Fix typo")
    assert is_chore("Wrap PR 1213 to 80 columns")
    assert not is_chore("Add a version flag") and not is_chore("Fixed doc.select when empty")


def test_bm25_windows_overlap_by_twenty_lines_and_split_identifiers():
    assert [(w.start, w.end) for w in windows("a.py", 90)] == [(1, 40), (21, 60), (41, 80),
                                                              (61, 90)]
    assert [(w.start, w.end) for w in windows("a.py", 30)] == [(1, 30)]
    assert windows("a.py", 0) == []
    assert tokenize("parseHTTPHeader snake_case") == [
        "parsehttpheader", "parse", "http", "header", "snake", "case"]
    files = {"a.py": ["x = 1"] * 60 + ["def parse_header(): pass"] + ["y = 2"] * 30,
             "b.py": ["def render(): pass"] * 10}
    ranked = BM25Windows(files).search("how is the header parsed")
    # both windows hold the one matching line; the shorter last window ranks first (BM25's
    # length normalisation)
    assert [(w.path, w.start) for w in ranked] == [("a.py", 61), ("a.py", 41)]


class _WordCounter:
    def count_many(self, texts):
        return [len(t.split()) for t in texts]


def test_the_range_packer_trims_what_is_shown_and_skips_what_does_not_fit():
    tokens = LineTokens(_WordCounter(), {"a.py": ["one two"] * 100})
    packer = RangePacker(tokens, budget=60)
    packer.offer("a.py", 1, 20)  # 40 + header 3
    packer.offer("a.py", 11, 30)  # trimmed to 21-30: too big (20 + 3) for the 17 left
    packer.offer("a.py", 15, 20)  # already shown
    packer.offer("a.py", 50, 55)  # 12 + 3
    assert packer.shown == [Shown("a.py", 1, 20), Shown("a.py", 50, 55)]
    assert packer.used == 58


def test_a_walk_indexes_each_parent_asks_every_system_and_verifies(history, tmp_path):
    from bench.context_eval.run import Repository, walk

    repo, shas = history
    run = walk(Repository("repo", repo), tmp_path / "cache", count=30, embed=False,
               budgets=(400, 800), log=lambda _: None)
    assert [t["commit"] for t in run["tasks"]] == [shas["fix_put"], shas["two"]]
    assert run["verify"]["equal"] and run["verify"]["integrity"] == "ok"
    first = run["tasks"][0]
    assert first["gold"] == [{"path": "app.py", "name": "Store.put", "start": 18, "end": 19}]
    assert set(first["systems"]) == {"context", "retrieval", "bm25", "gold_files"}
    # the whole 20-line file fits in 400 tokens: the ceiling covers every gold function
    assert all(t["systems"]["gold_files"]["400"]["success"] for t in run["tasks"])
    assert (repo / "app.py").read_text().count("encoding='utf-8'") == 1  # the source untouched


def test_saved_states_repack_to_the_walks_context_scores_where_nothing_more_is_gathered(
        history, tmp_path):
    # on this history the tuner's wider gathering brings in nothing the installed weights
    # leave out, so its state repacks to exactly the published figures
    import gzip

    from bench.context_eval.run import Repository, walk
    from bench.context_eval.tune import Task, evaluate
    from knoxidx.answers.context import ContextWeights

    repo, _ = history
    states = tmp_path / "states.jsonl.gz"
    run = walk(Repository("repo", repo), tmp_path / "cache", count=30, embed=False,
               budgets=(400, 800), log=lambda _: None, dump=states)
    with gzip.open(states, "rt", encoding="utf-8") as lines:
        tasks = [Task(line) for line in lines]
    assert [t.record["commit"] for t in tasks] == [t["commit"] for t in run["tasks"]]
    repacked = evaluate(tasks, ContextWeights(), budgets=(400, 800))
    for budget in (400, 800):
        walked = sum(t["systems"]["context"][str(budget)]["covered"] for t in run["tasks"])
        assert repacked[budget][0] == walked
        assert repacked[budget][1] == sum(len(t["gold"]) for t in run["tasks"])


def _sibling_history(tmp_path: Path) -> Path:
    """A history whose change request touches the eighth function of the top hit's file, a
    function search does not find (80 one-line files outrank it): the installed weights take 4
    of the file's matching functions, the tuner's wider gathering all of them."""
    repo = tmp_path / "siblings"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    files = {f"fill/f{n:02d}.py": f"def filler_{n}():\n"
             "    return 'retry connection timeout retry connection timeout'\n"
             for n in range(80)}
    net = "def retry_connection_timeout(retry, connection, timeout):\n" \
          "    return retry, connection, timeout\n"
    for letter in "abcdefgh":
        net += f"\n\ndef helper_{letter}(value):\n    # retry the connection\n" + "".join(
            f"    value = value + {i}\n" for i in range(40)) + "    return value\n"
    files["net.py"] = net
    _commit(repo, files, "Initial", 1)
    _commit(repo, {"net.py": net.replace("helper_g(value):\n    # retry the connection\n"
                                         "    value = value + 0",
                                         "helper_g(value):\n    # retry the connection\n"
                                         "    value = value + 100")},
            "Retry the connection on timeout", 2)
    return repo


def test_the_walks_context_system_is_index_context_as_installed(tmp_path):
    import gzip

    from bench.context_eval.run import Repository, walk
    from bench.context_eval.tune import Task, evaluate
    from knoxidx import Index
    from knoxidx.answers.context import ContextWeights

    repo = _sibling_history(tmp_path)
    states = tmp_path / "states.jsonl.gz"
    run = walk(Repository("siblings", repo), tmp_path / "cache", count=30, embed=False,
               budgets=(4000, 8000), log=lambda _: None, dump=states)
    assert [t["question"] for t in run["tasks"]] == ["Retry the connection on timeout"]
    clone = tmp_path / "cache" / "repos" / "siblings"
    for task in run["tasks"]:
        _git(clone, "checkout", "-q", "--force", "--detach", task["parent"])
        with Index.open(clone) as index:
            index.update()
            for budget in (4000, 8000):
                blocks = index.context(task["question"], max_tokens=budget)["blocks"]
                assert task["context_blocks"][str(budget)] == [
                    {"path": b["path"], "start": b["start_line"], "end": b["end_line"],
                     "mode": b["mode"], "tokens": b["tokens"], "items": b["items"][:4]}
                    for b in blocks]
    # the saved state is the tuner's wider gathering: repacked at the installed weights it
    # shows helper_g, which the tool does not (else this history would prove nothing)
    with gzip.open(states, "rt", encoding="utf-8") as lines:
        saved = [Task(line) for line in lines]
    walked = sum(t["systems"]["context"]["8000"]["covered"] for t in run["tasks"])
    assert evaluate(saved, ContextWeights(), budgets=(8000,))[8000][0] != walked


def test_losses_count_the_published_context_pack_not_the_tuners_repack(tmp_path):
    import gzip

    from bench.context_eval.losses import WIDER_ONLY, compare
    from bench.context_eval.run import Repository, walk
    from bench.context_eval.tune import Task
    from knoxidx.answers.context import ContextWeights

    states = tmp_path / "states.jsonl.gz"
    run = walk(Repository("siblings", _sibling_history(tmp_path)), tmp_path / "cache",
               count=30, embed=False, budgets=(4000, 8000), log=lambda _: None, dump=states)
    assert run["tasks"][0]["systems"]["context"]["8000"]["covered"] == 0
    with gzip.open(states, "rt", encoding="utf-8") as lines:
        saved = {"siblings": [Task(line) for line in lines]}
    for budget, (lost, won, both) in compare(saved, ContextWeights(), verbose=False).items():
        assert sum(won.values()) == 0, budget  # the tool does not show helper_g
        assert both == {WIDER_ONLY: 1} or lost == {WIDER_ONLY: 1}, budget


def test_a_walk_measures_each_context_variant_as_a_system_of_its_own(history, tmp_path):
    from bench.context_eval.fusion import covered, variants
    from bench.context_eval.run import Repository, walk
    from knoxidx.answers.context import ContextWeights

    repo, _ = history
    measured = variants([ContextWeights().vector_fusion, 0.25])
    assert [w.vector_fusion for w in measured.values()] == [ContextWeights().vector_fusion, 0.25]
    run = walk(Repository("repo", repo), tmp_path / "cache", count=30, embed=False,
               budgets=(400, 800), log=lambda _: None, variants=measured)
    installed = f"context w={ContextWeights().vector_fusion:g}"
    for task in run["tasks"]:
        assert set(task["systems"]) == {"context", "retrieval", "bm25", "gold_files", *measured}
        # the variant at the installed weights is knoxidx context as the walk asks it
        assert task["systems"][installed] == task["systems"]["context"]
    counts = covered(run["tasks"], [*measured, "retrieval"], budgets=(400, 800))
    assert counts["gold"] == sum(len(t["gold"]) for t in run["tasks"])
    assert counts[f"{installed}@400"] == sum(t["systems"]["context"]["400"]["covered"]
                                            for t in run["tasks"])


def test_the_fusion_experiment_sets_the_vector_weights_for_a_new_search_and_restores_them():
    from bench.context_eval.fusion import vector_weight
    from knoxidx.retrieval.hybrid_search import SOURCE_WEIGHTS, HybridSearch

    installed = dict(SOURCE_WEIGHTS)
    with pytest.raises(RuntimeError), vector_weight(0.5):
        search = HybridSearch(store=None)  # type: ignore[arg-type]
        assert search.source_weights == installed | {"vector": 0.5, "declarations": 0.5}
        raise RuntimeError("a walk that fails")
    assert SOURCE_WEIGHTS == installed
    assert HybridSearch(store=None).source_weights == installed  # type: ignore[arg-type]


def test_a_weight_setting_changes_the_named_fields_only() -> None:
    from dataclasses import replace

    from bench.context_eval.weigh import weights_of
    from knoxidx.answers.context import ContextWeights

    assert weights_of("recent=0.5,recent_commits=30,fill_neighbours=false") == replace(
        ContextWeights(), recent=0.5, recent_commits=30, fill_neighbours=False)
    for bad in ("nonsense=1", "centrality_edges=1"):
        with pytest.raises(SystemExit, match="not a numeric field"):
            weights_of(bad)


def test_the_tuners_settings_read_a_tuple_knob_as_its_items() -> None:
    # `after_search=type` once became the tuple of the word's letters
    from dataclasses import replace

    from bench.context_eval.tune import weights_set
    from knoxidx.answers.context import ContextWeights

    default = ContextWeights()
    assert weights_set(default, ["after_search=type", "recent=0.25", "search_order=False"]) \
        == replace(default, after_search=("type",), recent=0.25, search_order=False)
    assert weights_set(default, ["after_search="]).after_search == ()
    assert weights_set(default, ["after_search=type,imports,callee"]).after_search == (
        "type", "imports", "callee")
    with pytest.raises(SystemExit, match="not a field"):
        weights_set(default, ["nonsense=1"])


def test_misses_sums_a_packs_tokens_by_what_its_blocks_are() -> None:
    from bench.context_eval.misses import budget_spent

    answer = {
        "items": [{"qualified_name": "a.top", "relation": "hit"},
                  {"qualified_name": "a.helper", "relation": "callee"},
                  {"qualified_name": "a.py", "relation": ""}],
        "blocks": [{"items": ["a.top", "a.helper"], "mode": "full", "tokens": 300},
                   {"items": ["a.helper"], "mode": "elided", "tokens": 120},
                   {"items": ["a.py"], "mode": "full", "tokens": 40},
                   {"items": ["b.other"], "mode": "full", "tokens": 500}]}
    assert budget_spent(answer) == "? full 500, hit full 300, callee elided 120, range full 40"
