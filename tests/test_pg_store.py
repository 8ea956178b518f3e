"""The PostgreSQL store against a real PostgreSQL + pgvector (started from pip, see
``tests/pg_support.py``): the same graphs as SQLite, the writer lock per repository, whole
updates for readers, search, questions across repositories, push/pull, schema migrations,
the CLI and the HTTP API."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from knoxidx.cli import main
from knoxidx.core.errors import CorruptIndexError, IndexLockedError
from knoxidx.graph import export, pg_schema
from knoxidx.graph.pg_store import delete_repo
from knoxidx.index import Index
from tests.helpers import BILLING, BILLING_QUESTION, write_tree
from tests.helpers import run_cli as cli

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".knoxidx"))
    return dst


def _graph(idx: Index) -> tuple[list, list]:
    nodes = list(export.nodes(idx.q))
    edges = sorted(export.edges(idx.q), key=lambda e: json.dumps(e, sort_keys=True))
    return nodes, edges


@pytest.mark.parametrize("language", ["python", "typescript", "go", "rust", "java", "javascript"])
def test_same_repo_exports_identical_graphs(language: str, tmp_path: Path, pg_url: str) -> None:
    root = _copy(FIXTURES / language, tmp_path / language)
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
        local = _graph(idx)
    with Index.open(root, create=True, store=pg_url) as idx:
        idx.update(jobs=1, retrieval=False)
        shared = _graph(idx)
    assert local[0] and local[1]
    assert shared == local


def test_one_writer_per_repository(tmp_path: Path, pg_url: str) -> None:
    a = write_tree(tmp_path / "a", {"m.py": "def f():\n    pass\n"})
    b = write_tree(tmp_path / "b", {"m.py": "def g():\n    pass\n"})
    with Index.open(a, create=True, store=pg_url) as first, first.writer():
        with Index.open(a, create=True, store=pg_url) as second, pytest.raises(
                IndexLockedError, match=r"writer \(knoxidx writer a pid \d+.*'a'"):
            second.update(jobs=1, retrieval=False)
        with Index.open(b, create=True, store=pg_url) as other:  # another repo: not blocked
            assert other.update(jobs=1, retrieval=False).changed == 1
        first.update_held(jobs=1, retrieval=False)

    # --wait: the second writer goes once the first lets go
    with Index.open(a, store=pg_url) as first, Index.open(a, store=pg_url) as second, \
            first.writer():
        started = time.monotonic()

        def late_release() -> None:
            time.sleep(0.5)
            first._held_lock.release()

        threading.Thread(target=late_release).start()
        second.update(jobs=1, retrieval=False, wait=True)
        assert time.monotonic() - started >= 0.4


def test_a_released_lock_is_free_at_once(pg_url: str) -> None:
    """Regression: release only closed the lock's session, and the server lets go of a closed
    session's advisory locks after the client has moved on, so a writer's next update (the
    watcher's, a script's second `knoxidx index`) could be refused as "another writer" by its
    own departed session. Released explicitly, the lock is free when release returns."""
    from knoxidx.graph.pg_write_lock import PgWriteLock

    for _ in range(300):
        lock = PgWriteLock(pg_url, "r")
        lock.acquire()
        lock.release()


def test_killed_writer_leaves_no_lock(tmp_path: Path, pg_url: str) -> None:
    root = write_tree(tmp_path / "k", {"m.py": "def f():\n    pass\n"})
    with Index.open(root, create=True, store=pg_url) as idx:
        idx.update(jobs=1, retrieval=False)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         ("import time\nfrom knoxidx.index import Index\n"
          f"idx = Index.open({str(root)!r}, store={pg_url!r})\n"
          "ctx = idx.writer(); ctx.__enter__(); print('held', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with Index.open(root, store=pg_url) as idx, pytest.raises(IndexLockedError):
            idx.update(jobs=1, retrieval=False)
    finally:
        holder.kill()
        holder.wait()
    with Index.open(root, store=pg_url) as idx:
        idx.update(jobs=1, retrieval=False, wait=True)  # the lock died with its holder's session


def test_readers_see_whole_updates(tmp_path: Path, pg_url: str) -> None:
    base = {f"m{i}.py": f"def f{i}():\n    pass\n" for i in range(10)}
    extra = {f"x{i}.py": f"def x{i}():\n    return f{i}()\n" for i in range(10)}
    root = write_tree(tmp_path / "r", base)
    with Index.open(root, create=True, store=pg_url) as idx:
        idx.update(jobs=1, retrieval=False)
    seen: set[int] = set()
    stop = threading.Event()

    def read() -> None:
        with Index.open_shared_reader(pg_url, "r") as reader:
            while not stop.is_set():
                with reader.store.read_snapshot():
                    seen.add(sum(reader.stats()["files"].values()))

    thread = threading.Thread(target=read)
    thread.start()
    try:
        with Index.open(root, store=pg_url) as idx:
            for _ in range(3):
                write_tree(root, extra)
                idx.update(jobs=1, retrieval=False)
                for name in extra:
                    (root / name).unlink()
                idx.update(jobs=1, retrieval=False)
    finally:
        stop.set()
        thread.join()
    assert seen <= {10, 20} and 10 in seen


def test_search_lexical_and_vector(tmp_path: Path, pg_url: str) -> None:
    local = _copy(FIXTURES / "python", tmp_path / "local")
    shared = _copy(FIXTURES / "python", tmp_path / "shop")
    with Index.open(local, create=True) as idx:
        idx.update(jobs=1, embed=True)
        local_vector = idx.search("read settings from a config file", k=3, mode="vector")
    with Index.open(shared, create=True, store=pg_url) as idx:
        report = idx.update(jobs=1, embed=True)
        assert report.retrieval["pending"] == 0
        lexical = idx.search("parse config", k=3, mode="lexical")
        assert lexical["mode"] == "lexical"
        assert lexical["results"][0]["path"] == "shop/config.py"
        vector = idx.search("read settings from a config file", k=3, mode="vector")
        assert vector["mode"] == "vector", vector["note"]
        assert [r["path"] for r in vector["results"]] == \
            [r["path"] for r in local_vector["results"]]
        scores = [r["score"] for r in vector["results"]]
        local_scores = [r["score"] for r in local_vector["results"]]
        assert scores == pytest.approx(local_scores, abs=1e-4)
        # both vector sources answered, as they do in SQLite
        assert [r["sources"] for r in vector["results"]] == \
            [r["sources"] for r in local_vector["results"]]
        assert any("declarations" in r["sources"] for r in vector["results"])
        hybrid = idx.search("parse_config", k=5, language="python", path_glob="shop/*")
        assert hybrid["results"] and all(r["path"].startswith("shop/")
                                         for r in hybrid["results"])
    # the HNSW index exists and the planner uses it
    import psycopg

    with psycopg.connect(pg_url) as conn:
        for name in ("chunk_vector_hnsw_384", "chunk_declaration_hnsw_384"):
            assert conn.execute("SELECT count(*) FROM pg_indexes WHERE indexname = %s",
                                (name,)).fetchone()[0] == 1


RETRY = "def retry_with_backoff(call):\n    \"\"\"Call again after a failure.\"\"\"\n" \
    "    return call()\n"


def test_tied_results_come_in_place_order_whatever_the_history(tmp_path: Path,
                                                                pg_url: str) -> None:
    """Two copies of one function tie on every score: the first by path comes first, in a
    repository where it was written last as in one where it was written first."""
    firsts = []
    for name, batches in (("walked", [["zeta/net.py"], ["alpha/net.py"]]),
                          ("built", [["alpha/net.py", "zeta/net.py"]])):
        for paths in batches:
            write_tree(tmp_path / name, dict.fromkeys(paths, RETRY))
            with Index.open(tmp_path / name, create=True, store=pg_url) as idx:
                idx.update(jobs=1)
        with Index.open(tmp_path / name, store=pg_url) as idx:
            found = idx.search("retry after a failure", k=2, mode="lexical")["results"]
        firsts.append([(r["path"], r["score"]) for r in found])
    assert firsts[0] == firsts[1]
    assert [path for path, _ in firsts[0]] == ["alpha/net.py", "zeta/net.py"]


LEDGER = {
    "ledger/__init__.py": "",
    "ledger/api.py": "def transfer(amount):\n    return amount\n",
}
PAYMENTS = {
    "pay.py": "from ledger.api import transfer\n\n\ndef pay(n):\n    return transfer(n)\n",
    "other.py": "def transfer(x):\n    return x\n\n\ndef local():\n    return transfer(1)\n",
}


def test_callers_and_importers_across_repositories(tmp_path: Path, pg_url: str) -> None:
    for name, files in (("ledger", LEDGER), ("payments", PAYMENTS)):
        root = write_tree(tmp_path / name, files)
        with Index.open(root, create=True, store=pg_url) as idx:
            idx.update(jobs=1, retrieval=False)
    with Index.open_shared_reader(pg_url, None) as every:
        answer = every.callers("ledger.api.transfer")
        assert answer["symbol"]["repo"] == "ledger"
        assert [(c["repo"], c["path"], c["line"], c["qualified_name"])
                for c in answer["external_callers"]] == [("payments", "pay.py", 5, "pay.pay")]
        importers = every.deps("ledger/api.py", reverse=True)["external_importers"]
        assert [(i["repo"], i["path"], i["module"]) for i in importers] == \
            [("payments", "pay.py", "ledger")]  # the external module is the top package
        # a name defined in two repositories is ambiguous until a repository is chosen
        from knoxidx.core.errors import AmbiguousSymbolError

        with pytest.raises(AmbiguousSymbolError, match="transfer"):
            every.callers("transfer")
    with Index.open_shared_reader(pg_url, "payments") as one:
        assert [c["qualified_name"] for c in one.callers("transfer")["callers"]] == ["other.local"]


def test_push_then_pull_round_trip(tmp_path: Path, pg_url: str) -> None:
    ci = _copy(FIXTURES / "python", tmp_path / "ci" / "shop")
    with Index.open(ci, create=True) as idx:
        idx.update(jobs=1, embed=True)
        built = _graph(idx)
        hits = idx.search("parse config", k=3)["results"]
    runner = CliRunner()
    result = runner.invoke(main, ["push", str(ci), "--store", pg_url, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["vectors"] > 0
    with Index.open_shared_reader(pg_url, "shop") as idx:
        assert _graph(idx) == built
        # ts_rank is not BM25: the fused scores differ, the best hit and its sources do not
        found = idx.search("parse config", k=3)["results"]
        assert (found[0]["path"], found[0]["sources"]) == (hits[0]["path"], hits[0]["sources"])

    laptop = _copy(FIXTURES / "python", tmp_path / "laptop" / "shop")
    result = runner.invoke(main, ["pull", str(laptop), "--store", pg_url])
    assert result.exit_code == 0, result.output
    with Index.open(laptop) as idx:
        assert _graph(idx) == built
        assert idx.search("parse config", k=3)["results"] == hits
        # the declarations and their vectors came back as they were pushed
        declared = "SELECT id, text, text_hash, vector FROM chunk_declaration ORDER BY id"
        with Index.open(ci) as original:
            assert idx.store.conn.execute(declared).fetchall() == \
                original.store.conn.execute(declared).fetchall() != []
        # the pulled index updates incrementally like one built here
        (laptop / "shop" / "config.py").write_text("def parse_config2():\n    pass\n")
        report = idx.update(jobs=1)
        assert report.changed == 1
        from knoxidx.update.verify import verify_index

        assert verify_index(idx)["equal"]


def test_store_init_status_migrate(pg_url: str) -> None:
    runner = CliRunner()
    status = json.loads(runner.invoke(main, ["store", "status", "--store", pg_url, "--json"])
                        .output)
    assert status["schema_version"] is None
    code, _, err = cli("store", "migrate", "--store", pg_url)
    assert code == 2 and "run `knoxidx store init`" in err and err.count("\n") == 1
    conn = pg_schema.connect(pg_url)
    pg_schema.migrate(conn, target=1)  # a store made by the previous knoxidx
    conn.close()
    status = json.loads(runner.invoke(main, ["store", "status", "--store", pg_url, "--json"])
                        .output)
    assert status["schema_version"] == 1 and not status["up_to_date"]
    with pytest.raises(CorruptIndexError, match="store migrate"):
        Index.open_shared_reader(pg_url, None)
    result = runner.invoke(main, ["store", "migrate", "--store", pg_url, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["applied"] == list(range(2, pg_schema.SCHEMA_VERSION + 1))
    result = runner.invoke(main, ["store", "init", "--store", pg_url, "--json"])
    assert json.loads(result.output)["applied"] == []
    conn = pg_schema.connect(pg_url)
    assert conn.execute("SELECT count(*) FROM pg_indexes WHERE indexname ="
                        " 'unresolved_external'").fetchone()[0] == 1
    conn.close()
    Index.open_shared_reader(pg_url, None).close()


def test_cli_over_the_shared_store(tmp_path: Path, pg_url: str, monkeypatch) -> None:
    root = write_tree(tmp_path / "src" / "payments", PAYMENTS)
    runner = CliRunner()
    monkeypatch.setenv("KNOXIDX_STORE", pg_url)
    result = runner.invoke(main, ["index", str(root), "--repo", "pay", "--json"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["callers", "transfer", "--repo", "pay", "--json"])
    assert result.exit_code == 0, result.output
    assert [c["qualified_name"] for c in json.loads(result.output)["callers"]] == ["other.local"]
    result = runner.invoke(main, ["search", "transfer", "--repo", "pay", "--mode", "lexical",
                                  "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["results"]
    code, _, err = cli("stats", "--repo", "nope")
    assert code == 2 and "no repository 'nope'" in err and "known: pay" in err
    code, _, err = cli("stats", "--repo", "pay",
                       env={"KNOXIDX_STORE": "postgresql://nobody:secret@127.0.0.1:1/none"})
    assert code == 8 and "cannot connect" in err and "secret" not in err
    assert err.count("\n") == 1 and "Traceback" not in err
    code, _, err = cli("stats", "--store", "mysql://x/y")
    assert code == 2 and "unknown store" in err


def test_http_api_over_the_shared_store(tmp_path: Path, pg_url: str) -> None:
    import httpx

    from tests.agent.support import start_server

    for name, files in (("ledger", LEDGER), ("payments", PAYMENTS)):
        root = write_tree(tmp_path / name, files)
        with Index.open(root, create=True, store=pg_url) as idx:
            idx.update(jobs=1)
    proc, url = start_server(tmp_path, "--store", pg_url)
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            every = client.get("/symbols", params={"q": "transfer"}).json()["symbols"]
            assert sorted(s["repo"] for s in every) == ["ledger", "payments"]
            one = client.get("/callers", params={"symbol": "transfer", "repo": "payments"})
            assert [c["qualified_name"] for c in one.json()["callers"]] == ["other.local"]
            found = client.get("/search", params={"q": "transfer amount", "mode": "lexical"})
            assert {r["repo"] for r in found.json()["results"]} == {"ledger", "payments"}
            missing = client.get("/status", params={"repo": "nope"})
            assert missing.status_code == 503 and "no repository" in missing.json()["error"][
                "message"]
    finally:
        assert proc.stop() == 0


@pytest.mark.heavy
def test_least_privilege_roles(tmp_path: Path, pg_url: str) -> None:
    """The README's roles: an owner migrates, a writer indexes, the API's role only reads."""
    import psycopg

    def as_role(role: str) -> str:
        return pg_url.replace("postgres:@", f"{role}:@", 1)

    with psycopg.connect(pg_url, autocommit=True) as admin:
        for role in ("kx_owner", "kx_writer", "kx_reader"):
            admin.execute(f"DO $$ BEGIN CREATE ROLE {role} LOGIN; EXCEPTION WHEN "
                          "duplicate_object THEN NULL; END $$")
        admin.execute("CREATE EXTENSION vector")
        admin.execute("CREATE SCHEMA knoxidx AUTHORIZATION kx_owner")
    code, _, err = cli("store", "init", "--store", as_role("kx_owner"))
    assert code == 0, err
    with psycopg.connect(as_role("kx_owner"), autocommit=True) as owner:
        owner.execute("GRANT USAGE ON SCHEMA knoxidx TO kx_writer, kx_reader")
        owner.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA knoxidx"
                      " TO kx_writer")
        owner.execute("GRANT USAGE ON ALL SEQUENCES IN SCHEMA knoxidx TO kx_writer")
        owner.execute("GRANT SELECT ON ALL TABLES IN SCHEMA knoxidx TO kx_reader")
    root = write_tree(tmp_path / "payments", PAYMENTS)
    code, _, err = cli("index", str(root), "--store", as_role("kx_writer"), "--embed")
    assert code == 0, err
    code, out, err = cli("callers", "transfer", "--store", as_role("kx_reader"),
                         "--repo", "payments", "--json")
    assert code == 0, err
    assert [c["qualified_name"] for c in json.loads(out)["callers"]] == ["other.local"]
    code, out, err = cli("search", "transfer", "--store", as_role("kx_reader"),
                         "--repo", "payments", "--mode", "vector", "--json")
    assert code == 0 and json.loads(out)["mode"] == "vector", err
    (root / "pay.py").write_text("def pay():\n    pass\n")
    code, _, err = cli("index", str(root), "--store", as_role("kx_reader"))
    assert code == 8 and "refused" in err and "permission denied" in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_rebuild_replaces_the_repository_in_one_transaction(tmp_path: Path, pg_url: str) -> None:
    root = write_tree(tmp_path / "r", {"a.py": "def f():\n    return g()\n\n\ndef g():\n    pass\n"})
    with Index.open(root, create=True, store=pg_url) as idx:
        idx.update(jobs=1, retrieval=False)
        before = _graph(idx)
        with Index.open_shared_reader(pg_url, "r") as reader:
            idx.store.reset()  # pending until the update's transaction
            assert reader.callers("f")["symbol"]["name"] == "f"
            report = idx.update(jobs=1, retrieval=False)
            assert report.added == 1 and report.full_resolve
        assert _graph(idx) == before


def test_mcp_over_the_shared_store(tmp_path: Path, pg_url: str) -> None:
    import asyncio

    from mcp import Client, StdioServerParameters

    root = write_tree(tmp_path / "payments", PAYMENTS)
    with Index.open(root, create=True, store=pg_url) as idx:
        idx.update(jobs=1, retrieval=False)
        expected = json.loads(json.dumps(idx.callers("transfer")))
    server = StdioServerParameters(command=sys.executable, args=[
        "-c", "from knoxidx.cli import run; run()", "mcp", "--store", pg_url, "--repo", "payments"])

    async def session() -> None:
        async with Client(server, read_timeout_seconds=60) as client:
            result = await client.call_tool("get_callers", {"symbol": "transfer"})
            assert not result.is_error
            assert json.loads(result.content[0].text) == expected

    asyncio.run(session())


@pytest.mark.heavy
def test_watcher_writes_into_the_shared_store(tmp_path: Path, pg_url: str) -> None:
    from knoxidx.watch import Watcher
    from tests.agent.support import wait_for

    root = write_tree(tmp_path / "payments", PAYMENTS)
    watcher = Watcher(root, debounce_ms=100, jobs=1, reconcile_s=0, store=pg_url)
    watcher.start()
    try:
        wait_for(lambda: watcher.snapshot()["phase"] == "idle", what="the initial update")
        with open(root / "other.py", "a", encoding="utf-8") as handle:
            handle.write("\n\ndef refund(n):\n    return transfer(-n)\n")

        def callers() -> list[str]:
            with Index.open_shared_reader(pg_url, "payments") as idx:
                return [c["qualified_name"] for c in idx.callers("other.transfer")["callers"]]

        wait_for(lambda: "other.refund" in callers() or None, timeout=30, what="the new caller")
        with Index.open(root, store=pg_url) as idx, pytest.raises(IndexLockedError):
            idx.update(jobs=1)  # the watcher holds the repository's writer lock
    finally:
        watcher.stop()


def test_shared_reader_reads_source_where_the_repository_was_indexed(tmp_path: Path,
                                                                     pg_url: str) -> None:
    root = write_tree(tmp_path / "payments", PAYMENTS)
    with Index.open(root, create=True, store=pg_url) as idx:
        idx.update(jobs=1, retrieval=False)
    with Index.open_shared_reader(pg_url, "payments", tmp_path / "elsewhere") as idx:
        assert idx.root == root.resolve()
        assert "def pay" in idx.read_source("pay.py")["text"]


def test_reader_pool_reconnects_after_the_server_drops_it(tmp_path: Path, pg_url: str) -> None:
    import psycopg

    from knoxidx.api.readers import ReaderPool

    root = write_tree(tmp_path / "payments", PAYMENTS)
    with Index.open(root, create=True, store=pg_url) as idx:
        idx.update(jobs=1, retrieval=False)
    pool = ReaderPool(tmp_path, workers=1, store_url=pg_url, repo="payments")
    try:
        assert pool.call(lambda idx: len(idx.symbols("transfer"))) == 1
        with psycopg.connect(pg_url, autocommit=True) as admin:  # a failover, a restart
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE"
                          " application_name LIKE 'knoxidx reader%' AND pid <> pg_backend_pid()")
        with pytest.raises(psycopg.OperationalError):
            pool.call(lambda idx: idx.symbols("transfer"))
        assert pool.call(lambda idx: len(idx.symbols("transfer"))) == 1
    finally:
        pool.close()


def test_withheld_chunks_of_never_send_files(tmp_path: Path, pg_url: str) -> None:
    """The egress gate's bookkeeping on the shared store: withheld chunks leave the pending
    list, are reported per file, and go back to pending when the patterns allow them."""
    from knoxidx.retrieval.stores import chunk_store_for

    root = _copy(FIXTURES / "python", tmp_path / "py")
    with Index.open(root, create=True, store=pg_url) as idx:
        idx.update(jobs=1)
        chunks = chunk_store_for(idx.store)
        before = chunks.pending_count()
        ids = chunks.pending(3)
        paths = sorted({row.chunk.path for row in chunks.get(ids).values()})
        with chunks.transaction():
            chunks.withhold(ids)
        assert chunks.pending_count() == before - 3
        assert chunks.withheld() == (3, paths)
        with chunks.transaction():
            assert chunks.release_withheld(lambda path: True) == 3
        assert chunks.pending_count() == before and chunks.withheld() == (0, [])
        with chunks.transaction():
            chunks.withhold(ids)
        # deleting the repository takes its withheld chunks too (they were left behind)
        delete_repo(idx.store.conn, "py")
        assert idx.store.conn.execute("SELECT count(*) FROM knoxidx.embed_withheld"
                                      " WHERE repo = 'py'").fetchone()[0] == 0


def test_a_name_prefix_query_seeks_the_lowered_name_index(tmp_path: Path, pg_url: str) -> None:
    root = write_tree(tmp_path / "r", {"a.py": "def ParseConfig():\n    pass\n"
                                               "def parse_other():\n    pass\n"})
    with Index.open(root, create=True, store=pg_url) as idx:
        idx.update(jobs=1)
        assert [h["name"] for h in idx.q.nodes_like("parsec%")] == ["ParseConfig"]
        assert {h["name"] for h in idx.q.nodes_like("PARSE%")} == {"ParseConfig", "parse_other"}
    conn = pg_schema.connect(pg_url)
    conn.execute("SET enable_seqscan = off")  # a tiny table: ask whether the index can serve
    plan = "\n".join(r[0] for r in conn.execute(
        "EXPLAIN SELECT name FROM knoxidx.nodes WHERE lower(name) LIKE lower(%s)", ("parsec%",)))
    conn.close()
    assert "nodes_name_lower" in plan, plan


def test_the_names_source_in_the_shared_store(tmp_path: Path, pg_url: str) -> None:
    local = write_tree(tmp_path / "local", BILLING)
    shared = write_tree(tmp_path / "bill", BILLING)
    with Index.open(local, create=True) as idx:
        idx.update(jobs=1)
        expected = idx.search(BILLING_QUESTION, k=3, mode="lexical")["results"]
        written = idx.store.conn.execute("SELECT count(*) FROM chunk_name").fetchone()[0]
    assert "names" in expected[0]["sources"]
    with Index.open(shared, create=True, store=pg_url) as idx:
        idx.update(jobs=1)
        found = idx.search(BILLING_QUESTION, k=3, mode="lexical")["results"]
        assert [(r["path"], r["symbol"], r["sources"]) for r in found[:1]] == \
            [(r["path"], r["symbol"], r["sources"]) for r in expected[:1]]
        # what the store keeps by name follows the chunks
        (shared / "billing/amounts.py").unlink()
        idx.update(jobs=1)
        assert idx.search(BILLING_QUESTION, k=3, mode="lexical")["results"][0]["path"] != \
            "billing/amounts.py"
    import psycopg

    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT count(*) FROM knoxidx.chunk_name WHERE repo = 'bill'")
        assert rows.fetchone()[0] == written - 1
        delete_repo(conn, "bill")
        for table in ("chunk_name", "embed_withheld", "chunk"):
            count = conn.execute(f"SELECT count(*) FROM knoxidx.{table} WHERE repo = 'bill'")
            assert count.fetchone()[0] == 0, table


def test_the_declarations_source_in_the_shared_store(tmp_path: Path, pg_url: str) -> None:
    import psycopg

    shared = write_tree(tmp_path / "dates", BILLING)
    count = "SELECT count(*), count(embedding) FROM knoxidx.chunk_declaration WHERE repo = 'dates'"
    with Index.open(shared, create=True, store=pg_url) as idx:
        idx.update(jobs=1, embed=True)
        with psycopg.connect(pg_url) as conn:
            declared, embedded = conn.execute(count).fetchone()
        assert declared == embedded > 0
        found = idx.search(BILLING_QUESTION, k=3, mode="vector")["results"]
        assert any("declarations" in r["sources"] for r in found)
        # the rerank's per-declaration cosines, from the server: each declaration's text in
        # order, with its stored vector's cosine (checked here against the vector read back)
        import numpy as np

        from knoxidx.retrieval.stores import chunk_store_for

        store = chunk_store_for(idx.store)
        chunk_ids = sorted({i for r in found for i in store.chunks_at(r["path"], r["start_line"])})
        query = np.random.default_rng(3).normal(size=384).astype(np.float32)
        cosines = store.declaration_cosines(query, chunk_ids)
        texts = store.declarations(chunk_ids)
        assert cosines and {i: [t for t, _ in rows] for i, rows in cosines.items()} == {
            i: [t for _, t in rows] for i, rows in texts.items()}
        with psycopg.connect(pg_url) as conn:
            chunk_id, n, vector = conn.execute(
                "SELECT chunk_id, n, embedding::text FROM knoxidx.chunk_declaration"
                " WHERE chunk_id = ANY(%s) ORDER BY chunk_id, n LIMIT 1",
                (chunk_ids,)).fetchone()
        stored = np.array(json.loads(vector), dtype=np.float32)
        expected = stored @ query / np.linalg.norm(stored) / np.linalg.norm(query)
        assert cosines[chunk_id][n][1] == pytest.approx(float(expected), abs=1e-4)
        assert idx.search(BILLING_QUESTION, k=3, mode="hybrid")["results"]
        # as a store written by the previous chunker was: no declarations; the next update
        # writes them for the kept chunks and embeds them (from the shared cache)
        with psycopg.connect(pg_url) as conn:
            conn.execute("DELETE FROM knoxidx.chunk_declaration WHERE repo = 'dates'")
            conn.execute("UPDATE knoxidx.embed_meta SET value = 'old'"
                         " WHERE repo = 'dates' AND key = 'chunker'")
        report = idx.update(jobs=1, embed=True)
        assert report.retrieval["added"] == 0 and report.retrieval["pending"] == 0
        assert report.retrieval["embedded"] == 0
        with psycopg.connect(pg_url) as conn:
            assert conn.execute(count).fetchone() == (declared, embedded)
        # deleted with their chunks
        (shared / "billing/amounts.py").unlink()
        idx.update(jobs=1)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute(count).fetchone()[0] < declared


def test_changes_goto_and_map_answer_as_over_sqlite(tmp_path: Path, pg_url: str) -> None:
    """The answers read off the facts, the history tables and the centrality are the same
    whichever store holds the graph."""
    from tests.history.gitrepo import Repo

    repo = Repo(tmp_path / "changes")
    base = {"app.py": "def helper(x):\n    return x\n\n\ndef gone():\n    return 1\n",
            "use.py": "from app import helper, gone\n\n\ndef run():\n    return helper(1) + gone()\n"}
    repo.commit("start", base)
    (repo.root / "app.py").write_text("def helper(x):\n    return x * 2\n", encoding="utf-8")
    answers = []
    for store in (None, pg_url):
        with Index.open(repo.root, create=True, store=store) as idx:
            idx.update(jobs=1, retrieval=store is None)
            answers.append((idx.changes(), idx.goto("use.py:5"), idx.repo_map(200)["text"]))
    (local_changes, local_goto, local_map), (shared_changes, shared_goto, shared_map) = answers
    assert {c["qualified_name"]: c["change"] for c in local_changes["changed"]
            + local_changes["removed"]} == {"app.helper": "modified", "app.gone": "removed"}
    assert [h["qualified_name"] for h in local_changes["impacted"]] == ["use.run"]
    for key in ("changed", "removed", "impacted", "files", "tests"):
        assert shared_changes[key] == local_changes[key]
    assert shared_goto == local_goto and shared_map == local_map
