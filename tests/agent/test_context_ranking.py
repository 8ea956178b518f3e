"""Ranking a gathered context again: the saved state the benchmark tunes on packs as a build
does, and the git-history factor reads how often each candidate's file changed."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

from knoxidx.answers.context import (
    Candidate,
    ContextWeights,
    Gathered,
    build_context,
    gather,
    pack,
    rank,
)
from knoxidx.index import Index
from tests.agent.support import make_repo

QUERY = "parse the configuration file"


def _ranges(answer: dict) -> list[tuple[str, list[list[int]], str]]:
    return [(b["path"], b["ranges"], b["mode"]) for b in answer["blocks"]]


def test_a_state_gathered_wider_packs_as_the_narrower_build(shared_repo: Path) -> None:
    narrow = ContextWeights(expand_hits=1)
    with Index.open(shared_repo) as idx:
        wide = gather(idx, QUERY, replace(narrow, expand_hits=10))
        built = build_context(idx, QUERY, max_tokens=4000, weights=narrow)
        wider_build = build_context(idx, QUERY, max_tokens=4000,
                                    weights=replace(narrow, expand_hits=10))
    repacked = pack(wide, rank(wide, narrow), 4000, narrow)
    assert _ranges(repacked) == _ranges(built)
    assert {i["qualified_name"] for i in repacked["items"]} == \
        {i["qualified_name"] for i in built["items"]}
    assert len(wider_build["items"]) > len(built["items"])  # the width did matter


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                   check=True, capture_output=True)


def test_history_factor_follows_how_often_a_file_changed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "start")
    for n in range(3):  # util.py changes three more times, config.py never again
        with (root / "app" / "util.py").open("a") as fh:
            fh.write(f"\n\ndef helper_{n}():\n    return {n}\n")
        _git(root, "commit", "-qam", f"helper {n}")
    with Index.open(root) as idx:
        idx.update(jobs=1)
        weighted = gather(idx, QUERY, ContextWeights(history=0.2))
        unweighted = gather(idx, QUERY, ContextWeights())
    history = {c.path: c.history for c in weighted.candidates.values()}
    assert history["app/util.py"] == 1.0  # the most changed of the candidates' files
    assert 0.0 < history["app/config.py"] < 1.0  # changed once, by the first commit
    assert all(c.history == 0.0 for c in unweighted.candidates.values())  # not read at 0


def _filler(name: str) -> str:
    """A function long enough to be a chunk of its own, matching no question here."""
    return f"\n\ndef {name}(x):\n" + "".join(f"    x = x * {k} + 1\n" for k in range(12)) \
        + "    return x\n"


SETTINGS = {
    "app/__init__.py": "",
    "app/settings.py": (
        'def load_settings(path):\n    """Load the settings from path."""\n'
        "    return open(path).read()\n"
        + "".join(_filler(f"padding_{n}") for n in range(8))
        + '\n\ndef validate_settings_file(text):\n'
        + '    """Check a settings file before it is used."""\n'
        + "    if not text:\n        raise ValueError('empty settings file')\n    return text\n"
        + "".join(_filler(f"filler_{n}") for n in range(8))
    ),
}


def test_siblings_in_a_hits_file_come_in_only_when_weighed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", SETTINGS)
    query = "load settings"
    with Index.open(root) as idx:
        plain = gather(idx, query, ContextWeights(sibling=0.0))
        weighed = ContextWeights(sibling=0.6, sibling_lexical=0.2)
        wide = gather(idx, query, weighed)
    assert not any(r == "sibling" for c in plain.candidates.values() for r, _ in c.links)
    by_name = {c.name: c for c in rank(wide, weighed)}
    sibling = by_name["app.settings.validate_settings_file"]
    assert sibling.relation in ("sibling", "hit")
    assert ("sibling", by_name["app.settings.load_settings"].key) in sibling.links
    assert "app.settings.unrelated_helper" not in by_name or \
        by_name["app.settings.unrelated_helper"].hit_rank is not None  # no match: not a sibling
    # the same state ranked without the sibling weight drops what only a sibling link brought
    unweighed = {c.name for c in rank(wide, ContextWeights(sibling=0.0))}
    assert all(c.hit_rank is not None or c.name in unweighed or
               all(r == "sibling" for r, _ in c.links) for c in wide.candidates.values())


def test_siblings_come_from_the_top_hits_file_only() -> None:
    # the change a question asks for is most often in the top hit's file; the siblings of
    # lower hits cost more of the budget than they found on the benchmark
    hits = [Candidate(key=f"node:{n}", path=f"app/m{n}.py", start=1, end=3, kind="Function",
                      name=f"app.m{n}.hit", node_id=n, hit_rank=n, lexical=0.5)
            for n in range(3)]
    siblings = [Candidate(key=f"node:{10 + n}", path=f"app/m{n}.py", start=10, end=14,
                          kind="Function", name=f"app.m{n}.sibling", node_id=10 + n,
                          lexical=0.5, links=[("sibling", f"node:{n}")])
                for n in range(3)]
    gathered = Gathered("load settings", {c.key: c for c in hits + siblings}, {}, None,
                        ["load", "settings"], 0)  # type: ignore[arg-type]
    ranked = {c.name for c in rank(gathered, ContextWeights())}
    assert "app.m0.sibling" in ranked
    assert "app.m1.sibling" not in ranked and "app.m2.sibling" not in ranked
    assert {"app.m1.sibling", "app.m2.sibling"} <= \
        {c.name for c in rank(gathered, ContextWeights(sibling_hits=3))}
    assert "app.m0.sibling" not in {c.name for c in rank(gathered, ContextWeights(sibling=0))}


def test_the_top_hits_whole_file_ends_at_its_last_line(tmp_path: Path) -> None:
    """A file ending in a newline splits into one empty piece more than it has lines: the
    file's block once claimed a line past its end ([1, 7] for six lines)."""
    source = ("def parse_configuration_file(path):\n    return open(path).read()\n\n\n"
              "def other_thing(x):\n    return x + 1\n")
    root = make_repo(tmp_path / "repo", {"app/config.py": source})
    with Index.open(root) as idx:
        answer = build_context(idx, QUERY, max_tokens=4000)
    ends = [end for path, ranges, _ in _ranges(answer) if path == "app/config.py"
            for _, end in ranges]
    assert ends and max(ends) == 6
