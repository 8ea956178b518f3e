"""What the (fake) Voyage server actually receives when a repository with secrets is indexed,
searched and asked for context through the CLI: never-send files never, secrets masked,
queries masked, and every request in the ledger, `knoxidx egress` and `/status`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_voyage import FakeVoyage
from test_secrets import PEM_BODY, SHAPES

from knoxidx.cli import main
from knoxidx.index import Index
from knoxidx.retrieval.chunker import Chunk
from knoxidx.retrieval.store import ChunkStore
from knoxidx.retrieval.text_views import full_view
from tests.helpers import write_tree

pytest.importorskip("voyageai")

AWS = SHAPES["aws-access-key"]
GITHUB = SHAPES["github-token"]
STRIPE = SHAPES["stripe-key"]
DB_PASSWORD = "Xk9#mQ2v!pL7"
VAULT_WORD = "zanzibarvaultresolver"  # appears only in the never-send file
SECRETS = [AWS, GITHUB, STRIPE, DB_PASSWORD, *PEM_BODY]

FILES = {
    "app/__init__.py": "",
    "app/billing.py": f'''\
        """Billing: charge customers through Stripe."""
        import os

        AWS_ACCESS_KEY_ID = "{AWS}"
        DATABASE_URL = "postgres://billing:{DB_PASSWORD}@db.internal:5432/billing"


        def stripe_client():
            """Make the Stripe client with the live key."""
            api_key = "{STRIPE}"
            return connect(api_key)


        def connect(key):
            return key
        ''',
    "app/deploy.py": '''\
        """Deployment helpers: sign release artifacts."""

        SIGNING_KEY = """-----BEGIN EC PRIVATE KEY-----
        ''' + "\n        ".join(PEM_BODY) + f'''
        -----END EC PRIVATE KEY-----"""


        def push_release(tag):
            """Push the release tag to GitHub with the deploy token."""
            github_token = "{GITHUB}"
            return tag, github_token
        ''',
    "app/secret_store.py": f'''\
        def vault_lookup(name):
            """Resolve a name in the vault ({VAULT_WORD})."""
            return name
        ''',
    "app/util.py": '''\
        def read_text(path):
            """Read a whole file as text."""
            with open(path, encoding="utf-8") as fh:
                return fh.read()
        ''',
}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeVoyage]:
    server = FakeVoyage()
    yield server
    server.close()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, fake: FakeVoyage) -> Iterator[Path]:
    root = write_tree(tmp_path_factory.mktemp("egress"), FILES)
    user_config = tmp_path_factory.mktemp("user") / "config.toml"
    user_config.write_text(
        f'embedder = "voyage"\n[voyage]\nbase_url = "{fake.base_url}"\n', encoding="utf-8")
    mp = pytest.MonkeyPatch()
    mp.setenv("KNOXIDX_CONFIG", str(user_config))
    mp.setenv("VOYAGE_API_KEY", "test-key")
    mp.delenv("KNOXIDX_EMBEDDER", raising=False)
    mp.delenv("KNOXIDX_OFFLINE", raising=False)
    run(["index", "--embed", "--jobs", "1", str(root)])
    run(["search", "vault_lookup", str(root)])  # embeds the query, reranks
    run(["search", f"why is {AWS} rejected by billing", str(root)])  # a secret in the query
    run(["context", "stripe client live key", str(root), "--max-tokens", "600"])
    yield root
    mp.undo()


def run(args: list[str]) -> str:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def sent_texts(fake: FakeVoyage) -> list[str]:
    """Every text the server received: embedding inputs, rerank queries and documents."""
    out: list[str] = []
    for path, body in fake.requests:
        if path.endswith("/embeddings"):
            out.extend(body["input"])
        else:
            out.append(body["query"])
            out.extend(body["documents"])
    return out


def test_no_secret_and_no_never_send_text_reaches_the_server(repo: Path, fake: FakeVoyage
                                                             ) -> None:
    bodies = json.dumps([body for _, body in fake.requests], ensure_ascii=False)
    paths = {path for path, _ in fake.requests}
    assert paths == {"/v1/embeddings", "/v1/rerank"}  # all three kinds of call happened
    assert [s for s in SECRETS if s in bodies] == []
    assert VAULT_WORD not in bodies and "secret_store" not in bodies
    for kind in ("aws-access-key", "stripe-key", "github-token", "url-password", "private-key"):
        assert f"«secret:{kind}»" in bodies, kind


def test_masked_documents_keep_the_lines_of_the_chunks(repo: Path, fake: FakeVoyage) -> None:
    with Index.open(repo) as idx:
        store = ChunkStore(idx.store.conn)
        chunks: list[Chunk] = [c.chunk for c in store.get(range(1, 1000)).values()]
    documents = [t for path, body in fake.requests if path.endswith("/embeddings")
                 and body["input_type"] == "document" for t in body["input"]]
    # a file may have several chunks (their headers all start with its path): a document is
    # one of its file's chunks with the same lines, secrets masked in place
    originals: dict[str, list[str]] = {}
    for c in chunks:
        originals.setdefault(full_view(c).splitlines()[0], []).append(full_view(c))

    def masked_copy_of(original: str, text: str) -> bool:
        if text.count("\n") != original.count("\n"):
            return False
        pairs = zip(original.splitlines(), text.splitlines(), strict=True)
        return all("«secret:" in b for a, b in pairs if a != b)

    # each chunk's declarations go with it (names.declaration_texts), but none of the
    # never-send file's
    with Index.open(repo) as idx:
        declared = {row[0] for row in idx.store.conn.execute(
            "SELECT text FROM chunk_declaration")}
    declarations = [t for t in documents if t in declared]
    assert declarations and not any("vault" in t for t in declarations)
    assert any("vault" in t for t in declared)
    documents = [t for t in documents if t not in declared]
    assert len(documents) == len(chunks) - 1  # every chunk but the never-send file's
    for text in documents:
        assert any(masked_copy_of(o, text) for o in originals[text.splitlines()[0]]), text


def test_queries_are_masked(repo: Path, fake: FakeVoyage) -> None:
    queries = [body["input"][0] for path, body in fake.requests
               if path.endswith("/embeddings") and body["input_type"] == "query"]
    assert "why is «secret:aws-access-key» rejected by billing" in queries


def test_never_send_chunks_are_withheld_yet_found_lexically(repo: Path) -> None:
    from knoxidx.retrieval.searcher import searcher_for

    with Index.open(repo) as idx:
        assert idx.status()["retrieval"]["withheld"] == 1
        assert idx.status()["retrieval"]["embedding_backlog"] == 0
        found = idx.search("vault_lookup", k=5, mode="hybrid")
        ranked = searcher_for(idx).hybrid().search("vault_lookup", 5, definition_rerank=False)
    # first before the rerank, still first after it: the reranker never saw it
    assert ranked[0].path == "app/secret_store.py"
    assert ranked[0].sources == ("lexical", "symbol", "names", "identifiers")
    assert all("rerank" in r.sources for r in ranked[1:])
    # and a client is not shown it (knoxidx.retrieval.disclosure), only told it was withheld
    assert found["withheld"] == 1
    assert [h["path"] for h in found["results"]] == [r.path for r in ranked[1:]]


def test_the_ledger_records_every_request(repo: Path, fake: FakeVoyage) -> None:
    lines = (repo / ".knoxidx" / "egress.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == len(fake.requests)
    assert sum(r["bytes"] for r in records) == sum(len(t.encode()) for t in sent_texts(fake))
    assert sum(r["texts"] for r in records) == len(sent_texts(fake))
    files = {f for r in records for f in r["files"]}
    assert files == {"app/billing.py", "app/deploy.py", "app/util.py"}
    data = json.loads(run(["egress", str(repo), "--json", "--days", "1"]))
    assert data["total"]["requests"] == len(fake.requests)
    assert data["total"]["files"] == 3
    assert data["withheld"] == {"chunks": 1, "files": ["app/secret_store.py"]}
    assert data["total"]["masked"]["aws-access-key"] >= 2  # the document and the query
    endpoints = {e["endpoint"] for e in data["days"][0]["by_endpoint"]}
    assert endpoints == {"embeddings", "rerank"}
    human = run(["egress", str(repo)])
    assert "voyage embeddings voyage-code-3" in human and "app/secret_store.py" in human


def test_status_reports_egress_over_http(repo: Path, fake: FakeVoyage) -> None:
    from starlette.testclient import TestClient

    from knoxidx.api.http import create_app

    with TestClient(create_app(repo), base_url="http://127.0.0.1") as client:
        status = client.get("/status").json()
    egress = status["egress"]
    assert egress["offline"] is False and egress["embedder"] == "voyage"
    assert egress["today"]["requests"] == len(fake.requests) == \
        egress["last_30_days"]["requests"]
    assert egress["withheld_chunks"] == 1 and egress["today"]["files"] == 3


def test_mcp_index_status_reports_egress(repo: Path, fake: FakeVoyage) -> None:
    import asyncio
    import sys

    from mcp import Client, StdioServerParameters

    server = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from knoxidx.cli import run; run()", "mcp", str(repo)],
    )

    async def status() -> dict:
        async with Client(server, read_timeout_seconds=60) as client:
            result = await client.call_tool("index_status", {})
            return json.loads(result.content[0].text)

    egress = asyncio.run(status())["egress"]
    assert egress["last_30_days"]["requests"] == len(fake.requests)
    assert egress["withheld_chunks"] == 1
