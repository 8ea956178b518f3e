"""Hostile tool calls against a real `knoxidx mcp` process: each is a tool error whose text says
what is wrong (never a protocol error, a crash or a byte from outside the repository), and the
server answers normally afterwards."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.agent.support import make_hostile_repo

HOSTILE = [
    ("read_code", {"path": "..\\..\\etc\\passwd"}, "backslash"),
    ("read_code", {"path": "app/\x00util.py"}, "NUL"),
    ("read_code", {"path": "%252e%252e/etc/passwd"}, "no file"),  # a literal name, not decoded
    ("read_code", {"path": "app/%2e%2e/%2e%2e/etc/passwd"}, "percent-encoded"),
    ("read_code", {"path": "~/.ssh/id_rsa"}, "absolute"),
    ("read_code", {"path": "evil.py"}, "outside the repository"),
    ("read_code", {"path": "app/pipe.py"}, "not a regular file"),
    ("read_code", {"path": "app/util.py", "start_line": -3}, "1 or more"),
    ("read_code", {"path": "app/util.py", "start_line": "1"}, "whole number"),
    ("read_code", {"path": "app/util.py", "end_line": 1.5}, "whole number"),
    ("read_code", {"path": ["app/util.py"]}, "must be a string"),
    ("read_code", {"path": "x" * 5000}, "longer than"),
    ("search_code", {"query": "x", "k": 10**30}, "from 1 to 100"),
    ("search_code", {"query": "x", "k": True}, "whole number"),
    ("search_code", {"query": "x", "path": "*[a-" * 16}, "without its ']'"),
    ("impact_of_change", {"symbol": "read_text", "depth": -1}, "from 1 to 10"),
    ("build_context", {"query": "x", "max_tokens": 10**12}, "max_tokens"),
    ("build_context", {"query": "x", "max_tokens": None, "extra": {}},
     "unknown parameter 'extra'; the tool build_context takes: query, max_tokens"),
    # the tool's own name and argument names, not the HTTP route's (`/symbols takes: q`)
    ("find_symbol", {"name": "x", "q": "x"},
     "unknown parameter 'q'; the tool find_symbol takes: name, limit, offset, kind, path"),
    ("get_dependencies", {"target": "/etc/passwd"}, "outside the indexed repository"),
    ("get_callers", {"symbol": "app/util.py:99999999999999999999999"}, "no definition"),
    ("get_callers", {"symbol": "app/util.py:٣"}, "in the digits 0-9"),  # int() reads it
    ("goto_definition", {"at": "app/util.py:３"}, "in the digits 0-9"),
    ("index_status", {"verbose": True}, "takes no arguments"),
]


def test_hostile_tool_calls_are_clear_tool_errors(tmp_path: Path) -> None:
    root = make_hostile_repo(tmp_path)
    os.mkfifo(root / "app" / "pipe.py")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from knoxidx.cli import run; run()", "mcp", str(root)])

    async def session() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            for name, arguments in [(n, a) for n, a, _ in HOSTILE]:
                result: Any = await client.call_tool(name, arguments)
                words = next(w for n, a, w in HOSTILE if n == name and a is arguments)
                text = result.content[0].text
                assert result.is_error, (name, arguments, text)
                assert words in text, (name, arguments, text)
                assert "SECRET" not in text and "root:" not in text
            healthy = await client.call_tool("read_code", {"path": "app/util.py", "end_line": 1})
            assert not healthy.is_error and "def read_text" in healthy.content[0].text
            status = json.loads((await client.call_tool("index_status", {})).content[0].text)
            assert status["files"] >= 5

    asyncio.run(session())


def test_a_whole_number_written_with_a_point_is_an_integer() -> None:
    """The published schemas say `"type": "integer"`, and in JSON Schema 5.0 is one: a client
    that validates by them (or a language with one number type) may send it. 5.5 is not."""
    from knoxidx.api.schemas import BY_TOOL, InputError

    callers, context = BY_TOOL["get_callers"], BY_TOOL["build_context"]
    parsed = callers.parse({"symbol": "x", "limit": 5.0, "depth": 2.0}, from_text=False)
    assert (parsed["limit"], parsed["depth"]) == (5, 2) and type(parsed["limit"]) is int
    assert context.parse({"query": "x", "max_tokens": 800.0}, from_text=False)[
        "max_tokens"] == 800
    for bad in (5.5, float("inf"), float("nan")):
        with pytest.raises(InputError, match="whole number"):
            callers.parse({"symbol": "x", "limit": bad}, from_text=False)
    with pytest.raises(InputError, match="from 1 to 10"):
        callers.parse({"symbol": "x", "depth": 11.0}, from_text=False)


def test_a_request_the_sdk_cannot_read_is_answered(tmp_path: Path) -> None:
    """A JSON string holding a lone surrogate escape ("\\ud800") is JSON that Python reads
    and the SDK's reader refuses: the line was dropped and the client waited for
    its timeout. Now its id gets a JSON-RPC error, a notification nothing, and the session
    goes on."""
    import queue
    import subprocess
    import threading
    import time

    from mcp import types

    root = make_hostile_repo(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-c", "from knoxidx.cli import run; run()", "mcp", str(root)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None

    def send(line: str) -> None:
        assert proc.stdin is not None
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()

    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout or ()],
                     daemon=True).start()

    def reply() -> dict[str, Any]:  # a line dropped must fail the test, not hang it
        return json.loads(lines.get(timeout=30))

    call = ('{"jsonrpc": "2.0", "id": %s, "method": "tools/call", "params": {"name": '
            '"find_symbol", "arguments": {"name": %s}}}')
    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": types.LATEST_PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}))
        assert reply()["id"] == 1
        send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        started = time.monotonic()
        send(call % (7, '"\\ud800"'))
        send('{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": '
             '{"requestId": 5, "reason": "\\udfff"}}')  # a notification: no answer
        send('{"jsonrpc": "2.0", "id": "n", "method": "tools/\\udc00"}')
        send(call % (9, '"read_text"'))
        answers = [reply(), reply(), reply()]
        assert time.monotonic() - started < 30
        assert answers[0]["id"] == 7 and answers[0]["error"]["code"] == types.INVALID_PARAMS
        assert "surrogate" in answers[0]["error"]["message"]
        assert answers[1]["id"] == "n" and answers[1]["error"]["code"] == types.INVALID_REQUEST
        assert answers[2]["id"] == 9 and "read_text" in answers[2]["result"]["content"][0]["text"]
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
