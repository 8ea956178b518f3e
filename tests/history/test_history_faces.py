"""The history through every face: a node's ``evolution``, the HTTP routes ``/history`` and
``/hotspots`` of a real ``knoxidx serve``, and the MCP tools' operations."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from knoxidx.api.schemas import BY_TOOL
from knoxidx.index import Index
from tests.agent.support import start_server
from tests.history.gitrepo import Repo
from tests.history.test_history import GREET_V1, GREET_V2, GREET_V3


@pytest.fixture(scope="module")
def greeting(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    repo = Repo(tmp_path_factory.mktemp("faces") / "r")
    made = [repo.commit("add greetings", {"app.py": GREET_V1}, author="Ada"),
            repo.commit("louder greet", {"app.py": GREET_V2}, author="Bob"),
            repo.commit("farewell writes", {"app.py": GREET_V3}, author="Cy")]
    with Index.open(repo.root, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
    return repo.root, made


def same(data: object) -> object:
    return json.loads(json.dumps(data, default=str))


def test_a_node_carries_its_evolution(greeting) -> None:
    root, (c1, c2, c3) = greeting
    with Index.open(root) as idx:
        greet = idx.find_symbols("greet")["symbols"][0]
        assert idx.node(greet["id"])["evolution"] == greet["evolution"]
    evolution = greet["evolution"]
    assert evolution["created"]["commit"] == c1
    assert (evolution["modifications"], evolution["authors"]) == (1, 2)
    assert evolution["churn"] == 3 + 1 + 2  # c2: +3 -1 inside it; c1: its 2 lines
    assert evolution["last_modified"].startswith("2023-11-1")
    assert evolution["hotspot"] > 0


def test_without_history_nodes_have_no_evolution(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(GREET_V1, encoding="utf-8")
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
        assert "evolution" not in idx.find_symbols("greet")["symbols"][0]


def test_http_routes_answer_as_the_index(greeting, tmp_path: Path) -> None:
    root, _ = greeting
    proc, url = start_server(root)
    try:
        with httpx.Client(base_url=url, timeout=30) as client, Index.open(root) as idx:
            got = client.get("/history", params={"symbol": "greet", "limit": 1})
            assert got.status_code == 200 and got.json() == same(idx.history("greet", limit=1))
            assert got.json()["truncated"] and got.json()["next_offset"] == 1
            got = client.get("/hotspots", params={"since_days": 0})
            assert got.json() == same(idx.hotspots(since_days=0))
            assert client.get("/hotspots", params={"since_days": -1}).status_code == 400
    finally:
        assert proc.stop() == 0
    (tmp_path / "app.py").write_text(GREET_V1, encoding="utf-8")
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
    proc, url = start_server(tmp_path)
    try:
        got = httpx.get(url + "/history", params={"symbol": "greet"}, timeout=30)
        assert got.status_code == 503 and got.json()["error"]["code"] == "no_history"
    finally:
        assert proc.stop() == 0


def test_mcp_tools_take_their_arguments(greeting) -> None:
    root, (c1, c2, c3) = greeting
    history, hotspots = BY_TOOL["get_history"], BY_TOOL["find_hotspots"]
    assert history.input_schema()["required"] == ["symbol"]
    with Index.open(root) as idx:
        answer = history.call(idx, history.parse({"symbol": "farewell"}, from_text=False))
        assert [c["commit"] for c in answer["changes"]] == [c3, c1]
        ranked = hotspots.call(idx, hotspots.parse({"kind": "function"}, from_text=False))
        assert {h["qualified_name"] for h in ranked["definitions"]} == {"app.greet",
                                                                        "app.farewell"}


def test_the_commands_print_for_people_and_machines(greeting) -> None:
    from tests.helpers import run_cli

    root, (c1, c2, c3) = greeting
    code, out, err = run_cli("history", "greet", str(root))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "Function app.greet  app.py:4"
    assert lines[1].startswith(f"created   {c1[:10]} 2023-11-") and lines[1].endswith(
        "Ada: add greetings")
    assert lines[2].startswith("2 commits (1 after creation) by 2 authors")
    assert lines[3].split()[:4] == [c2[:10], lines[3].split()[1], "+3", "-1"]
    code, out, _ = run_cli("history", "greet", str(root), "--json", "--limit", "1")
    assert json.loads(out)["next_offset"] == 1
    code, out, _ = run_cli("history", "greet", str(root), "--limit", "1")
    assert out.splitlines()[-1] == "(items 1-1 of 2; the next page: --offset 1)"  # no --kind
    code, out, _ = run_cli("hotspots", str(root), "--since", "all")
    assert code == 0 and out.startswith("score = changes x log2(1 + weight); weight = "
                                        "cyclomatic x loc for a function, lines otherwise; "
                                        "window: all history")
    greet = next(line for line in out.splitlines() if "Function app.greet  app.py:4" in line)
    assert greet.split()[:7] == ["4.6", "2", "4", "1", "4", "4", "2"]  # score .. authors
    code, _, err = run_cli("hotspots", str(root), "--since", "soon")
    assert code == 2 and "not a number of days" in err


def test_the_json_export_carries_each_definitions_evolution(greeting, tmp_path: Path) -> None:
    from tests.helpers import run_cli

    root, (c1, c2, c3) = greeting
    code, out, err = run_cli("export", str(root))
    assert code == 0, err
    exported = {n["qualified_name"]: n for n in json.loads(out)["nodes"]}
    with Index.open(root) as idx:
        greet = idx.find_symbols("greet")["symbols"][0]
    assert exported["app.greet"]["evolution"] == same(greet["evolution"])
    assert exported["app.farewell"]["evolution"]["created"]["commit"] == c1
    assert "evolution" not in exported["app"]  # a file's history is hotspots' file list
    (tmp_path / "app.py").write_text(GREET_V1, encoding="utf-8")  # outside git: as before
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
    code, out, _ = run_cli("export", str(tmp_path))
    assert code == 0 and '"evolution"' not in out and len(json.loads(out)["nodes"]) > 2


def test_a_module_without_lines_of_its_own_is_bad_input_on_every_face(greeting) -> None:
    """A package or an external import has no file and lines to follow: the CLI printed a
    traceback, HTTP answered 500 and MCP a protocol error (a TypeError on its lines)."""
    from knoxidx.core.errors import BadInputError
    from tests.helpers import run_cli

    root, _ = greeting
    with Index.open(root) as idx:
        module = next(s for s in idx.find_symbols("*", kind="Module")["symbols"]
                      if not s.get("path"))
        with pytest.raises(BadInputError, match="no lines of its own"):
            idx.history(module["qualified_name"])
    code, _, err = run_cli("history", module["qualified_name"], str(root))
    assert code == 2 and "no lines of its own" in err and "Traceback" not in err
    proc, url = start_server(root)
    try:
        got = httpx.get(url + "/history", params={"symbol": module["qualified_name"]},
                        timeout=30)
        assert got.status_code == 400 and "no lines of its own" in got.json()["error"]["message"]
    finally:
        assert proc.stop() == 0
