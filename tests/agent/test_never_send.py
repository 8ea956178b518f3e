"""Never-send files and secrets on every read path that leaves the process: the library calls
the faces make (``read_source``, ``search``, ``context``), a real ``knoxidx serve`` on
127.0.0.1, a real MCP client session against ``knoxidx mcp``, and the CLI. A never-send file
asked for by path is refused naming its rule; in search and context answers it is withheld
and counted; secrets in what is shown are masked, and the answer says so."""

from __future__ import annotations

import asyncio
import json
import os
import random
import string
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, StdioServerParameters

from knoxidx.index import Index
from knoxidx.retrieval.disclosure import NeverSendError
from tests.agent.support import FILES, knoxidx_command, make_repo, start_server

_rng = random.Random(2049)


def _fake(length: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    """Random characters, made at run time so that no scanner takes this file for a leak."""
    return "".join(_rng.choice(alphabet) for _ in range(length))


DOTENV_KEY = _fake(32)
ENV_PY_TOKEN = _fake(30)
VAULT_PASSWORD = _fake(24)
AWS_TAIL = _fake(16, string.ascii_uppercase + string.digits)
DB_PASSWORD = _fake(14) + "!9"
GITHUB_TOKEN = "ghp_" + _fake(36)
DEPLOY_PASSWORD = _fake(20)
HOOK_TOKEN = "ghp_" + _fake(36)
UNSEAL_KEY_ID = _fake(22)
# What no answer may hold: the never-send files' values and the secrets of allowed files.
SECRETS = (DOTENV_KEY, ENV_PY_TOKEN, VAULT_PASSWORD, AWS_TAIL, DB_PASSWORD, GITHUB_TOKEN,
           DEPLOY_PASSWORD, HOOK_TOKEN, UNSEAL_KEY_ID)

NEVER_SEND_FILES = {
    ".env": f"BILLING_API_KEY={DOTENV_KEY}\n",
    ".env.py": f'BILLING_TOKEN = "{ENV_PY_TOKEN}"\n\n\ndef billing_token():\n'
               '    """The billing service token."""\n    return BILLING_TOKEN\n',
    "app/vault_secrets.py": f'def vault_password():\n    """The billing vault password."""\n'
                            f'    return "{VAULT_PASSWORD}"\n\n\n'
                            f'@sealed(key_id="{UNSEAL_KEY_ID}")\n'
                            f'def unseal(box: "Sealed[{UNSEAL_KEY_ID}]") -> bytes:\n'
                            '    return box.open()\n',
}
ALLOWED = {
    "app/billing.py": (
        "from app.vault_secrets import vault_password\n\n"
        f'AWS_KEY_ID = ("AKIA" "{AWS_TAIL}")\n'
        f'DSN = "Server=db;Database=billing;User Id=svc;Password={DB_PASSWORD};"\n\n\n'
        "def billing_client():\n"
        '    """Connect to the billing service with the vault password."""\n'
        "    return connect(DSN, vault_password())\n\n\n"
        "def connect(dsn, password):\n    return (dsn, password)\n"
    ),
    # secrets in a signature's parts: parameter defaults and a decorator's arguments
    "app/deploy.py": (
        f'@webhook(token="{HOOK_TOKEN}")\n'
        f'def deploy(target: str, token="{GITHUB_TOKEN}", *,\n'
        f'           password="{DEPLOY_PASSWORD}") -> bool:\n'
        "    return bool(target and token and password)\n"
    ),
}
RULES = {".env": "*.env", ".env.py": ".env*", "app/vault_secrets.py": "*secret*",
         "innocent.py": ".env*"}  # the last pattern that matches decides, as in .gitignore


def make_leaky_repo(base: Path) -> Path:
    """The demo repository plus never-send files that discovery indexes (none is ignored),
    a symlink to one of them, and a file allowed but holding secrets."""
    root = make_repo(base / "repo", {**FILES, **NEVER_SEND_FILES, **ALLOWED})
    os.symlink(root / ".env.py", root / "innocent.py")
    return root


def assert_no_secret(text: str) -> None:
    for value in SECRETS:
        assert value not in text


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_leaky_repo(tmp_path_factory.mktemp("never-send"))


# ---- the library calls every face makes ----------------------------------------------------


@pytest.mark.parametrize("path", [*NEVER_SEND_FILES, "innocent.py", "./.env",
                                  "app//vault_secrets.py"])
def test_reading_a_never_send_file_is_refused_naming_the_rule(repo: Path, path: str) -> None:
    with Index.open(repo) as idx:
        with pytest.raises(NeverSendError) as info:
            idx.read_source(path)
    rule = RULES[path.removeprefix("./").replace("//", "/")]
    assert f"never-send rule {rule!r}" in str(info.value)


def test_an_allowed_file_is_read_with_its_secrets_masked(repo: Path) -> None:
    with Index.open(repo) as idx:
        answer = idx.read_source("app/billing.py")
        window = idx.read_source("app/billing.py", 4, 4)
    assert_no_secret(answer["text"])
    assert answer["masked"] == {"aws-access-key": 1, "connection-password": 1}
    assert 'AWS_KEY_ID = ("«secret:aws-access-key»" "«secret:aws-access-key»")' in answer["text"]
    assert answer["text"].count("\n") == answer["total_lines"] - 1  # lines kept
    assert window["masked"] == {"connection-password": 1}  # what the window shows


def test_search_withholds_never_send_chunks_and_masks_snippets(repo: Path) -> None:
    with Index.open(repo) as idx:
        found = idx.search("billing token vault password", k=10, mode="lexical")
    paths = {r["path"] for r in found["results"]}
    assert found["withheld"] >= 2 and not paths & set(NEVER_SEND_FILES)
    assert "app/billing.py" in paths
    assert_no_secret(json.dumps(found))


def test_search_fills_its_places_past_withheld_results(repo: Path) -> None:
    """A never-send hit does not cost a place: k results are shown when there are k."""
    with Index.open(repo) as idx:
        found = idx.search("billing", k=1, mode="lexical")
    assert len(found["results"]) == 1 and found["results"][0]["path"] == "app/billing.py"
    assert found["withheld"] >= 1


def test_context_withholds_never_send_code_and_masks_secrets(repo: Path) -> None:
    with Index.open(repo) as idx:
        context = idx.context("billing client vault password token", max_tokens=4000)
    text = json.dumps(context)
    assert_no_secret(text)
    assert not {b["path"] for b in context["blocks"]} & set(NEVER_SEND_FILES)
    assert not {i["path"] for i in context["items"]} & set(NEVER_SEND_FILES)
    assert context["withheld"] >= 2  # search hits and the callee in vault_secrets.py
    assert "«secret:connection-password»" in context["markdown"]
    assert context["masked"].get("connection-password") == 1


def test_graph_answers_show_no_never_send_value_and_mask_signatures(repo: Path) -> None:
    """A definition's signature and doc line travel with every graph answer; a constant's
    signature is its value."""
    with Index.open(repo) as idx:
        token = idx.symbols("BILLING_TOKEN")
        vault = idx.callers("vault_password")
        dsn = idx.symbols("DSN")
        everything = idx.symbols("*", limit=1000)
    assert token[0]["path"] == ".env.py" and token[0]["signature"] == ""
    assert vault["symbol"]["doc"] == "" and vault["callers"]  # still navigable
    assert dsn[0]["signature"] == 'DSN = "Server=db;Database=billing;User Id=svc;' \
        'Password=«secret:connection-password»;"'
    assert_no_secret(json.dumps([token, vault, dsn, everything]))


def test_signature_parts_are_masked_and_a_never_send_function_has_none(repo: Path) -> None:
    """Parameter defaults and decorators are masked as the signature is; a function of a
    never-send file carries no parameters, return type or decorators at all."""
    with Index.open(repo) as idx:
        deploy = idx.symbols("deploy")[0]
        described = idx.describe("deploy")
        by_id = idx.node(deploy["id"])
        unseal = idx.symbols("unseal")[0]
        unseal_described = idx.describe("unseal")
    for shown in (deploy, described, by_id):
        defaults = {p["name"]: p["default"] for p in shown["parameters"]}
        assert defaults == {"target": None, "token": '"«secret:github-token»"',
                            "password": '"«secret:assigned-secret»"'}
        assert shown["decorators"] == ['webhook(token="«secret:github-token»")']
        assert shown["returns"] == "bool"
    for shown in (unseal, unseal_described):
        assert shown["path"] == "app/vault_secrets.py" and shown["signature"] == ""
        assert not {"parameters", "returns", "type_parameters", "decorators"} & set(shown)
    assert_no_secret(json.dumps([deploy, described, by_id, unseal, unseal_described]))


def test_a_user_rule_can_re_allow_a_file(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNOXIDX_NEVER_SEND", "!app/vault_secrets.py")
    with Index.open(repo) as idx:
        answer = idx.read_source("app/vault_secrets.py")
        with pytest.raises(NeverSendError):
            idx.read_source(".env.py")
    assert answer["text"].startswith("def vault_password():")


# ---- HTTP ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http(repo: Path) -> Iterator[httpx.Client]:
    proc, url = start_server(repo)
    with httpx.Client(base_url=url, timeout=60) as client:
        yield client
    assert proc.stop() == 0


@pytest.mark.parametrize("path", [".env", ".env.py", "app/vault_secrets.py", "innocent.py"])
def test_http_source_refuses_never_send_files(http: httpx.Client, path: str) -> None:
    response = http.get("/source", params={"path": path})
    assert response.status_code == 403, response.text
    error = response.json()["error"]
    assert error["code"] == "never_send" and error["status"] == 403
    assert f"never-send rule {RULES[path]!r}" in error["message"]
    assert_no_secret(response.text)


def test_http_answers_hold_no_secret(http: httpx.Client) -> None:
    source = http.get("/source", params={"path": "app/billing.py"})
    assert source.status_code == 200
    assert source.json()["masked"] == {"aws-access-key": 1, "connection-password": 1}
    search = http.get("/search", params={"q": "billing token vault password", "mode": "lexical"})
    assert search.status_code == 200 and search.json()["withheld"] >= 2
    context = http.post("/context", json={"query": "billing client vault password",
                                          "max_tokens": 4000})
    assert context.status_code == 200 and context.json()["withheld"] >= 1
    symbols = http.get("/symbols", params={"q": "*", "limit": 1000})
    assert symbols.status_code == 200 and "BILLING_TOKEN" in symbols.text
    assert "«secret:github-token»" in symbols.text
    entities = [http.get("/entity", params={"symbol": name}) for name in ("deploy", "unseal")]
    assert [e.status_code for e in entities] == [200, 200]
    for response in (source, search, context, symbols, *entities):
        assert_no_secret(response.text)


# ---- MCP -----------------------------------------------------------------------------------


def test_mcp_tools_refuse_withhold_and_mask(repo: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from knoxidx.cli import run; run()", "mcp", str(repo)])

    async def session() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            async def call(tool: str, **arguments: Any) -> tuple[bool, str]:
                result = await client.call_tool(tool, arguments)
                assert len(result.content) == 1
                return bool(result.is_error), result.content[0].text

            for path in (".env", ".env.py", "innocent.py", "app/vault_secrets.py"):
                failed, text = await call("read_code", path=path)
                assert failed and "never-send rule" in text, text
                assert_no_secret(text)
            failed, code = await call("read_code", path="app/billing.py")
            assert not failed and "«secret:connection-password»" in code
            assert "(likely secrets masked as «secret:KIND»: 1 aws-access-key, " \
                   "1 connection-password)" in code
            failed, context = await call("build_context", query="billing client vault password",
                                         max_tokens=4000)
            assert not failed and "withheld from never-send files" in context
            failed, found = await call("search_code", query="billing token vault password",
                                       mode="lexical")
            assert not failed and json.loads(found)["withheld"] >= 2
            failed, symbols = await call("find_symbol", name="*", limit=1000)
            assert not failed and "BILLING_TOKEN" in symbols
            assert "«secret:github-token»" in symbols
            failed, deploy = await call("describe_symbol", symbol="deploy")
            assert not failed and "«secret:assigned-secret»" in deploy
            failed, unseal = await call("describe_symbol", symbol="unseal")
            assert not failed and "app/vault_secrets.py" in unseal
            for text in (code, context, found, symbols, deploy, unseal):
                assert_no_secret(text)

    asyncio.run(session())


# ---- CLI -----------------------------------------------------------------------------------


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(knoxidx_command(*args), capture_output=True, text=True, timeout=120)


def test_cli_search_and_context_withhold_and_mask(repo: Path) -> None:
    search = run_cli("search", "billing token vault password", str(repo), "--mode", "lexical")
    assert search.returncode == 0, search.stderr
    assert "withheld from never-send files" in search.stderr
    assert not any(line.startswith((".env", "app/vault_secrets.py"))
                   for line in search.stdout.splitlines())
    as_json = run_cli("search", "billing token", str(repo), "--mode", "lexical", "--json")
    assert json.loads(as_json.stdout)["withheld"] >= 1
    context = run_cli("context", "billing client vault password", str(repo))
    assert context.returncode == 0, context.stderr
    assert "«secret:connection-password»" in context.stdout
    assert "withheld from never-send files" in context.stderr
    assert "likely secrets masked" in context.stderr
    for result in (search, as_json, context):
        assert_no_secret(result.stdout + result.stderr)


def test_cli_show_and_symbols_mask_signature_parts(repo: Path) -> None:
    results = [run_cli("show", name, str(repo), *json_flag)
               for name in ("deploy", "unseal") for json_flag in ((), ("--json",))]
    results.append(run_cli("symbols", "*", str(repo), "--json", "--limit", "1000"))
    for result in results:
        assert result.returncode == 0, result.stderr
        assert_no_secret(result.stdout + result.stderr)
    assert "«secret:github-token»" in results[0].stdout


@pytest.mark.parametrize("fmt", ["json", "graphml"])
def test_cli_export_masks_signatures_as_show_does_and_stays_byte_stable(
        repo: Path, fmt: str) -> None:
    """The export is a read that leaves the process like any other: signatures, doc lines and
    signature parts masked (a never-send file's left out), the same bytes each time."""
    first, second = (run_cli("export", str(repo), "--format", fmt) for _ in range(2))
    assert first.returncode == 0, first.stderr
    assert_no_secret(first.stdout + first.stderr)
    assert "«secret:github-token»" in first.stdout
    assert "«secret:connection-password»" in first.stdout
    assert first.stdout == second.stdout
    if fmt == "json":
        nodes = {n["qualified_name"]: n for n in json.loads(first.stdout)["nodes"]}
        assert nodes["app.vault_secrets.vault_password"]["doc"] == ""
        assert [p["default"] for p in nodes["app.deploy.deploy"]["parameters"]] == [
            None, '"«secret:github-token»"', '"«secret:assigned-secret»"']
