"""``knoxidx watch``, ``serve``, ``mcp`` and ``context``: registered on :data:`knoxidx.cli.main`
when ``knoxidx.cli`` is imported. Thin: parse, call the library or start a face, print.
Servers and watchers import their dependencies (watchdog, starlette, uvicorn, mcp) only when
they start.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from knoxidx.answers.budget import DEFAULT_TOKENS, MAX_TOKENS, MIN_TOKENS
from knoxidx.cli.group import main
from knoxidx.cli.options import (
    NumberRange,
    Text,
    WholeRange,
    json_option,
    offline_option,
    open_index,
    path_argument,
    shared_store,
    store_options,
)
from knoxidx.cli.output import counted, emit
from knoxidx.core.limits import MAX_QUERY_CHARS
from knoxidx.core.store_url import redact
from knoxidx.core.terminal import visible

# After SIGTERM (or Ctrl-C), an update still running this long is abandoned (it rolls back;
# the next start applies its changes), and a process still running this long ends at once:
# every face ends within 5 s.
STOP_GRACE_S = 2.0
STOP_LIMIT_S = 4.5

debounce_option = click.option(
    "--debounce-ms", type=WholeRange(10, 60_000), default=150, show_default=True,
    help="Apply changes after this many milliseconds without a new one.")


@main.command("watch")
@path_argument
@debounce_option
@click.option("--jobs", "-j", type=WholeRange(1, 64), default=None,
              help="Worker processes for big batches (default: CPU count).")
@click.option("--graph-only", is_flag=True, help="Skip chunking and search indexes.")
@click.option("--wait", is_flag=True, help="Wait for another writer instead of failing.")
@click.option("--reconcile-s", type=NumberRange(0), default=120, show_default=True,
              help="When idle this long, re-check the whole tree (0: never).")
@json_option
@offline_option
@store_options
def watch_cmd(path: str, debounce_ms: int, jobs: int | None, graph_only: bool, wait: bool,
              reconcile_s: float, as_json: bool) -> None:
    """Keep the index of PATH up to date as files change, until Ctrl-C or SIGTERM.

    Holds the index's writer lock while it runs (so `knoxidx index` beside it reports the
    index locked), starts with a normal update, then applies each burst of changes as one
    incremental update and logs one line per batch (--json: JSON lines). When no change
    waits, it embeds the pending chunks a small batch at a time at the lowest priority
    ($KNOXIDX_EMBED=0: not at all).
    """
    from knoxidx.watch import Watcher
    from knoxidx.watch_log import line_emitter

    shared = shared_store()
    watcher = Watcher(path, debounce_ms=debounce_ms, retrieval=not graph_only, jobs=jobs,
                      wait=wait, reconcile_s=reconcile_s,
                      emit=line_emitter(sys.stdout, as_json),
                      store=shared[0] if shared else None, repo=shared[1] if shared else None)
    with _graceful(lambda: watcher.request_stop(STOP_GRACE_S)):
        watcher.run()


@main.command("serve")
@path_argument
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but loopback needs $KNOXIDX_TOKEN.")
@click.option("--port", type=WholeRange(0, 65535), default=7411, show_default=True,
              help="Port (0: any free one; the address is printed).")
@click.option("--watch", is_flag=True, help="Also keep the index up to date (a watcher).")
@debounce_option
@click.option("--workers", type=WholeRange(1, 64), default=4, show_default=True,
              help="Reader threads (each holds its own read-only connection).")
@click.option("--access-log", is_flag=True, help="Log every request.")
@click.option("--header-timeout", type=NumberRange(0.1, 3600), default=10.0,
              show_default=True,
              help="Seconds a client has to send a request's headers (then: 408, closed).")
@click.option("--body-timeout", type=NumberRange(0.1, 3600), default=30.0,
              show_default=True, help="Seconds a client has to send a request's body.")
@click.option("--max-connections", type=WholeRange(1, 100_000), default=512,
              show_default=True, help="Open connections at most (past it the one that has "
              "waited longest for its headers is closed).")
@offline_option
@store_options
def serve_cmd(path: str, host: str, port: int, watch: bool, debounce_ms: int, workers: int,
              access_log: bool, header_timeout: float, body_timeout: float,
              max_connections: int) -> None:
    """Serve the index of PATH over HTTP, read-only (OpenAPI at /openapi.json).

    \b
    Endpoints: /health /status /symbols /symbols/{id} /entity /callers /callees /refs
    /deps /impact /changes /goto /map /history /hotspots /search /source (GET) and /context (POST {"query",
    "max_tokens"}).
    With $KNOXIDX_TOKEN set, requests need 'Authorization: Bearer <token>'.
    """
    from knoxidx.api.client_limits import ClientLimits
    from knoxidx.api.http import TOKEN_ENV, bind, create_app, run_server, token_problem

    token = (os.environ.get(TOKEN_ENV) or "").strip() or None
    problem = token_problem(host, token)
    if problem:
        raise click.UsageError(problem)
    shared = shared_store()
    if shared is not None:
        if watch:
            raise click.UsageError("--watch indexes one local repository: run `knoxidx watch` "
                                   "against the store beside the server instead")
        watcher, root = None, Path(path).resolve()
    else:
        watcher, root = _start_watcher(path, watch, debounce_ms)
    try:
        sock = bind(host, port)
        shown = f"[{host}]" if ":" in host else host
        what = root if shared is None else f"{redact(shared[0])} ({shared[1] or 'every repository'})"
        banner = (f"knoxidx: serving {visible(str(what))} on http://{shown}:{sock.getsockname()[1]} "
                  f"({'watching, ' if watcher else ''}OpenAPI at /openapi.json)")
        app = create_app(root, token=token, watcher=watcher, workers=workers,
                         on_ready=lambda: click.echo(banner, err=True),
                         store_url=shared[0] if shared else None,
                         repo=shared[1] if shared else None)
        run_server(app, sock, access_log=access_log,
                   log_level="info" if access_log else "warning",
                   limits=ClientLimits(header_timeout, body_timeout, max_connections))
    finally:
        if watcher is not None:
            _stop_watcher(watcher)


@main.command("mcp")
@path_argument
@click.option("--watch", is_flag=True, help="Also keep the index up to date (a watcher).")
@debounce_option
@offline_option
@store_options
def mcp_cmd(path: str, watch: bool, debounce_ms: int) -> None:
    """Serve the index of PATH to an MCP client over stdio (tools: search_code, find_symbol,
    describe_symbol, get_callers, get_callees, get_references, get_dependencies,
    impact_of_change, detect_changes, goto_definition, repo_map, get_history, find_hotspots, build_context, read_code, index_status)."""
    from knoxidx.api.mcp_server import run_stdio

    shared = shared_store()
    if shared is not None:
        if watch:
            raise click.UsageError("--watch indexes one local repository, not a shared store")
        run_stdio(Path(path).resolve(), None, store_url=shared[0], repo=shared[1])
        return
    watcher, root = _start_watcher(path, watch, debounce_ms)
    try:
        run_stdio(root, watcher)
    finally:
        if watcher is not None:
            _stop_watcher(watcher)


@main.command("context")
@click.argument("query", type=Text(MAX_QUERY_CHARS))
@path_argument
@click.option("--max-tokens", type=WholeRange(MIN_TOKENS, MAX_TOKENS),
              default=DEFAULT_TOKENS, show_default=True, help="Token budget of the answer (the model's tokenizer).")
@json_option
@offline_option
@store_options
def context_cmd(query: str, path: str, max_tokens: int, as_json: bool) -> None:
    """The code to read for QUERY, packed into --max-tokens: search hits, then what they call,
    their callers, the types they use, their class and their imports, ranked (markdown; --json
    adds each item's scores and reasons)."""
    with open_index(path) as idx:
        data = idx.context(query, max_tokens)

    def human(d: dict[str, Any]) -> None:
        from knoxidx.api.schemas import disclosure_note

        click.echo(d["markdown"] or f"nothing found for {query!r}")
        note = disclosure_note(d)
        click.echo(f"{counted(len(d['blocks']), 'block')}, {d['tokens']} of {d['max_tokens']} tokens"
                   f"{'; ' + note if note else ''}", err=True)

    emit(data, as_json, human)


def _start_watcher(path: str, watch: bool, debounce_ms: int) -> tuple[Any, Path]:
    """A running watcher (logging to stderr) and the index root; or no watcher and the root
    of the existing index."""
    if not watch:
        with open_index(path) as idx:
            return None, idx.root
    from knoxidx.watch import Watcher
    from knoxidx.watch_log import line_emitter

    watcher = Watcher(path, debounce_ms=debounce_ms, emit=line_emitter(sys.stderr, False))
    watcher.start()
    return watcher, Path(watcher.status.root)


def _stop_watcher(watcher: Any) -> None:
    """Stop a server's watcher once the server has stopped: an update in progress is
    abandoned at once (the server already took its time to stop), and a watcher that still
    does not end within STOP_LIMIT_S ends the process."""
    if not watcher.stop(timeout=STOP_LIMIT_S, grace_s=0):
        _leave_now()


@contextmanager
def _graceful(stop: Any) -> Iterator[None]:
    """SIGINT/SIGTERM ask ``stop()`` (which abandons an update still running after
    STOP_GRACE_S); a second one interrupts at once (the update's transaction rolls back:
    nothing is lost); a process still running STOP_LIMIT_S after the first ends then."""
    asked: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        if asked:
            raise KeyboardInterrupt
        asked.append(signum)
        stop()
        limit = threading.Timer(STOP_LIMIT_S, _leave_now)
        limit.daemon = True
        limit.start()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _leave_now() -> None:
    """End the process at once, its output flushed: the update in progress rolls back (its
    changes are applied at the next start), the write lock goes with the process, and the
    workers with their parent."""
    click.echo(f"knoxidx: the watcher did not stop within {STOP_LIMIT_S:g} s; exiting now "
               "(the update in progress rolls back)", err=True)
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(1)
