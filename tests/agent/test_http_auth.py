"""Binding beyond loopback needs a token, and then every request but /health needs it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from knoxidx.cli import main
from tests.agent.support import start_server
from tests.helpers import run_cli

TOKEN = "s3cret-t0ken-0f-20ch"


@pytest.fixture(scope="module")
def url(shared_repo: Path) -> Iterator[str]:
    proc, address = start_server(shared_repo, "--host", "0.0.0.0", env={"KNOXIDX_TOKEN": TOKEN})
    yield address
    assert proc.stop() == 0


def test_non_loopback_needs_a_token(shared_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KNOXIDX_TOKEN", raising=False)
    for host in ("0.0.0.0", "192.0.2.10", "::", "example.com"):
        result = CliRunner().invoke(main, ["serve", str(shared_repo), "--host", host])
        assert result.exit_code == 2, result.output
        assert "KNOXIDX_TOKEN" in result.output


@pytest.mark.parametrize("headers", [
    {},
    {"Authorization": "Bearer wrong"},
    {"Authorization": f"Bearer {TOKEN}x"},
    {"Authorization": f"bearer{TOKEN}"},
    {"Authorization": f"Basic {TOKEN}"},
    {"Authorization": TOKEN},
])
@pytest.mark.parametrize("path", ["/status", "/symbols?q=parse_config", "/openapi.json",
                                  "/source?path=app/util.py"])
def test_requests_without_the_token_get_401(url: str, path: str, headers: dict) -> None:
    response = httpx.get(url + path, headers=headers, timeout=30)
    assert response.status_code == 401, response.text
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.json()["error"]["code"] == "unauthorized"


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
def test_the_scheme_is_case_insensitive(url: str, scheme: str) -> None:
    """RFC 7235: the auth scheme is a case-insensitive token; the token itself is exact."""
    response = httpx.get(url + "/status", headers={"Authorization": f"{scheme} {TOKEN}"},
                         timeout=30)
    assert response.status_code == 200, response.text
    wrong_case = httpx.get(url + "/status", headers={"Authorization": f"{scheme} {TOKEN.upper()}"},
                           timeout=30)
    assert wrong_case.status_code == 401


@pytest.mark.parametrize("token", ["short", "fifteen-chars-x", " " * 20])
def test_a_short_token_is_refused_beyond_loopback(shared_repo: Path, token: str) -> None:
    # a subprocess: a server that wrongly starts fails the test on its timeout, not hangs it
    code, _, err = run_cli("serve", str(shared_repo), "--host", "0.0.0.0", "--port", "0",
                           env={"KNOXIDX_TOKEN": token}, timeout=30)
    assert code == 2, err
    assert "KNOXIDX_TOKEN" in err and "Traceback" not in err
    if token.strip():
        assert "at least 16 characters" in err


def test_a_short_token_is_fine_on_loopback(shared_repo: Path) -> None:
    proc, address = start_server(shared_repo, env={"KNOXIDX_TOKEN": "short"})
    try:
        response = httpx.get(address + "/status", headers={"Authorization": "Bearer short"},
                             timeout=30)
        assert response.status_code == 200
    finally:
        assert proc.stop() == 0


def test_the_token_opens_every_endpoint(url: str) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert httpx.get(url + "/status", headers=auth, timeout=30).status_code == 200
    assert httpx.get(url + "/callers?symbol=parse_config", headers=auth,
                     timeout=30).json()["symbol"]["name"] == "parse_config"
    response = httpx.post(url + "/context", json={"query": "read a file", "max_tokens": 300},
                          headers=auth, timeout=30)
    assert response.status_code == 200 and response.json()["tokens"] <= 300
    # with a token, any Host is fine: the token is the protection
    assert httpx.get(url + "/status", headers={**auth, "Host": "box.example"},
                     timeout=30).status_code == 200


def test_health_needs_no_token_and_tells_nothing(url: str) -> None:
    response = httpx.get(url + "/health", timeout=30)
    assert response.status_code == 200 and response.json() == {"status": "ok"}


