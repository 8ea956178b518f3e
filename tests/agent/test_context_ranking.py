"""Ranking a gathered context again: the saved state the benchmark tunes on packs as a build
does, and the git-history factor reads how often each candidate's file changed."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

from knoxidx.index import Index
from knoxidx.retrieval.context import ContextWeights, build_context, gather, pack, rank
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
