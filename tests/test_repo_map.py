"""``knoxidx map``: the most central definitions of a real index in a token budget."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from knoxidx.api.schemas import BY_TOOL
from knoxidx.core.errors import BadInputError
from knoxidx.index import Index
from knoxidx.retrieval.tokens import count_tokens
from tests.agent.support import start_server
from tests.helpers import build, run_cli, write_tree

CALLERS = "".join(f"def use_{i}(x):\n    return core.shared(x) + core.Store().get(x)\n\n\n"
                  for i in range(8))
FILES = {
    "app/__init__.py": "",
    "app/core.py": (
        "def shared(\n"
        "    value,\n"
        "    scale=1,\n"
        "):\n"
        "    return value * scale\n"
        "\n"
        "\n"
        "class Store:\n"
        "    def get(self, key):\n"
        "        return shared(key)\n"
        "\n"
        "    def rarely(self):\n"
        "        return 0\n"
    ),
    "app/users.py": "from app import core\n\n\n" + CALLERS,
    "tests/test_core.py": (
        "from app import core\n\n\n"
        "def helper():\n    return core.shared(1)\n\n\n"
        + "".join(f"def test_{i}():\n    assert helper()\n\n\n" for i in range(12))
    ),
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("map"), FILES)
    build(root)
    return root


def test_the_most_central_definitions_first_within_the_budget(repo: Path) -> None:
    with Index.open(repo) as idx:
        small = idx.repo_map(64)
        whole = idx.repo_map(4000)
    assert [d["qualified_name"] for f in small["files"] for d in f["definitions"]][0] == \
        "app.core.shared"
    assert small["tokens"] <= 64 and small["shown"] < whole["shown"]
    assert count_tokens(small["text"]) == small["tokens"]
    lines = whole["text"].splitlines()
    # files by path; a method under its class; a parameter list on several lines as one
    assert lines[0] == "app/core.py:"
    assert lines[1] == "  def shared(value, scale=1)  :1"
    assert lines[2:4] == ["  class Store  :8", "    def get(self, key)  :9"]
    assert whole["shown"] == whole["total"]  # everything fits 4000 tokens
    # helper is called by twelve tests, yet test code ranks below the application's
    ranked = sorted(((d["score"], d["qualified_name"]) for f in whole["files"]
                     for d in f["definitions"]), reverse=True)
    assert ranked[0][1] == "app.core.shared"
    helper = next(d for f in whole["files"] for d in f["definitions"]
                  if d["name"] == "helper")
    assert helper["score"] < next(s for s, n in ranked if n == "app.core.Store.get")


def test_a_path_maps_one_part_alone(repo: Path) -> None:
    with Index.open(repo) as idx:
        tests_only = idx.repo_map(4000, path="tests")
        with pytest.raises(BadInputError, match="max_tokens"):
            idx.repo_map(10)
        with pytest.raises(BadInputError):
            idx.repo_map(100, path="/etc")
    assert [f["path"] for f in tests_only["files"]] == ["tests/test_core.py"]


def test_every_face_answers_the_same(repo: Path) -> None:
    operation = BY_TOOL["repo_map"]
    with Index.open(repo) as idx:
        expected = json.loads(json.dumps(idx.repo_map(200)))
        got = operation.call(idx, operation.parse({"max_tokens": 200}, from_text=False))
    assert json.loads(json.dumps(got)) == expected
    assert operation.render(got).startswith("app/core.py:\n  def shared(value, scale=1)  :1\n")
    proc, url = start_server(repo)
    try:
        reply = httpx.get(url + "/map", params={"max_tokens": "200"}, timeout=30)
        assert reply.status_code == 200 and reply.json() == expected
        assert httpx.get(url + "/map", params={"max_tokens": "5"}, timeout=30).status_code == 400
    finally:
        assert proc.stop() == 0
    code, out, err = run_cli("map", str(repo), "--max-tokens", "200")
    assert code == 0, err
    assert out == expected["text"] + (f"({expected['shown']} of {expected['total']} "
                                      f"definitions, {expected['tokens']} of 200 tokens)\n")
