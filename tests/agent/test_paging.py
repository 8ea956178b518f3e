"""Bounded answers: a function with 2,000 callers in 100 files, asked for through the library,
the CLI, the HTTP API (a real server on 127.0.0.1) and MCP (the SDK's client against a real
`knoxidx mcp`). Every list answer is one page: at most ``limit`` items and ~32k characters,
with the total before the cut and the offset of the next page; paging reads the rest, each
item once; ``kind`` and ``path`` narrow it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from mcp import Client

from knoxidx.cli import main
from knoxidx.core.errors import AmbiguousSymbolError, BadInputError
from knoxidx.core.paging import CANDIDATES_SHOWN, DEFAULT_LIMIT, FILES_SHOWN
from knoxidx.index import Index
from tests.agent.support import make_repo, mcp_server, start_server

FILES_PER_DIR = 50
CALLERS_PER_FILE = 20
CALLERS = 2 * FILES_PER_DIR * CALLERS_PER_FILE  # 2,000
ANSWER_CHARS = 32_000  # ~8k tokens


def _files() -> dict[str, str]:
    files = {"core.py": 'def target(value):\n    """The function everyone calls."""\n'
                        "    return value\n"}
    for folder in ("a", "b"):
        for n in range(FILES_PER_DIR):
            body = "".join(f"\n\ndef caller_{folder}{n}_{i}(x):\n    return target(x + {i})\n"
                           for i in range(CALLERS_PER_FILE))
            files[f"{folder}/m{n:03}.py"] = f"from core import target\n{body}"
    return files


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("crowded") / "repo", _files(), retrieval=False)


def size(answer: Any) -> int:
    return len(json.dumps(answer, ensure_ascii=False))


def key_of(hit: dict) -> tuple:
    return hit["id"], hit["site"]["path"], hit["site"]["line"], hit.get("via")


def read_all(fetch: Callable[[int], dict], items: str, limit: int) -> list[dict]:
    """Every item, page by page from offset 0, each page checked."""
    seen: list[dict] = []
    offset: int | None = 0
    while offset is not None:
        page = fetch(offset)
        assert size(page) <= ANSWER_CHARS and page["offset"] == offset
        assert 1 <= len(page[items]) <= limit
        assert page["next_offset"] == (offset + len(page[items]) if page["truncated"] else None)
        seen.extend(page[items])
        offset = page["next_offset"]
    return seen


@pytest.mark.heavy
def test_the_library_answers_a_page_and_pages_through_the_rest(crowded: Path) -> None:
    with Index.open(crowded) as idx:
        first = idx.callers("core.target")
        assert len(first["callers"]) == DEFAULT_LIMIT and size(first) <= ANSWER_CHARS
        assert (first["total"], first["truncated"], first["next_offset"]) == \
            (CALLERS, True, DEFAULT_LIMIT)
        every = read_all(lambda o: idx.callers("core.target", limit=1000, offset=o), "callers",
                         1000)
        assert len(every) == CALLERS == len({key_of(h) for h in every})
        assert every[:DEFAULT_LIMIT] == first["callers"]  # the same order, page after page
        assert {h["name"] for h in every} == {f"caller_{f}{n}_{i}" for f in "ab"
                                              for n in range(FILES_PER_DIR)
                                              for i in range(CALLERS_PER_FILE)}
        last = idx.callers("core.target", offset=CALLERS - 10)
        assert len(last["callers"]) == 10 and not last["truncated"] and last["next_offset"] is None
        assert idx.callers("core.target", offset=CALLERS + 5)["callers"] == []

        # narrowing: a glob ('*' crosses '/'), a directory, a kind
        assert idx.callers("core.target", path="a/*")["total"] == CALLERS // 2
        assert idx.callers("core.target", path="b/m00?.py")["total"] == 10 * CALLERS_PER_FILE
        under_b = idx.callers("core.target", path="b/", limit=1000)
        assert under_b["total"] == CALLERS // 2
        assert all(h["path"].startswith("b/") for h in under_b["callers"])
        assert idx.callers("core.target", kind="Class")["total"] == 0

        impact = idx.impact("core.target")
        assert size(impact) <= ANSWER_CHARS and impact["total"] >= CALLERS
        assert impact["file_count"] == 2 * FILES_PER_DIR and len(impact["files"]) == FILES_SHOWN
        refs = idx.refs("core.target")
        assert size(refs) <= ANSWER_CHARS and refs["counts"]["CalledBy"] == CALLERS
        assert sum(len(v) for v in refs["incoming"].values()) == DEFAULT_LIMIT
        importers = idx.deps("core.py", reverse=True, limit=10)
        assert importers["total"] == 2 * FILES_PER_DIR and len(importers["dependencies"]) == 10

        symbols = idx.find_symbols("*")
        assert size(symbols) <= ANSWER_CHARS and symbols["total"] > CALLERS
        assert len({s["id"] for s in read_all(
            lambda o: idx.find_symbols("*", limit=1000, offset=o), "symbols", 1000)}) == \
            symbols["total"]
        assert idx.find_symbols("caller_*", "Function", path="b/*")["total"] == CALLERS // 2
        assert idx.find_symbols("caller_a1", path="a/m001.py")["total"] == CALLERS_PER_FILE
        assert len(idx.symbols("caller_*", limit=3000)) == CALLERS  # the plain list: no cut


@pytest.mark.parametrize("bad", [{"limit": 0}, {"limit": 1001}, {"offset": -1},
                                 {"kind": "Banana"}, {"path": " "}])
def test_bad_page_arguments_are_clear_errors(crowded: Path, bad: dict) -> None:
    with Index.open(crowded) as idx, pytest.raises(BadInputError):
        idx.callers("core.target", **bad)


def test_the_cli_prints_a_page_and_says_how_to_read_on(crowded: Path) -> None:
    def cli(*args: str) -> str:
        result = CliRunner().invoke(main, [*args, str(crowded)])
        assert result.exit_code == 0, result.output
        return result.output

    answer = cli("callers", "core.target", "--json")
    data = json.loads(answer)
    assert len(answer) <= ANSWER_CHARS and data["total"] == CALLERS
    assert len(data["callers"]) == DEFAULT_LIMIT
    lines = cli("callers", "core.target").splitlines()
    assert lines[0].endswith(f": {CALLERS}") and len(lines) == 1 + DEFAULT_LIMIT + 1
    assert f"--offset {DEFAULT_LIMIT}" in lines[-1]
    tail = json.loads(cli("callers", "core.target", "--json", "--offset", str(CALLERS - 30),
                          "--limit", "100"))
    assert len(tail["callers"]) == 30 and not tail["truncated"]
    assert cli("symbols", "core*", "--offset", "5").strip() == \
        "(nothing from --offset 5: there are 2)"  # the module and the function
    narrowed = json.loads(cli("impact", "core.target", "--json", "--path", "a/m00*",
                              "--kind", "function", "--limit", "1000"))
    assert narrowed["total"] == 10 * CALLERS_PER_FILE  # more than ~28k characters' worth:
    assert narrowed["next_offset"] == len(narrowed["impacted"]) < narrowed["total"]  # cut
    assert all(h["path"].startswith("a/m00") for h in narrowed["impacted"])
    assert len(cli("symbols", "*", "--json")) <= ANSWER_CHARS
    assert len(cli("refs", "core.target", "--json")) <= ANSWER_CHARS


@pytest.fixture(scope="module")
def http(crowded: Path) -> Iterator[httpx.Client]:
    proc, url = start_server(crowded)
    with httpx.Client(base_url=url, timeout=60) as client:
        yield client
    assert proc.stop() == 0


def test_http_answers_are_pages(http: httpx.Client, crowded: Path) -> None:
    def get(route: str, **params: Any) -> dict:
        response = http.get(route, params=params)
        assert response.status_code == 200, response.text
        assert len(response.content) <= ANSWER_CHARS
        return response.json()

    with Index.open(crowded) as idx:
        assert get("/callers", symbol="core.target") == \
            json.loads(json.dumps(idx.callers("core.target")))
    every = read_all(lambda o: get("/callers", symbol="core.target", limit=1000, offset=o),
                     "callers", 1000)
    assert len(every) == CALLERS == len({key_of(h) for h in every})
    assert get("/callers", symbol="core.target", path="a", kind="function")["total"] == \
        CALLERS // 2
    for route, params in (("/impact", {"symbol": "core.target"}),
                          ("/refs", {"symbol": "core.target"}),
                          ("/symbols", {"q": "*", "limit": 1000}),
                          ("/deps", {"target": "core.py", "reverse": "true"})):
        assert get(route, **params)["truncated"] is True
    error = http.get("/callers", params={"symbol": "core.target", "offset": "-1"})
    assert error.status_code == 400
    spec = http.get("/openapi.json").json()
    for route in ("/callers", "/callees", "/refs", "/deps", "/impact", "/symbols"):
        names = {p["name"] for p in spec["paths"][route]["get"]["parameters"]}
        assert {"limit", "offset", "kind", "path"} <= names, route


def test_mcp_answers_are_pages(crowded: Path) -> None:
    server = mcp_server(crowded)

    async def session() -> None:
        async with Client(server, read_timeout_seconds=60) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for name in ("find_symbol", "get_callers", "get_callees", "get_references",
                         "get_dependencies", "impact_of_change"):
                schema = tools[name].input_schema["properties"]
                assert {"limit", "offset", "kind", "path"} <= schema.keys(), name
                assert "next_offset" in tools[name].description

            async def call(tool: str, **arguments: Any) -> dict:
                result = await client.call_tool(tool, arguments)
                text = result.content[0].text
                assert not result.is_error, text
                assert len(text) <= ANSWER_CHARS, (tool, len(text))
                return json.loads(text)

            for tool, arguments in (("impact_of_change", {"symbol": "core.target"}),
                                    ("get_references", {"symbol": "core.target"}),
                                    ("find_symbol", {"name": "*"}),
                                    ("get_callers", {"symbol": "core.target", "limit": 1000})):
                assert (await call(tool, **arguments))["truncated"] is True, tool
            seen: list[dict] = []
            offset = 0
            while offset is not None:
                page = await call("get_callers", symbol="core.target", limit=1000,
                                  offset=offset)
                seen.extend(page["callers"])
                offset = page["next_offset"]
            assert len(seen) == CALLERS == len({key_of(h) for h in seen})
            narrowed = await call("get_callers", symbol="core.target", path="b/m04*")
            assert narrowed["total"] == 10 * CALLERS_PER_FILE

    asyncio.run(session())


def test_symbol_pages_are_the_same_on_both_stores(repo, backend) -> None:
    files = {f"{folder}/m{n}.py": "".join(f"def handler_{n}_{i}():\n    pass\n"
                                          for i in range(3))
             for folder in ("api", "cli") for n in range(4)}
    root = repo(files)
    backend.build(root)
    with backend.open(root) as idx:
        def listed(answer: dict) -> list[tuple[str, str]]:
            return [(s["path"], s["name"]) for s in answer["symbols"]]

        every = listed(idx.find_symbols("handler_*", limit=100))
        assert len(every) == 24 == len(set(every))
        page = idx.find_symbols("HANDLER_*", limit=5, offset=3, path="api/*")  # any case
        assert (page["total"], page["next_offset"]) == (12, 8)
        assert listed(page) == [hit for hit in every if hit[0].startswith("api/")][3:8]
        assert listed(idx.find_symbols("handler_1_2", path="cli")) == [("cli/m1.py",
                                                                         "handler_1_2")]
        assert idx.find_symbols("handler_1_2", path="cli/m1.py", kind="Class")["total"] == 0
        assert idx.find_symbols("handler_1", path="cli/m[12].py")["total"] == 3


def test_an_ambiguous_name_lists_a_bounded_number_of_candidates(tmp_path: Path) -> None:
    files = {f"m{n}.py": "def twin():\n    pass\n" for n in range(120)}
    root = make_repo(tmp_path / "twins", files, retrieval=False)
    with Index.open(root) as idx, pytest.raises(AmbiguousSymbolError) as raised:
        idx.callers("twin")
    assert "names 120 symbols" in str(raised.value)
    assert len(raised.value.candidates) == CANDIDATES_SHOWN
    assert size(raised.value.candidates) <= ANSWER_CHARS  # what HTTP's 409 carries
