"""``knoxidx show`` / ``Index.describe``: one definition's whole entity, the same through the
library, the command line, HTTP ``/entity`` on 127.0.0.1 and the MCP tool ``describe_symbol``
of a real ``knoxidx mcp`` session."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from knoxidx.answers.entity import RELATIONS
from knoxidx.core.errors import AmbiguousSymbolError, BadInputError
from knoxidx.core.paging import PAGE_CHARS
from knoxidx.index import Index
from tests.agent.support import FILES, make_repo, mcp_server, start_server
from tests.helpers import run_cli, write_tree
from tests.history.gitrepo import Repo

SHAPES = {
    "shapes/__init__.py": "",
    "shapes/base.py": '''\
        class Shape:
            """Anything with an area."""

            def area(self):
                return 0


        class Square(Shape):
            def __init__(self, side):
                self.side = side

            def area(self):
                return self.side * self.side


        class Circle(Shape):
            def area(self):
                return 3


        def total(shapes: list[Shape]) -> int:
            """Sum the areas."""
            result = 0
            for shape in shapes:
                if shape:
                    result += shape.area()
            return result
        ''',
}


def same(data: object) -> object:
    return json.loads(json.dumps(data, default=str))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("entity") / "r", {**FILES, **SHAPES},
                     retrieval=False)


def test_the_entity_gathers_the_node_its_place_and_its_relations(repo: Path) -> None:
    with Index.open(repo) as idx:
        entity = idx.describe("parse_config")
        node = idx.node(entity["id"])
    # the node's own JSON, every key as it is (so keys extraction adds flow through)
    assert {k: entity[k] for k in node} == node
    assert (entity["kind"], entity["qualified_name"], entity["path"]) == (
        "Function", "app.config.parse_config", "app/config.py")
    assert entity["doc"].startswith("Parse the configuration file")
    assert entity["complexity"]["cyclomatic"] == 1
    assert entity["enclosing"] is None  # a top-level function
    assert entity["file"]["path"] == "app/config.py"
    assert entity["module"]["qualified_name"] == "app.config"
    assert [c["qualified_name"] for c in entity["calls"]] == [
        "app.util.read_text", "app.util.normalise", "app.config.Config"]  # in body order
    assert entity["calls_total"] == 3
    assert [(c["qualified_name"], c["site"]["line"]) for c in entity["called_by"]] == [
        ("app.main.main", 5)]
    assert entity["used_by_total"] == entity["subclassed_by_total"] == 0
    assert entity["evolution_unavailable"].startswith("this index has no history")
    assert "evolution" not in entity


def test_types_show_their_supertypes_subtypes_and_users(repo: Path) -> None:
    with Index.open(repo) as idx:
        shape = idx.describe("Shape")
        square = idx.describe("shapes.base.Square")
        method = idx.describe("shapes.base.Square.area")
        total = idx.describe("total")
    assert [s["qualified_name"] for s in shape["subclassed_by"]] == [
        "shapes.base.Square", "shapes.base.Circle"]
    assert shape["subclassed_by_total"] == 2
    assert [u["qualified_name"] for u in shape["used_by"]] == ["shapes.base.total"]
    assert [e["qualified_name"] for e in square["extends"]] == ["shapes.base.Shape"]
    assert method["enclosing"]["qualified_name"] == "shapes.base.Square"
    assert [u["qualified_name"] for u in total["uses"]] == ["shapes.base.Shape"]
    assert total["complexity"]["cyclomatic"] == 3  # for, if


def test_a_type_lists_its_members(repo: Path) -> None:
    with Index.open(repo) as idx:
        square = idx.describe("shapes.base.Square")
        function = idx.describe("total")
    assert [(m["qualified_name"], m["kind"]) for m in square["members"]] == [
        ("shapes.base.Square.__init__", "Function"), ("shapes.base.Square.area", "Function")]
    assert square["members_total"] == 2
    assert square["members"][0]["signature"] == "def __init__(self, side)"
    assert "members" not in function  # a function has none


def test_methods_declared_apart_are_members_cut_to_the_limit(tmp_path: Path,
                                                             backend) -> None:
    """Go declares methods outside their type: they are its members too, in both stores."""
    root = write_tree(tmp_path / "r", {
        "go.mod": "module example.com/stack\n\ngo 1.22\n",
        "stack.go": "package stack\n\ntype Stack[T any] struct {\n\titems []T\n}\n\n"
                    "func (s *Stack[T]) Push(x T) { s.items = append(s.items, x) }\n\n"
                    "func (s *Stack[T]) Len() int { return len(s.items) }\n\n"
                    "func (s Stack[T]) Empty() bool { return len(s.items) == 0 }\n"})
    with backend.open(root, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
        entity = idx.describe("Stack", limit=2)
    assert [m["name"] for m in entity["members"]] == ["items", "Push"]
    assert entity["members_total"] == 4 and entity["type_parameters"] == ["T any"]
    if backend.name == "sqlite":
        code, out, err = run_cli("show", "Stack", str(root), "--limit", "2")
        assert code == 0, err
        assert "members: 4 (first 2)" in out and "func (s *Stack[T]) Push(x T)" in out


def test_lists_are_cut_to_the_limit_and_counted_whole(tmp_path: Path) -> None:
    callers = "".join(f"def caller_{n}():\n    target()\n    target()\n\n\n" for n in range(30))
    root = make_repo(tmp_path / "r", {"lib.py": "def target():\n    return 1\n\n\n" + callers},
                     retrieval=False)
    with Index.open(root) as idx:
        entity = idx.describe("target", limit=5)
        with pytest.raises(BadInputError):
            idx.describe("target", limit=0)
    assert [c["qualified_name"] for c in entity["called_by"]] == [
        f"lib.caller_{n}" for n in range(5)]
    assert entity["called_by_total"] == 30
    assert all(c["sites"] == 2 for c in entity["called_by"])  # each caller once, two sites
    assert entity["limit"] == 5


def test_a_large_answer_is_cut_below_the_page_size(tmp_path: Path) -> None:
    # 150 callers with long names: 100 of them would be ~40k characters of JSON
    long = "x" * 120
    callers = "".join(f"def caller_{n}_{long}():\n    target()\n\n\n" for n in range(150))
    root = make_repo(tmp_path / "r", {"lib.py": "def target():\n    return 1\n\n\n" + callers},
                     retrieval=False)
    with Index.open(root) as idx:
        entity = idx.describe("target", limit=100)
    assert len(json.dumps(entity)) <= PAGE_CHARS
    assert 20 < len(entity["called_by"]) < 100 and entity["called_by_total"] == 150


def test_ambiguous_names_fail_as_every_symbol_question_does(repo: Path) -> None:
    with Index.open(repo) as idx, pytest.raises(AmbiguousSymbolError) as ambiguous:
        idx.describe("main")
    assert [c["qualified_name"] for c in ambiguous.value.candidates] == [
        "app.main.main", "other.main"]
    code, _, err = run_cli("show", "main", str(repo))
    code_callers, _, err_callers = run_cli("callers", "main", str(repo))
    assert code == code_callers == 4
    assert err == err_callers and "'main' names 2 symbols: app.main.main" in err


def test_the_evolution_comes_from_the_history(tmp_path: Path) -> None:
    git_repo = Repo(tmp_path / "r")
    first = git_repo.commit("add", {"app.py": "def greet(name):\n    return name\n"},
                            author="Ada")
    git_repo.commit("change", {"app.py": "def greet(name):\n    return name + '!'\n"},
                    author="Bob")
    with Index.open(git_repo.root, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
        entity = idx.describe("greet")
        file_entity = idx.describe("app.py")
        assert entity["evolution"] == idx.node(entity["id"])["evolution"]
    assert entity["evolution"]["created"]["commit"] == first
    assert (entity["evolution"]["modifications"], entity["evolution"]["authors"]) == (1, 2)
    assert "evolution_unavailable" not in entity
    assert file_entity["kind"] == "File" and "no evolution of its own" in \
        file_entity["evolution_unavailable"]
    code, out, err = run_cli("show", "greet", str(git_repo.root))
    assert code == 0, err
    assert out.splitlines()[-1].startswith(f"evolution: created {first[:10]} ")
    assert "1 modification by 2 authors" in out
    assert out.rstrip().endswith(" (the history's last 90 days)")  # the hotspot's window


def test_the_command_prints_for_people_and_machines(repo: Path) -> None:
    code, out, err = run_cli("show", "app.config.parse_config", str(repo), "--json")
    assert code == 0, err
    with Index.open(repo) as idx:
        assert json.loads(out) == same(idx.describe("app.config.parse_config"))
    code, out, err = run_cli("show", "app/config.py:20", str(repo), "--limit", "2")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "Function app.config.parse_config  app/config.py:19-23"
    assert lines[1] == "  def parse_config(path=DEFAULT_PATH)"
    assert "complexity: cyclomatic 1, nesting 0, 4 loc" in lines
    assert "in: module app.config; file app/config.py" in lines
    assert "calls: 3 (first 2)" in lines
    assert "  app.util.read_text (Function)  app/config.py:21  [exact]" in lines
    assert "called by: 1" in lines and "uses: 0" not in out  # empty relations left out
    assert lines[-1].startswith("evolution: none (this index has no history")


def test_parameters_and_return_types_print_one_line_each(capsys) -> None:
    from knoxidx.cli.show import _print_entity

    entity = {"kind": "Function", "qualified_name": "m.f", "path": "m.py", "start_line": 1,
              "end_line": 3, "signature": "def f(a: int, *rest, b='x') -> str",
              "parameters": [{"name": "a", "type": "int", "default": None,
                              "kind": "positional"},
                             {"name": "rest", "type": None, "default": None,
                              "kind": "variadic"},
                             {"name": "b", "type": None, "default": "'x'",
                              "kind": "keyword-only"}],
              "returns": "str", "decorators": ["cache"], "type_parameters": [{"name": "T"}],
              **{name: [] for name, _, _ in RELATIONS},
              **{f"{name}_total": 0 for name, _, _ in RELATIONS},
              "evolution_unavailable": "no history"}
    _print_entity(entity)
    lines = capsys.readouterr().out.splitlines()
    assert lines[2:8] == ["parameters:", "  a: int", "  rest  (variadic)",
                          "  b = 'x'  (keyword-only)", "-> str", "type parameters: T"]
    assert lines[8] == "decorators: cache"


def test_http_entity_answers_as_the_index(repo: Path) -> None:
    proc, url = start_server(repo)
    try:
        with httpx.Client(base_url=url, timeout=30) as client, Index.open(repo) as idx:
            got = client.get("/entity", params={"symbol": "Shape", "limit": 1})
            assert got.status_code == 200
            assert got.json() == same(idx.describe("Shape", limit=1))
            assert len(got.json()["subclassed_by"]) == 1
            ambiguous = client.get("/entity", params={"symbol": "main"})
            assert ambiguous.status_code == 409
            assert len(ambiguous.json()["error"]["candidates"]) == 2
            assert client.get("/entity", params={"symbol": "nothing_like_it"}).status_code == 404
            assert client.get("/entity", params={"symbol": "Shape", "limit": 101}
                              ).status_code == 400
            spec = client.get("/openapi.json").json()["paths"]["/entity"]["get"]
        schema = spec["responses"]["200"]["content"]["application/json"]["schema"]
        assert {"calls", "calls_total", "called_by", "evolution"} <= set(schema["properties"])
        assert schema["properties"]["calls"]["maxItems"] == 100
    finally:
        assert proc.stop() == 0


def test_mcp_describe_symbol_in_a_real_session(repo: Path) -> None:
    with Index.open(repo) as idx:
        expected = same(idx.describe("parse_config"))
    server = mcp_server(repo)

    async def session() -> None:
        async with Client(server, read_timeout_seconds=60) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            tool = tools["describe_symbol"]
            assert tool.input_schema["required"] == ["symbol"]
            assert tool.input_schema["properties"]["limit"]["maximum"] == 100
            result: Any = await client.call_tool("describe_symbol", {"symbol": "parse_config"})
            assert not result.is_error and json.loads(result.content[0].text) == expected
            result = await client.call_tool("describe_symbol", {"symbol": "main"})
            assert result.is_error
            assert "candidates:\n- app.main.main" in result.content[0].text

    asyncio.run(session())


def test_the_postgresql_store_describes_as_sqlite_does(repo: Path, backend,
                                                       tmp_path: Path) -> None:
    root = tmp_path / "copy"
    write_tree(root, {**FILES, **SHAPES})
    with backend.open(root, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
        got = [same(idx.describe(spec)) for spec in ("parse_config", "Shape", "Square.area")]
    with Index.open(repo) as idx:
        expected = [same(idx.describe(spec)) for spec in ("parse_config", "Shape", "Square.area")]
    assert got == expected  # ids hash what a definition is, not where its index lives
