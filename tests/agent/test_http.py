"""The HTTP API against a real `knoxidx serve` process on a random loopback port, driven by
httpx: the Index's answers, the error statuses, the limits, path confinement, OpenAPI."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from knoxidx.api.schemas import MAX_BODY_BYTES, OPERATIONS
from knoxidx.index import Index
from tests.agent.support import knoxidx_command, make_hostile_repo, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, Path]]:
    root = make_hostile_repo(tmp_path_factory.mktemp("http"))
    proc, url = start_server(root)
    with httpx.Client(base_url=url, timeout=30) as client:
        yield client, root
    assert proc.stop() == 0  # SIGTERM: a graceful shutdown


@pytest.fixture(scope="module")
def client(server: tuple[httpx.Client, Path]) -> httpx.Client:
    return server[0]


@pytest.fixture(scope="module")
def index(server: tuple[httpx.Client, Path]) -> Iterator[Index]:
    with Index.open(server[1]) as idx:
        yield idx


def get(client: httpx.Client, url: str, status: int = 200) -> dict:
    response = client.get(url)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


def same(data: object) -> object:
    return json.loads(json.dumps(data, default=str))


def test_health_and_status(client: httpx.Client) -> None:
    assert get(client, "/health") == {"status": "ok"}
    status = get(client, "/status")
    assert status["files"] >= 5 and status["nodes"] > 10 and status["edges"] > 10
    assert status["phase"] == "not watching" and status["watcher"] is None
    assert status["retrieval"]["embedding_backlog"] == status["retrieval"]["chunks"] > 0
    assert status["extraction"]["stale"] is False


def test_answers_are_the_index_calls(client: httpx.Client, index: Index) -> None:
    assert get(client, "/symbols?q=parse_config") == same(index.find_symbols("parse_config"))
    assert get(client, "/symbols?q=Config&kind=Class&limit=5") == \
        same(index.find_symbols("Config", "Class", limit=5))
    wildcard = get(client, "/symbols?q=parse_*")
    assert wildcard == same(index.find_symbols("parse_*")) and wildcard["symbols"]
    assert all(s["name"].startswith("parse_") for s in wildcard["symbols"])
    assert get(client, "/callers?symbol=parse_config") == same(index.callers("parse_config"))
    assert get(client, "/callers?symbol=app.util.read_text&depth=2") == \
        same(index.callers("app.util.read_text", depth=2))
    assert get(client, "/callees?symbol=parse_config") == same(index.callees("parse_config"))
    assert get(client, "/refs?symbol=app.util.read_text") == same(index.refs("app.util.read_text"))
    assert get(client, "/deps?target=app/main.py") == same(index.deps("app/main.py"))
    assert get(client, "/deps?target=app/config.py&reverse=true") == \
        same(index.deps("app/config.py", reverse=True))
    assert get(client, "/impact?symbol=read_text") == same(index.impact("read_text"))
    assert get(client, "/source?path=app/util.py&start=1&end=2") == \
        same(index.read_source("app/util.py", 1, 2))
    node = index.symbols("parse_config")[0]
    assert get(client, f"/symbols/{node['id']}") == same(index.node(node["id"]))


def _flags(data: object, key: str) -> list[object]:
    if isinstance(data, dict):
        return [v for k, v in data.items() if k == key] + \
            [x for v in data.values() for x in _flags(v, key)]
    if isinstance(data, list):
        return [x for v in data for x in _flags(v, key)]
    return []


def test_flags_are_json_booleans(client: httpx.Client) -> None:
    """`exported` is stored as 0/1: every answer holding a node says true/false (it said 1)."""
    answers = [get(client, url) for url in (
        "/symbols?q=parse_config", "/callers?symbol=parse_config", "/refs?symbol=read_text",
        "/impact?symbol=read_text", "/deps?target=app/config.py")]
    answers.append(get(client, f"/symbols/{answers[0]['symbols'][0]['id']}"))
    exported = _flags(answers, "exported")
    assert len(exported) >= 6 and {type(v) for v in exported} <= {bool, type(None)}
    assert True in exported
    assert '"exported": true' in client.get("/symbols?q=parse_config").text


def test_a_choice_is_taken_in_any_case(client: httpx.Client, index: Index) -> None:
    # an agent writes `kind=class` as often as `kind=Class`; it was a 400 ("must be one of
    # Function, Class, ..."). A value that matches no choice in any case still is.
    assert get(client, "/symbols?q=Config&kind=class") == \
        same(index.find_symbols("Config", "Class"))
    assert get(client, "/search?q=parse%20config&mode=LEXICAL")["mode"] == "lexical"
    error = get(client, "/symbols?q=Config&kind=klass", 400)["error"]
    assert "must be one of Function, Class" in error["message"]


def test_search_and_context(client: httpx.Client, index: Index) -> None:
    found = get(client, "/search?q=parse%20configuration&k=3&mode=lexical")
    assert found == same(index.search("parse configuration", k=3, mode="lexical"))
    assert found["results"][0]["symbol"] == "app.config.parse_config"
    response = client.post("/context", json={"query": "parse the configuration file",
                                             "max_tokens": 900})
    assert response.status_code == 200, response.text
    data = response.json()
    assert data == same(index.context("parse the configuration file", 900))
    assert data["tokens"] <= 900 and "def read_text(path):" in data["markdown"]
    default = client.post("/context", json={"query": "read a file"}).json()
    assert default["max_tokens"] == 8000
    # the library's bound, as the CLI's and MCP's: 150000 was refused here alone
    roomy = client.post("/context", json={"query": "read a file", "max_tokens": 150_000})
    assert roomy.status_code == 200 and roomy.json()["max_tokens"] == 150_000, roomy.text


@pytest.mark.parametrize("url,status,code", [
    ("/callers?symbol=main", 409, "ambiguous_symbol"),
    ("/callers?symbol=no_such_thing", 404, "symbol_not_found"),
    ("/symbols/12345", 404, "symbol_not_found"),
    ("/symbols/abc", 400, "bad_request"),
    ("/symbols/99999999999999999999", 400, "bad_request"),
    ("/symbols/-1", 400, "bad_request"),
    ("/callers", 400, "bad_request"),
    ("/callers?symbol=", 400, "bad_request"),
    ("/callers?symbol=%20%20", 400, "bad_request"),
    ("/deps?target=%20", 400, "bad_request"),
    ("/callers?symbol=parse_config&depth=0", 400, "bad_request"),
    ("/callers?symbol=parse_config&depth=11", 400, "bad_request"),
    ("/callers?symbol=parse_config&depth=two", 400, "bad_request"),
    ("/callers?symbol=parse_config&colour=red", 400, "bad_request"),
    ("/callers?symbol=parse_config&symbol=main", 400, "bad_request"),
    ("/symbols?q=x&limit=100000", 400, "bad_request"),
    ("/symbols?q=x&kind=Banana", 400, "bad_request"),
    ("/search?q=x&k=0", 400, "bad_request"),
    ("/search?q=x&k=101", 400, "bad_request"),
    ("/search?q=x&mode=psychic", 400, "bad_request"),
    ("/search?q=" + "x" * 2001, 400, "bad_request"),
    ("/deps?target=app/nothing.py", 404, "symbol_not_found"),
    ("/deps?target=app/main.py&reverse=maybe", 400, "bad_request"),
    ("/status?verbose=1", 400, "bad_request"),
    ("/source?path=app/util.py&start=5&end=4", 400, "bad_range"),
    ("/source?path=app/util.py&start=99", 400, "bad_range"),
])
def test_clear_errors(client: httpx.Client, url: str, status: int, code: str) -> None:
    body = get(client, url, status)
    assert body["error"]["code"] == code and body["error"]["status"] == status
    assert body["error"]["message"]


def test_ambiguous_symbol_lists_candidates(client: httpx.Client) -> None:
    body = get(client, "/impact?symbol=main", 409)
    names = {c["qualified_name"] for c in body["error"]["candidates"]}
    assert names == {"app.main.main", "other.main"}  # tools/ is not a package


@pytest.mark.parametrize("body,status", [
    (b"not json", 400), (b"[1, 2]", 400), (b'{"max_tokens": 100}', 400),
    (b'{"query": "x", "max_tokens": 10}', 400), (b'{"query": "x", "max_tokens": 200001}', 400),
    (b'{"query": "x", "max_tokens": "100"}', 400), (b'{"query": "x", "extra": 1}', 400),
    (b'{"query": 5}', 400),
])
def test_context_body_validation(client: httpx.Client, body: bytes, status: int) -> None:
    response = client.post("/context", content=body,
                           headers={"content-type": "application/json"})
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == "bad_request"


def test_body_size_limit(client: httpx.Client) -> None:
    big = json.dumps({"query": "x" * (MAX_BODY_BYTES + 10)})
    response = client.post("/context", content=big, headers={"content-type": "application/json"})
    assert response.status_code == 413 and response.json()["error"]["code"] == "body_too_large"

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted while reading
        for _ in range(MAX_BODY_BYTES // 1024 + 2):
            yield b" " * 1024

    response = client.post("/context", content=chunks(),
                           headers={"content-type": "application/json"})
    assert response.status_code == 413


def test_read_only(client: httpx.Client) -> None:
    assert client.post("/callers?symbol=parse_config").status_code == 405
    assert client.delete("/symbols/1").status_code == 405
    assert client.get("/context").status_code == 405


# Raw query strings, sent exactly as written (httpx does not re-encode a query given this way).
TRAVERSALS = [
    ("path=../etc/passwd", 400),
    ("path=%2e%2e/%2e%2e/etc/passwd", 400),
    ("path=%2E%2E%2F%2E%2E%2Fetc%2Fpasswd", 400),
    ("path=%252e%252e/etc/passwd", 400),  # encoded twice: refused, not decoded again
    ("path=app/..%2f..%2f..%2fetc%2fpasswd", 400),
    ("path=/etc/passwd", 400),
    ("path=%2Fetc%2Fpasswd", 400),
    ("path=app/util.py%00.txt", 400),
    ("path=..%5c..%5cetc%5cpasswd", 400),
    ("path=escape/secret.py", 403),  # a directory symlink out of the root
    ("path=evil.py", 403),  # a file symlink out of the root
    ("path=.git/config", 403),
    ("path=.knoxidx/index.db", 403),
    ("path=.GIT/config", 403),  # what a case-insensitive file system opens as .git/config
    ("path=secrets/token.py", 403),  # .gitignore
    ("path=node_modules/m/i.js", 403),
    ("path=app/nope.py", 404),
    ("path=alias.py", 200),  # a symlink that stays inside
]


@pytest.mark.parametrize("query,status", TRAVERSALS)
def test_source_is_confined_to_the_repository(client: httpx.Client, query: str,
                                              status: int) -> None:
    response = client.get(httpx.URL("/source", query=query.encode()))
    assert response.status_code == status, (query, response.text)
    if status != 200:
        assert "SECRET" not in response.text and "root:" not in response.text


def test_foreign_host_header_is_refused_without_a_token(client: httpx.Client) -> None:
    response = client.get("/status", headers={"Host": "attacker.example:7411"})
    assert response.status_code == 403 and response.json()["error"]["code"] == "bad_host"
    assert client.get("/status", headers={"Host": "localhost:1234"}).status_code == 200
    assert client.get("/status", headers={"Host": "[::1]:1234"}).status_code == 200


def test_openapi_documents_every_endpoint(client: httpx.Client) -> None:
    spec = get(client, "/openapi.json")
    assert spec["openapi"].startswith("3.")
    for op in OPERATIONS:
        entry = spec["paths"][op.path][op.method.lower()]
        assert entry["description"] == op.description
        if op.method == "GET":
            assert {p["name"] for p in entry["parameters"]} == {p.query_name for p in op.params}
        else:
            assert entry["requestBody"]["content"]["application/json"]["schema"][
                "required"] == ["query"]
        assert "409" in entry["responses"]
    assert {"/health", "/status"} <= spec["paths"].keys()


def test_readers_follow_a_rebuilt_index(client: httpx.Client, server: tuple[httpx.Client, Path]
                                        ) -> None:
    # --rebuild replaces the database file: connections to the old one must not linger
    (server[1] / "app" / "late.py").write_text("def late_comer():\n    pass\n")
    rebuilt = subprocess.run(knoxidx_command("index", "--rebuild", str(server[1])),
                             check=False, capture_output=True, text=True, timeout=120)
    assert rebuilt.returncode == 0, rebuilt.stderr
    for _ in range(12):  # whichever reader thread answers
        assert get(client, "/symbols?q=late_comer")["symbols"][0]["path"] == "app/late.py"
