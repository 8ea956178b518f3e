"""The MCP server, driven by the official SDK's stdio client against a real `knoxidx mcp`
process: the tools, their schemas, their answers and their errors."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from knoxidx.api.schemas import MAX_SOURCE_LINES
from knoxidx.index import Index
from tests.agent.support import make_hostile_repo, make_repo, mcp_server

TOOLS = {"search_code", "find_symbol", "get_callers", "get_callees", "get_references",
         "get_dependencies", "impact_of_change", "build_context", "read_code", "index_status",
         "get_history", "find_hotspots", "describe_symbol", "detect_changes",
         "goto_definition", "repo_map"}


def text(result: Any) -> str:
    assert len(result.content) == 1
    return result.content[0].text


def test_tools_answers_and_errors(tmp_path: Path) -> None:
    root = make_hostile_repo(tmp_path)
    with Index.open(root) as idx:
        expected_callers = json.loads(json.dumps(idx.callers("parse_config")))
        expected_symbols = json.loads(json.dumps(idx.find_symbols("Config")))
        expected_complex = json.loads(json.dumps(idx.find_symbols("*", min_complexity=1)))
        expected_typed = json.loads(json.dumps(idx.find_symbols("get", param_type="key")))

    async def session() -> None:
        async with Client(mcp_server(root), read_timeout_seconds=60) as client:
            listing = await client.list_tools()
            tools = {t.name: t for t in listing.tools}
            assert set(tools) == TOOLS
            for tool in tools.values():
                assert tool.description and len(tool.description) > 80
                assert tool.input_schema["type"] == "object"
                assert tool.annotations.read_only_hint is True
            assert tools["get_callers"].input_schema["required"] == ["symbol"]
            depth = tools["get_callers"].input_schema["properties"]["depth"]
            assert (depth["minimum"], depth["maximum"]) == (1, 10)

            async def call(tool: str, **arguments: Any) -> Any:
                return await client.call_tool(tool, arguments)

            result = await call("get_callers", symbol="parse_config")
            assert not result.is_error and json.loads(text(result)) == expected_callers
            result = await call("find_symbol", name="Config")
            assert json.loads(text(result)) == expected_symbols
            result = await call("find_symbol", name="*", min_complexity=1)
            assert json.loads(text(result)) == expected_complex
            assert expected_complex["total"] and all(  # functions only
                s["kind"] == "Function" for s in expected_complex["symbols"])
            result = await call("find_symbol", name="get", param_type="key")
            assert json.loads(text(result)) == expected_typed
            result = await call("find_symbol", name="*", returns="List<x>")
            assert result.is_error and "not a type name" in text(result)
            for name, arguments in [
                ("get_callees", {"symbol": "app.config.parse_config", "depth": 2}),
                ("get_references", {"symbol": "app.util.read_text"}),
                ("get_dependencies", {"target": "app/config.py", "reverse": True}),
                ("impact_of_change", {"symbol": "read_text"}),
                ("search_code", {"query": "parse configuration", "k": 3, "mode": "lexical"}),
            ]:
                result = await call(name, **arguments)
                assert not result.is_error, text(result)
                assert json.loads(text(result))
            context = text(await call("build_context", query="parse the configuration file",
                                      max_tokens=600))
            assert context.startswith("app/config.py:") and "def parse_config" in context
            assert "of 600 tokens" in context
            roomy = await call("build_context", query="read a file", max_tokens=150_000)
            assert not roomy.is_error and "of 150000 tokens" in text(roomy), text(roomy)
            code = text(await call("read_code", path="app/util.py", start_line=7, end_line=8))
            assert code.splitlines() == ["app/util.py:7-8 of 9", '7\tdef normalise(text):',
                                         '8\t    """Strip surrounding whitespace."""',
                                         "(… 1 more lines; read on with start_line=9)"]
            status = json.loads(text(await call("index_status")))
            assert status["files"] >= 5 and status["phase"] == "not watching"

            # problems the model can fix come back as tool errors that say how
            ambiguous = await call("get_callers", symbol="main")
            assert ambiguous.is_error and "candidates:" in text(ambiguous)
            assert "app.main.main" in text(ambiguous)
            for name, arguments, words in [
                ("get_callers", {"symbol": "nope_nothing"}, "no symbol"),
                ("get_callers", {"symbol": "parse_config", "depth": 99}, "from 1 to 10"),
                ("get_callers", {}, "missing required parameter 'symbol'"),
                ("get_callers", {"symbol": "x", "colour": 1}, "unknown parameter 'colour'"),
                ("build_context", {"query": "x", "max_tokens": 5}, "max_tokens"),
                ("build_context", {"query": "x", "max_tokens": 200_001}, "max_tokens"),
                ("read_code", {"path": "../../etc/passwd"}, "climbs out"),
                ("read_code", {"path": "%2e%2e/etc/passwd"}, "percent-encoded"),
                ("read_code", {"path": "/etc/passwd"}, "absolute"),
                ("read_code", {"path": "escape/secret.py"}, "outside the repository"),
                ("read_code", {"path": ".git/config"}, "internals"),
                ("read_code", {"path": ".Git/config"}, "internals"),
                ("read_code", {"path": "secrets/token.py"}, "not part of the indexed"),
                ("read_code", {"path": "app/util.py", "start_line": 5, "end_line": 4},
                 "error (bad_range): end (4) is before start (5)"),
                ("get_callers", {"symbol": "nope_nothing"}, "error (symbol_not_found): "),
                ("no_such_tool", {}, "no tool"),
            ]:
                result = await call(name, **arguments)
                assert result.is_error, (name, arguments, text(result))
                assert words in text(result), text(result)
                assert "SECRET" not in text(result)
            assert MAX_SOURCE_LINES == 2000

    asyncio.run(session())


@pytest.mark.heavy
def test_start_up_imports_nothing_heavy_of_ours(tmp_path: Path) -> None:
    """`knoxidx mcp` answers `initialize` having imported only the CLI, the graph reader and
    the MCP face of knoxidx: its start-up time is the SDK's import (about 1.5 s of 1.6 s on
    the development machine), not the search stack's, nor the indexer's, nor the watcher's."""
    import os
    import subprocess

    root = make_repo(tmp_path / "repo", retrieval=False)
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}
    proc = subprocess.Popen(
        [sys.executable, *mcp_server(root).args], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(json.dumps(initialize) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["result"]["serverInfo"]["name"] == "knoxidx"
    proc.stdin.close()
    imported = {line.split("|")[2].strip() for line in proc.stderr.read().splitlines()
                if line.startswith("import time:") and "self [us]" not in line}
    proc.wait(30)
    heavy = {m for m in imported if m.split(".")[0] in (
        "numpy", "onnxruntime", "tokenizers", "scipy", "networkx", "watchdog", "tree_sitter")
        or m.startswith(("knoxidx.retrieval", "knoxidx.parse.discovery"))
        or m == "knoxidx.watch"}
    assert "knoxidx.api.mcp_server" in imported and not heavy
