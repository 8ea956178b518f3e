"""Offline mode makes no network call at all, proven by a socket guard: with Voyage configured
and a key set, `index --embed`, `embed`, `search` and `context` run under a guard that fails
and records every connection attempt, DNS lookup or datagram other than AF_UNIX."""

from __future__ import annotations

import logging
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from knoxidx.cli import main
from knoxidx.retrieval import backends

REPO = Path(__file__).resolve().parents[1]
UNREACHABLE = "https://192.0.2.1:9/v1"  # TEST-NET-1: never routed


class SocketGuard:
    """Replaces the socket entry points; every non-AF_UNIX use is recorded and refused."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.attempts: list[tuple[str, Any]] = []
        real_connect = socket.socket.connect
        real_connect_ex = socket.socket.connect_ex
        real_sendto = socket.socket.sendto

        def refuse(what: str, target: Any) -> OSError:
            self.attempts.append((what, target))
            return OSError(f"network blocked by the test: {what} {target!r}")

        def connect(sock: socket.socket, address: Any) -> None:
            if sock.family == socket.AF_UNIX:
                return real_connect(sock, address)
            raise refuse("connect", address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            if sock.family == socket.AF_UNIX:
                return real_connect_ex(sock, address)
            raise refuse("connect_ex", address)

        def sendto(sock: socket.socket, *args: Any) -> int:
            if sock.family == socket.AF_UNIX:
                return real_sendto(sock, *args)
            raise refuse("sendto", args[-1])

        def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
            raise refuse("create_connection", address)

        def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            raise refuse("getaddrinfo", host)

        monkeypatch.setattr(socket.socket, "connect", connect)
        monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
        monkeypatch.setattr(socket.socket, "sendto", sendto)
        monkeypatch.setattr(socket, "create_connection", create_connection)
        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def guard(monkeypatch: pytest.MonkeyPatch) -> SocketGuard:
    return SocketGuard(monkeypatch)


@pytest.fixture
def voyage_configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the Python fixture with Voyage chosen (the user's file and the environment)
    and a key set."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "fixtures" / "python", root)
    user_config = tmp_path / "user.toml"
    user_config.write_text(
        f'embedder = "voyage"\n[voyage]\nbase_url = "{UNREACHABLE}"\n', encoding="utf-8")
    monkeypatch.setenv("KNOXIDX_CONFIG", str(user_config))
    monkeypatch.setenv("VOYAGE_API_KEY", "pa-test-key")
    monkeypatch.setenv("KNOXIDX_EMBEDDER", "voyage")
    monkeypatch.setenv("KNOXIDX_OFFLINE", "0")  # restored after the test even if a flag sets it
    monkeypatch.setattr(backends, "_offline_noted", [])
    yield root


def run(args: list[str]) -> str:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_guard_catches_the_voyage_client(guard: SocketGuard) -> None:
    """The control: without offline mode, the same client is stopped (and seen) by the guard."""
    pytest.importorskip("voyageai")
    from knoxidx.retrieval.errors import RetrievalError
    from knoxidx.retrieval.resilience import Resilient, RetryPolicy
    from knoxidx.retrieval.voyage import VoyageEmbedder

    embedder = VoyageEmbedder(api_key="k", base_url=UNREACHABLE,
                              resilient=Resilient(RetryPolicy(max_attempts=1)))
    with pytest.raises(RetrievalError):
        embedder.embed_query("where is the config parsed")
    assert guard.attempts, "the guard saw no attempt: it would prove nothing"


def test_offline_flag_makes_no_network_call(
    voyage_configured: Path, guard: SocketGuard, caplog: pytest.LogCaptureFixture
) -> None:
    root = str(voyage_configured)
    with caplog.at_level(logging.WARNING):
        out = run(["index", "--offline", "--embed", "--jobs", "1", "--json", root])
        assert '"embedded": ' in out
        run(["--offline", "embed", root])
        found = run(["search", "--offline", "parse the config file", root, "--json"])
        assert '"mode": "hybrid"' in found and '"vector"' in found  # the local vectors answered
        run(["context", "--offline", "parse the config file", root, "--max-tokens", "400"])
    assert guard.attempts == []
    notes = [r.getMessage() for r in caplog.records if r.getMessage().startswith("offline:")]
    assert notes == [backends.OFFLINE_NOTE]


@pytest.mark.parametrize("how", ["environment", "config file"])
def test_offline_from_environment_or_config_makes_no_network_call(
    voyage_configured: Path, guard: SocketGuard, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    root = str(voyage_configured)
    if how == "environment":
        monkeypatch.setenv("KNOXIDX_OFFLINE", "1")
    else:
        (voyage_configured / "knoxidx.toml").write_text("offline = true\n", encoding="utf-8")
    run(["index", "--jobs", "1", root])
    run(["embed", "--limit", "5", root])
    found = run(["search", "parse the config file", root, "--json"])
    assert '"vector"' in found
    run(["context", "load settings", root, "--max-tokens", "300"])
    assert guard.attempts == []
    status = run(["egress", root, "--json"])
    assert '"offline": true' in status and '"requests": 0' in status


@pytest.mark.parametrize("command", ["index", "search", "embed", "context", "serve", "mcp",
                                     "watch"])
def test_every_command_that_may_reach_a_service_takes_offline(command: str) -> None:
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0 and "--offline" in result.output


def test_offline_http_server_makes_no_network_call(
    voyage_configured: Path, guard: SocketGuard, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The readers of `knoxidx serve` (and of `knoxidx mcp`, which share them): search,
    context and status answered with vectors, and nothing dialled out."""
    from starlette.testclient import TestClient

    from knoxidx.api.http import create_app

    root = str(voyage_configured)
    run(["index", "--offline", "--embed", "--jobs", "1", root])
    monkeypatch.setenv("KNOXIDX_OFFLINE", "1")  # what `knoxidx serve --offline` sets
    with TestClient(create_app(voyage_configured), base_url="http://127.0.0.1") as client:
        found = client.get("/search", params={"q": "parse the config file", "mode": "vector"})
        assert found.status_code == 200 and found.json()["mode"] == "vector"
        context = client.post("/context", json={"query": "load settings", "max_tokens": 300})
        assert context.status_code == 200
        status = client.get("/status").json()
    assert status["egress"]["offline"] is True and status["egress"]["embedder"] == "local"
    assert guard.attempts == []
