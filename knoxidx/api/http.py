"""``knoxidx serve``: the index over HTTP (Starlette on uvicorn), read-only.

Routes come from :data:`knoxidx.api.schemas.OPERATIONS` (plus ``/health``, ``/status`` and
``/openapi.json``) and answer with exactly what the :class:`~knoxidx.index.Index` calls return.
Errors are ``{"error": {"code", "message", "status"[, "candidates"]}}`` (the codes:
:mod:`knoxidx.api.error_codes`, which MCP's tool errors name too) with 400 (bad input),
401 (no or wrong token), 403 (a path outside what may be read, a never-send file, or a
foreign ``Host``), 404 (unknown symbol or file), 408 (a request head or body not sent in time:
see :mod:`knoxidx.api.client_limits`), 409 (ambiguous symbol: the candidates), 413 (body too
large), 503 (no index or search data yet, or every connection busy).

Security: loopback by default. Binding any other address needs ``$KNOXIDX_TOKEN`` of at least 16
characters, and with a token set every request but ``/health`` must carry ``Authorization:
Bearer <token>`` (the scheme in any case, the token exact). Without
a token only loopback ``Host`` headers are served, so a web page cannot reach the API through
DNS rebinding.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import logging
import signal
import socket
import sqlite3
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from knoxidx.api.client_limits import ClientLimits, guarded_protocol
from knoxidx.api.error_codes import error_code
from knoxidx.api.openapi import openapi
from knoxidx.api.readers import DEFAULT_READERS, ReaderPool, status_of
from knoxidx.api.schemas import (
    MAX_BODY_BYTES,
    OPERATIONS,
    InputError,
    Operation,
)
from knoxidx.core.errors import AmbiguousSymbolError, KnoxidxError
from knoxidx.core.terminal import json_text
from knoxidx.graph.dbfile import storage_error
from knoxidx.graph.sqlite_schema import DB_NAME, INDEX_DIR

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7411
TOKEN_ENV = "KNOXIDX_TOKEN"
MIN_TOKEN_CHARS = 16  # for a server beyond loopback
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})

log = logging.getLogger(__name__)
Handler = Callable[[Request], Awaitable[Response]]


class JSON(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        # C1 and bidi characters of a repository's names as \u escapes (the same JSON value):
        # `curl` prints the body to a terminal, which would obey them
        return json_text(content).encode("utf-8")


# ---- errors --------------------------------------------------------------------------------

def error(status: int, code: str, message: str, **extra: Any) -> JSON:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSON({"error": {"code": code, "message": message, "status": status, **extra}},
                status_code=status, headers=headers)


def error_for(exc: KnoxidxError) -> JSON:
    status, code = error_code(exc)
    extra = {"candidates": exc.candidates} if isinstance(exc, AmbiguousSymbolError) else {}
    return error(status, code, str(exc), **extra)


# ---- the application -----------------------------------------------------------------------


def create_app(root: Path, *, token: str | None = None, watcher: Any = None,
               workers: int = DEFAULT_READERS, loopback_hosts_only: bool | None = None,
               on_ready: Callable[[], None] | None = None, store_url: str | None = None,
               repo: str | None = None) -> Starlette:
    """The ASGI app over the index at ``root``. ``loopback_hosts_only`` (default: when there
    is no token) refuses requests whose ``Host`` is not a loopback name; ``on_ready`` runs
    once the server is up (its signal handlers in place)."""
    pool = ReaderPool(root, workers, store_url=store_url, repo=repo)

    async def health(request: Request) -> Response:
        return JSON({"status": "ok"})

    async def status(request: Request) -> Response:
        if set(request.query_params) - {"repo"}:
            return error(400, "bad_request", "/status takes no parameters but repo")
        return await _answer(pool, lambda idx: status_of(idx, watcher),
                             request.query_params.get("repo"))

    spec = openapi(token is not None)

    async def openapi_json(request: Request) -> Response:
        return JSON(spec)

    routes = [
        Route("/health", health, methods=["GET"]),
        Route("/status", status, methods=["GET"]),
        Route("/openapi.json", openapi_json, methods=["GET"]),
        *(Route(op.path, _endpoint(op, pool), methods=[op.method]) for op in OPERATIONS),
    ]
    guard_hosts = token is None if loopback_hosts_only is None else loopback_hosts_only

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if on_ready is not None:
            on_ready()
        try:
            yield
        finally:
            pool.close()

    return Starlette(
        routes=routes, lifespan=lifespan, exception_handlers=_ROUTING_ERRORS,
        middleware=[Middleware(_Guard, token=token, loopback_hosts_only=guard_hosts)],
    )


def _endpoint(op: Operation, pool: ReaderPool) -> Handler:
    async def endpoint(request: Request) -> Response:
        try:
            if op.method == "POST":
                raw = await _json_body(request)
                repo = raw.pop("repo", None)
                args = op.parse(raw, from_text=False)
            else:
                raw = _query(request)
                repo = raw.pop("repo", None)  # a shared store's repository (or "*": all)
                raw.update(request.path_params)
                args = op.parse(raw, from_text=True)
        except KnoxidxError as exc:
            return error_for(exc)
        except _TooLarge:
            return error(413, "body_too_large", f"the body is over {MAX_BODY_BYTES} bytes")
        except _NotJSON as exc:
            return error(415, "unsupported_media_type", str(exc))
        except ClientDisconnect:  # closed mid-body (by the client, or by the body deadline)
            return error(408, "request_timeout", "the connection closed before the body came")
        return await _answer(pool, lambda idx: op.call(idx, args), repo)

    endpoint.__name__ = op.tool or op.path.strip("/").replace("/", "_")
    return endpoint


async def _answer(pool: ReaderPool, fn: Callable[[Any], Any],
                  repo: str | None = None) -> Response:
    try:
        return JSON(await pool.run(fn, repo))
    except KnoxidxError as exc:
        return error_for(exc)
    except sqlite3.Error as exc:  # a damaged index met by this query: say so, and the fix
        return error_for(storage_error(exc, pool.root / INDEX_DIR / DB_NAME))
    except Exception:  # a bug: logged with its traceback, reported without internals
        log.exception("request failed")
        return error(500, "internal", "internal error; the server log has the details")


def _query(request: Request) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in request.query_params:
        values = request.query_params.getlist(key)
        if len(values) > 1:
            raise InputError(f"parameter {key!r} is given {len(values)} times")
        out[key] = values[0]
    return out


class _TooLarge(Exception):
    pass


class _NotJSON(Exception):
    pass


async def _json_body(request: Request) -> dict[str, Any]:
    # Only JSON: a web page can send a cross-origin `text/plain` or form POST without a CORS
    # preflight, but not an `application/json` one.
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type != "application/json":
        raise _NotJSON(f"the body must be JSON sent as 'Content-Type: application/json', not "
                       f"{media_type or 'no content type'!r}")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _TooLarge
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > MAX_BODY_BYTES:
            raise _TooLarge
    try:
        data = json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError):
        raise InputError("the body is not valid JSON") from None
    except RecursionError:  # `[[[[...` 30,000 deep fits in the size limit
        raise InputError("the body's JSON nests too deeply") from None
    if not isinstance(data, dict):
        raise InputError("the body must be a JSON object")
    return data


class _Guard:
    """Plain ASGI middleware: the Host check and the bearer token, before any routing."""

    def __init__(self, app: Any, token: str | None, loopback_hosts_only: bool) -> None:
        self.app = app
        self.expected = token.encode() if token else None
        self.loopback_hosts_only = loopback_hosts_only

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        refusal: JSON | None = None
        if self.loopback_hosts_only and not _loopback_host(headers.get(b"host", b"")):
            refusal = error(403, "bad_host", "this server answers only to localhost / "
                            "127.0.0.1 / [::1] as Host (set KNOXIDX_TOKEN to serve others)")
        elif self.expected is not None and scope["path"] != "/health":
            given = headers.get(b"authorization", b"")
            if not given:
                refusal = error(401, "unauthorized",
                                "missing 'Authorization: Bearer <token>' ($KNOXIDX_TOKEN)")
            elif not hmac.compare_digest(bearer_token(given), self.expected):
                refusal = error(401, "unauthorized", "wrong token")
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)


def bearer_token(authorization: bytes) -> bytes:
    """The credentials of ``Bearer <token>``, b"" for another scheme: the scheme is matched
    without regard to case (RFC 7235), the token exactly."""
    scheme, _, credentials = authorization.strip().partition(b" ")
    return credentials.strip(b" ") if scheme.lower() == b"bearer" else b""


def token_problem(host: str, token: str | None) -> str:
    """Why ``token`` cannot guard a server bound to ``host`` ("" if it can): beyond loopback
    it is all that keeps the code from the network, so it must be long enough not to guess."""
    if is_loopback(host):
        return ""
    if token is None:
        return (f"--host {host} would expose the code to the network: set {TOKEN_ENV} to a "
                "secret (clients then send 'Authorization: Bearer <token>'), or keep 127.0.0.1")
    if len(token) < MIN_TOKEN_CHARS:
        return (f"--host {host}: {TOKEN_ENV} is {len(token)} characters; a token guarding a "
                f"network address needs at least {MIN_TOKEN_CHARS} characters (e.g. the output "
                "of `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)")
    return ""


def _loopback_host(value: bytes) -> bool:
    host = value.decode("latin-1").strip().lower()
    if host.startswith("["):
        host = host[1:].partition("]")[0]
    elif host.count(":") == 1:
        host = host.partition(":")[0]
    return host in LOOPBACK_NAMES


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def _no_route(request: Request, exc: Exception) -> Response:
    paths = ", ".join(["/health", "/status", "/openapi.json", *(op.path for op in OPERATIONS)])
    return error(404, "no_route", f"no route {request.url.path!r}; the routes are: {paths}")


async def _wrong_method(request: Request, exc: Exception) -> Response:
    return error(405, "method_not_allowed",
                 f"{request.method} is not allowed on {request.url.path} (the API is read-only)")


# Starlette answers these in plain text; the API's clients expect its JSON error shape.
_ROUTING_ERRORS: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
    404: _no_route, 405: _wrong_method,
}


# ---- running -------------------------------------------------------------------------------


def bind(host: str, port: int) -> socket.socket:
    """The listening socket (port 0: any free one), made before uvicorn starts so the
    address is known and a busy port fails early with a clear message."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    # IPPROTO_TCP named explicitly: asyncio sets TCP_NODELAY on accepted connections only
    # when the socket says TCP, and without it every response waits ~40 ms (Nagle against
    # delayed ACKs)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(512)
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def run_server(app: Starlette, sock: socket.socket, *, access_log: bool = False,
               log_level: str = "warning", limits: ClientLimits | None = None) -> None:
    """Serve until SIGINT/SIGTERM: uvicorn's graceful shutdown, then return normally (uvicorn
    re-raises the signal it caught once it has stopped; the no-op handlers installed here
    receive it, so the caller's cleanup runs and the exit status is 0). ``limits``: how long
    a client may take to send a request, and how many connections stay open."""
    import uvicorn

    config = uvicorn.Config(app, log_level=log_level, access_log=access_log,
                            lifespan="on", server_header=False, timeout_graceful_shutdown=5,
                            http=guarded_protocol(limits or ClientLimits()))
    server = uvicorn.Server(config)
    if threading.current_thread() is not threading.main_thread():
        server.run(sockets=[sock])
        return
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda signum, frame: None) for sig in signals}
    try:
        server.run(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
