"""Hostile requests against a real `knoxidx serve`: each is answered with a 4xx and a JSON error
that says what is wrong, never a 500, a hang or a byte of what lies outside the repository.
(test_http.py holds the everyday limits; these are the ones found by probing.)"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.agent.support import make_hostile_repo, start_server


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root = make_hostile_repo(tmp_path_factory.mktemp("hostile"))
    os.mkfifo(root / "app" / "pipe.py")  # opening a FIFO for reading blocks until a writer
    deep = str(root)
    for _ in range(1100):  # deeper than Python's recursion limit (os.makedirs recurses too)
        deep += "/d"
        os.mkdir(deep)
    with open(os.path.join(deep, "x.py"), "w") as fh:
        fh.write("X = 1\n")
    proc, url = start_server(root)
    with httpx.Client(base_url=url, timeout=30) as http:
        yield http
    assert proc.stop() == 0
    os.remove(deep + "/x.py")
    while deep != str(root):  # shutil.rmtree (pytest's clean-up) recurses per level too
        os.rmdir(deep)
        deep = os.path.dirname(deep)


JSON_HEADERS = {"content-type": "application/json"}

GETS = [
    # a path:line symbol whose line overflows SQLite's integers (was a 500)
    ("/callers", {"symbol": "app/util.py:99999999999999999999999"}, 404, "symbol_not_found"),
    # a path nested 2,000 directories deep (the path filter recursed per directory: a 500)
    ("/source", {"path": "a/" * 2000 + "x.py"}, 404, "file_not_found"),
    ("/source", {"path": "/".join(["d"] * 1100) + "/x.py"}, 200, None),
    # a FIFO inside the repository (the reader thread blocked on it for ever)
    ("/source", {"path": "app/pipe.py"}, 400, "bad_path"),
    # numbers: only ASCII digits (int() takes '1_0', '١٠' and fullwidth digits)
    ("/search", {"q": "x", "k": "1_0"}, 400, "bad_request"),
    ("/search", {"q": "x", "k": "１０"}, 400, "bad_request"),
    ("/source", {"path": "app/util.py", "start": "٣"}, 400, "bad_request"),
    ("/callers", {"symbol": "app/util.py:٣"}, 400, "bad_request"),  # a path:line too
    ("/goto", {"at": "app/util.py:٣"}, 400, "bad_request"),
    ("/search", {"q": "x", "k": "-5"}, 400, "bad_request"),
    ("/search", {"q": "x", "k": "9" * 40}, 400, "bad_request"),
    ("/search", {"q": "x", "k": "ten"}, 400, "bad_request"),
    ("/impact", {"symbol": "read_text", "depth": "-1"}, 400, "bad_request"),
    ("/impact", {"symbol": "read_text", "depth": "1e9"}, 400, "bad_request"),
    ("/source", {"path": "app/util.py", "start": "-5"}, 400, "bad_request"),
    ("/source", {"path": "app/util.py", "end": "0"}, 400, "bad_request"),
    # a glob SQLite would backtrack on for seconds per row
    ("/search", {"q": "x", "path": "*[a-" * 16}, 400, "bad_request"),
    # path-like parameters other than /source: refused or not found, never read
    ("/deps", {"target": "/etc/passwd"}, 400, "bad_path"),
    ("/deps", {"target": "../../etc/passwd"}, 404, "symbol_not_found"),
    ("/deps", {"target": "app/\x00config.py"}, 404, "symbol_not_found"),
    ("/callers", {"symbol": "../../etc/passwd:1"}, 404, "symbol_not_found"),
    ("/source", {"path": "app/util.py/../../../etc/passwd"}, 400, "bad_path"),
    ("/source", {"path": "x" * 5000}, 400, "bad_request"),
    # routes and methods that do not exist answer in the API's JSON shape too
    ("/nope", {}, 404, "no_route"),
    ("/symbols/..%2f..%2fetc%2fpasswd", {}, 404, "no_route"),
]


@pytest.mark.parametrize("url,params,status,code", GETS)
def test_hostile_get(client: httpx.Client, url: str, params: dict, status: int,
                     code: str | None) -> None:
    response = client.get(url, params=params)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    if code is not None:
        error = response.json()["error"]
        assert error["code"] == code and error["message"], error
    assert "root:" not in response.text and "SECRET" not in response.text


POSTS = [
    # 30,000-deep JSON fits in the body limit; json.loads raised RecursionError (a 500)
    (b"[" * 30000 + b"]" * 30000, JSON_HEADERS, 400, "nests too deeply"),
    # an unpaired surrogate decoded from JSON could not be encoded in the answer (a 500)
    (b'{"query": "x\\ud800"}', JSON_HEADERS, 400, "surrogate"),
    (b'{"query": "x", "max_tokens": 100.5}', JSON_HEADERS, 400, "fractional"),
    (b'{"query": "x", "max_tokens": -1}', JSON_HEADERS, 400, "max_tokens"),
    (b'{"query": "x", "max_tokens": 1e400}', JSON_HEADERS, 400, "whole number"),
    (b'{"query": "x", "max_tokens": true}', JSON_HEADERS, 400, "boolean"),
    (b'{"query": "x", "max_tokens": NaN}', JSON_HEADERS, 400, "whole number"),
    (b'{"query": "x"', JSON_HEADERS, 400, "not valid JSON"),
    (b"\xff\xfe{}", JSON_HEADERS, 400, "not valid JSON"),
    (b'{"query": ["x"]}', JSON_HEADERS, 400, "must be a string"),
    # only JSON bodies: a page's cross-origin text/plain or form POST needs no preflight
    (b'{"query": "x"}', {"content-type": "text/plain"}, 415, "application/json"),
    (b"query=x", {"content-type": "application/x-www-form-urlencoded"}, 415,
     "application/json"),
    (b'{"query": "x"}', {}, 415, "no content type"),
]


@pytest.mark.parametrize("body,headers,status,words", POSTS)
def test_hostile_post(client: httpx.Client, body: bytes, headers: dict, status: int,
                      words: str) -> None:
    response = client.post("/context", content=body, headers=headers)
    assert response.status_code == status, response.text
    assert words in response.json()["error"]["message"], response.text


def test_wrong_method_is_a_json_405(client: httpx.Client) -> None:
    response = client.put("/symbols/1")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_oversized_query_string_is_refused_not_fatal(client: httpx.Client) -> None:
    import socket

    url = client.base_url  # raw: httpx itself refuses URLs this long
    with socket.create_connection((url.host, url.port), timeout=30) as sock:
        sock.sendall(b"GET /symbols?q=" + b"x" * 200_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Connection: close\r\n\r\n")
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    status = int(reply.split(b" ", 2)[1]) if reply else 0
    assert 400 <= status < 500 or (status == 0 and not reply), reply[:200]
    assert client.get("/health").status_code == 200  # the server lives on


def test_the_serve_banner_shows_a_hostile_root_name_as_escapes(tmp_path: Path) -> None:
    """A clone takes its directory's name from the repository's: an escape sequence in it
    must not retitle the terminal when the server says where it serves, as every other
    command's output already shows it."""
    from tests.helpers import build, write_tree

    root = write_tree(tmp_path / "r\x1b]0;owned\x07", {"m.py": "def a():\n    pass\n"})
    build(root)
    proc, _ = start_server(root)
    try:
        banner = proc.expect(r"serving", timeout=5).string
    finally:
        proc.stop()
    assert "\x1b" not in banner and "\x07" not in banner and "r\\x1b]0;owned\\x07" in banner


def test_a_response_body_obeys_no_terminal(tmp_path: Path) -> None:
    """`curl` prints a body to the terminal: a file name's C1 CSI or bidi override went out
    raw (JSON escapes only C0 itself). The values stay the same."""
    import json

    from starlette.testclient import TestClient

    from knoxidx.api.http import create_app
    from tests.agent.support import make_repo

    name = "csi\x9b31m\u202e.py"
    root = make_repo(tmp_path / "repo", {name: "def tinted():\n    return 1\n"}, retrieval=False)
    with TestClient(create_app(root), base_url="http://127.0.0.1") as client:
        for url in ("/symbols?q=tinted", "/nope\u202e"):
            body = client.get(url).content.decode("utf-8")
            assert "\x9b" not in body and "\u202e" not in body, body
        found = client.get("/symbols?q=tinted").content
    assert json.loads(found)["symbols"][0]["path"] == name
