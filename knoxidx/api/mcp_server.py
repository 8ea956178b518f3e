"""``knoxidx mcp``: the index as Model Context Protocol tools over stdio (the official ``mcp``
SDK's low-level server).

The tools are :data:`knoxidx.api.schemas.OPERATIONS` (each with its JSON schema and a
description written for a model) plus ``index_status``. Arguments are validated by the same
code as the HTTP API's; a problem the model can fix (an unknown or ambiguous symbol, a bad
argument) comes back as a tool error whose text says what to do, never as a protocol error.
Everything is read-only; with ``watch`` a watcher keeps the index fresh in this process.
stdout carries the protocol only: logs go to stderr.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from types import TracebackType
from typing import Any

from knoxidx.api.readers import ReaderPool, status_of
from knoxidx.api.schemas import BY_TOOL, STATUS_DESCRIPTION, InputError, package_version
from knoxidx.core.errors import AmbiguousSymbolError, KnoxidxError

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "knoxidx indexes this repository's code as a graph of definitions, calls, imports and "
    "type uses, with hybrid search. On a repository you do not know, repo_map first. Start "
    "with build_context for a task, or search_code / find_symbol to locate code; "
    "describe_symbol gives everything about one definition at once; navigate with "
    "get_callers, get_callees, get_references, get_dependencies and impact_of_change (they "
    "take qualified names, names or path:line), and goto_definition for what a line of code "
    "refers to; read exact lines with read_code. After editing, detect_changes says what "
    "the edits may break and which tests reach them."
)


def build_server(pool: ReaderPool, watcher: Any = None) -> Any:
    from mcp import types
    from mcp.server.lowlevel import Server

    annotations = types.ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                        idempotent_hint=True, open_world_hint=False)
    tools = [
        types.Tool(name=op.tool, title=op.summary, description=op.description,
                   input_schema=op.input_schema(), annotations=annotations)
        for op in BY_TOOL.values()
    ]
    tools.append(types.Tool(
        name="index_status", title="Index state", description=STATUS_DESCRIPTION,
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        annotations=annotations))

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        name, arguments = params.name, params.arguments or {}
        try:
            if name == "index_status":
                if arguments:
                    raise InputError("index_status takes no arguments")
                data = await pool.run(lambda idx: status_of(idx, watcher))
                text = json.dumps(data, ensure_ascii=False, default=str)
            elif name in BY_TOOL:
                op = BY_TOOL[name]
                args = op.parse(arguments, from_text=False, caller=f"the tool {name}")
                data = await pool.run(lambda idx: op.call(idx, args))
                text = op.text(data)
            else:
                raise InputError(f"no tool {name!r}; the tools are: "
                                 f"{', '.join([*BY_TOOL, 'index_status'])}")
        except KnoxidxError as exc:
            return types.CallToolResult(content=[types.TextContent(text=_problem(exc))],
                                        is_error=True)
        except Exception:  # a bug: its traceback on stderr; the client gets HTTP's 500 word
            log.exception("tool call %s failed", name)
            return types.CallToolResult(content=[types.TextContent(
                text="error (internal): internal error; the server log (stderr) has the "
                     "details")], is_error=True)
        return types.CallToolResult(content=[types.TextContent(text=text)])

    return Server("knoxidx", version=package_version(), instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def _problem(exc: KnoxidxError) -> str:
    """A tool error's text: HTTP's code for the problem, then what to do about it."""
    from knoxidx.api.error_codes import error_code  # on an error only: it reads retrieval's

    text = f"error ({error_code(exc)[1]}): {exc}"
    if isinstance(exc, AmbiguousSymbolError):
        names = [f"{c['qualified_name']} ({c['kind']}, {c['path']}:{c['start_line']})"
                 for c in exc.candidates[:20]]
        text += "\ncandidates:\n" + "\n".join(f"- {n}" for n in names)
    return text


def run_stdio(root: Path, watcher: Any = None, workers: int = 2, *,
              store_url: str | None = None, repo: str | None = None) -> None:
    """Serve one client over stdin/stdout until it closes the stream (``store_url``: a shared
    store's repository ``repo``, or every repository)."""
    import anyio
    from mcp.server.stdio import stdio_server

    pool = ReaderPool(root, workers, store_url=store_url, repo=repo)
    server = build_server(pool, watcher)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(AnsweringReader(read_stream, write_stream), write_stream,
                             server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        pool.close()


_SURROGATE = re.compile("[\ud800-\udfff]")


class AnsweringReader:
    """The stdio transport's read stream, answering the requests it could not decode.

    The SDK reads each line with pydantic, which refuses JSON that Python's ``json`` takes:
    a lone surrogate escape (``"\\ud800"``). The line becomes an exception with no
    request id, which the SDK only logs: the client waited for its timeout. Here such a line
    that is still a request with an id is answered with a JSON-RPC error for that id."""

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self) -> Any:  # the sender's context, as the SDK's own stream keeps it
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            if isinstance(item, Exception):
                reply = unreadable_request_error(item)
                if reply is not None:
                    from mcp.shared.message import SessionMessage

                    await self._write.send(SessionMessage(reply))
                    continue
            return item

    def __aiter__(self) -> AnsweringReader:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> AnsweringReader:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc_val: BaseException | None, exc_tb: TracebackType | None) -> None:
        await self.aclose()


def unreadable_request_error(exc: Exception) -> Any:
    """The JSON-RPC error answering the line that ``exc`` (the SDK's validation error) refused
    as JSON, or None when that line is no request with an id (nothing to answer)."""
    from mcp import types
    from pydantic import ValidationError

    details = exc.errors() if isinstance(exc, ValidationError) else []
    if not details or details[0].get("type") != "json_invalid":
        return None
    line = details[0].get("input")
    try:
        message = json.loads(line) if isinstance(line, str) else None
    except ValueError:  # not JSON at all: no id to answer (JSON-RPC's parse error is id-less)
        return None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str) or (
            isinstance(request_id, str) and _SURROGATE.search(request_id)):
        return None  # a notification, or an id that cannot be sent back
    # a lone surrogate is the one thing Python's json takes and pydantic's does not
    if _SURROGATE.search(json.dumps(message.get("params"), ensure_ascii=False)):
        code, where = types.INVALID_PARAMS, "the request's params hold"
    else:
        code, where = types.INVALID_REQUEST, "the request holds"
    text = f"{where} an unpaired UTF-16 surrogate escape (such as \\ud800); send valid Unicode"
    return types.JSONRPCError(jsonrpc="2.0", id=request_id,
                              error=types.ErrorData(code=code, message=text))
