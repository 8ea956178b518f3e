"""Paths that cannot be resolved (a symlink loop, a name longer than the file system takes),
given where a face takes a path: each face refuses them with the same code (HTTP's status and
code, MCP's tool error naming the code, the CLI's one line and exit code), never a 500, an MCP
protocol error or a traceback; and a bug met by a tool call is an MCP tool error with HTTP's
`internal` code."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from tests.agent.support import make_repo, mcp_server, start_server
from tests.helpers import run_cli

LONG = "n" * 300 + ".py"  # one name past the 255 bytes a file system takes


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_repo(tmp_path_factory.mktemp("paths") / "repo")
    os.symlink("loop_b", root / "loop_a")
    os.symlink("loop_a", root / "loop_b")
    return root


def cases(root: Path) -> list[tuple[str, str, dict[str, Any], str]]:
    """(HTTP route, MCP tool, arguments by MCP name, the code every face gives)."""
    loop = f"{root}/loop_a"
    return [
        ("/callers", "get_callers", {"symbol": f"{loop}:1"}, "bad_path"),
        ("/entity", "describe_symbol", {"symbol": f"{loop}:1"}, "bad_path"),
        ("/goto", "goto_definition", {"at": f"{loop}:1"}, "bad_path"),
        ("/deps", "get_dependencies", {"target": loop}, "bad_path"),
        ("/history", "get_history", {"symbol": f"{loop}:1"}, "bad_path"),
        ("/source", "read_code", {"path": "loop_a"}, "bad_path"),
        ("/source", "read_code", {"path": f"app/{LONG}"}, "bad_path"),
    ]


@pytest.fixture(scope="module")
def http(root: Path) -> Iterator[httpx.Client]:
    proc, url = start_server(root)
    with httpx.Client(base_url=url, timeout=30) as client:
        yield client
    assert proc.stop() == 0



def test_http_refuses_unresolvable_paths_with_a_4xx(root: Path, http: httpx.Client) -> None:
    for route, _, arguments, code in cases(root):
        response = http.get(route, params=arguments)
        assert response.status_code == 400, (route, arguments, response.text)
        assert response.json()["error"]["code"] == code, response.text
    assert http.get("/health").status_code == 200


def test_mcp_gives_the_same_codes_as_tool_errors(root: Path) -> None:
    async def session() -> list[str]:
        found = []
        async with Client(mcp_server(root), read_timeout_seconds=60) as client:
            for _, tool, arguments, _ in cases(root):
                result: Any = await client.call_tool(tool, arguments)
                text = result.content[0].text
                assert result.is_error, (tool, text)
                match = re.match(r"error \((\w+)\)", text)
                found.append(match.group(1) if match else text)
        return found

    assert asyncio.run(session()) == [code for *_, code in cases(root)]


@pytest.mark.parametrize("args", [["callers", "{loop}:1"], ["show", "{loop}:1"],
                                  ["goto", "{loop}:1"], ["deps", "{loop}"],
                                  ["history", "{loop}:1"]])
def test_the_cli_says_so_in_one_line(root: Path, args: list[str]) -> None:
    code, out, err = run_cli(*(a.format(loop=f"{root}/loop_a") for a in args), str(root))
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert "symlink loop" in err.lower() or "Symlink loop" in err, err


def test_a_bug_in_a_tool_is_a_tool_error_with_the_internal_code(root: Path) -> None:
    from knoxidx.api.mcp_server import build_server
    from knoxidx.api.readers import ReaderPool

    class Broken(ReaderPool):
        def _call(self, fn: Any, repo: str | None = None) -> Any:
            raise RuntimeError("a bug")

    pool = Broken(root, 1)

    async def session() -> Any:
        async with Client(build_server(pool)) as client:
            broken = await client.call_tool("find_symbol", {"name": "main"})
            listed = await client.list_tools()
            return broken, listed

    try:
        broken, listed = asyncio.run(session())
    finally:
        pool.close()
    assert broken.is_error and broken.content[0].text.startswith("error (internal): ")
    assert "a bug" not in broken.content[0].text and listed.tools
