"""Egress policy, ledger and settings: never-send patterns, the gate, concurrent ledger writers,
torn lines, reports by day, knoxidx.toml, and offline selection of the embedder."""

from __future__ import annotations

import json
import logging
import multiprocessing
from collections import Counter
from pathlib import Path

import pytest

from knoxidx.core.config import ConfigError, load_settings
from knoxidx.retrieval import backends
from knoxidx.retrieval.backends import LocalEmbedder, select_embedder, select_reranker
from knoxidx.retrieval.egress import (
    DEFAULT_NEVER_SEND,
    Egress,
    EgressBlockedError,
    EgressPolicy,
    egress_for,
)
from knoxidx.retrieval.errors import EmbeddingConfigError, ServiceError
from knoxidx.retrieval.ledger import EgressLedger

# ---- never-send ------------------------------------------------------------------------------

REFUSED = [
    ".env", ".env.production", "config/.env.local", "deploy/prod.env", "certs/server.pem",
    "keys/signing.key", "id_rsa", "home/.ssh/id_ed25519.pub", "app/secrets.py",
    "src/AppSecrets.java", "lib/client_secret_loader.go", "secrets/db.py", "credentials.json",
    "ops/.aws/credentials", ".npmrc", "web/.netrc", "store/cert.p12", "infra/terraform.tfstate",
]
ALLOWED = [
    "app/main.py", "src/keyboard.ts", "lib/keys.rs", "api/tokens.py", "pem_parser.go",
    "docs/environment.md", "src/auth/login.java",
]


def test_default_never_send_patterns() -> None:
    policy = EgressPolicy()
    assert [p for p in REFUSED if policy.allows(p)] == []
    assert [p for p in ALLOWED if not policy.allows(p)] == []


def test_patterns_extend_the_defaults_and_negation_re_allows() -> None:
    policy = EgressPolicy((*DEFAULT_NEVER_SEND, "internal/**", "*.sql", "!app/secret_santa.py"))
    assert not policy.allows("internal/billing/rates.py")
    assert not policy.allows("db/schema.sql")
    assert not policy.allows("app/secrets.py")  # a default still applies
    assert policy.allows("app/secret_santa.py")
    assert policy.allows("app/main.py")


def test_the_gate_refuses_never_send_files_and_masks_the_rest() -> None:
    gate = Egress(EgressPolicy())
    key = "AKIA" + "Q3EGRTV7XK2PLM4N"
    out = gate.outgoing([f'KEY = "{key}"\n', "query text"], ["app/config.py", ""])
    assert out.texts == ['KEY = "«secret:aws-access-key»"\n', "query text"]
    assert out.masked == Counter({"aws-access-key": 1})
    with pytest.raises(EgressBlockedError, match="app/secrets.py"):
        gate.outgoing(["x = 1"], ["app/secrets.py"])
    unmasked = Egress(EgressPolicy(mask_secrets=False)).outgoing([f'KEY = "{key}"'])
    assert unmasked.texts == [f'KEY = "{key}"']


# ---- the ledger ------------------------------------------------------------------------------


def _append_many(path: str, writer: int, count: int) -> None:
    ledger = EgressLedger(Path(path))
    for i in range(count):
        ledger.append(service="voyage", endpoint="embeddings", model="m", texts=2, chunks=2,
                      bytes=100 + writer, files=[f"w{writer}/f{i % 5}.py"], masked={})


def test_concurrent_writers_lose_and_tear_nothing(tmp_path: Path) -> None:
    path = tmp_path / "egress.jsonl"
    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=_append_many, args=(str(path), w, 150)) for w in range(8)]
    for p in workers:
        p.start()
    _append_many(str(path), 99, 150)  # and this process at the same time
    for p in workers:
        p.join(60)
        assert p.exitcode == 0
    lines = path.read_bytes().splitlines()
    records = [json.loads(line) for line in lines]  # every line is a whole record
    assert len(records) == 9 * 150
    assert Counter(r["bytes"] for r in records) == {100 + w: 150 for w in (*range(8), 99)}
    summary = EgressLedger(path).summary(1)
    assert summary["total"]["requests"] == 1350 and summary["total"]["chunks"] == 2700
    assert summary["total"]["files"] == 45 and summary["unreadable_lines"] == 0


def test_a_line_torn_by_a_crash_is_skipped_and_the_next_record_survives(tmp_path: Path) -> None:
    path = tmp_path / "egress.jsonl"
    ledger = EgressLedger(path)
    ledger.append(service="voyage", endpoint="embeddings", model="m", texts=1, chunks=1,
                  bytes=10, files=["a.py"], masked={})
    with open(path, "ab") as handle:
        handle.write(b'{"ts":"2026-')  # the process died mid-write
    ledger.append(service="voyage", endpoint="rerank", model="r", texts=3, chunks=2,
                  bytes=30, files=["b.py"], masked={"jwt": 1})
    summary = ledger.summary(1)
    assert summary["unreadable_lines"] == 1
    assert summary["total"]["requests"] == 2 and summary["total"]["bytes"] == 40
    assert summary["total"]["masked"] == {"jwt": 1}


def test_summary_by_day_window_and_incremental_reads(tmp_path: Path) -> None:
    clock = [1_764_460_800.0]  # 2025-11-30 00:00 UTC
    ledger = EgressLedger(tmp_path / "egress.jsonl", clock=lambda: clock[0])

    def send(files: list[str], chunks: int = 1) -> None:
        ledger.append(service="voyage", endpoint="embeddings", model="voyage-code-3",
                      texts=chunks, chunks=chunks, bytes=chunks * 100, files=files, masked={})

    send(["a.py", "b.py"], 2)
    clock[0] += 86_400 * 2  # two days later
    send(["a.py"])
    send(["c.py"], 3)
    today = "2025-12-02"
    one_day = ledger.summary(1, today=today)
    assert [d["day"] for d in one_day["days"]] == ["2025-12-02"]
    assert one_day["total"] == {"requests": 2, "texts": 4, "chunks": 4, "bytes": 400,
                                "files": 2, "masked": {}}
    week = ledger.summary(7, today=today)
    assert [d["day"] for d in week["days"]] == ["2025-12-02", "2025-11-30"]
    assert week["total"]["files"] == 3 and week["total"]["requests"] == 3
    send(["d.py"])  # appended after the reads above: picked up by the next one
    assert ledger.summary(7, today=today)["total"]["files"] == 4


def test_an_unwritable_ledger_stops_the_request(tmp_path: Path) -> None:
    (tmp_path / "egress.jsonl").mkdir()  # cannot be opened for appending, even by root
    gate = egress_for(tmp_path)
    out = gate.outgoing(["text"])
    with pytest.raises(ServiceError, match="nothing was sent") as info:
        gate.record("voyage", "embeddings", "m", out, chunks=1)
    assert info.value.retryable is False


# ---- settings --------------------------------------------------------------------------------


def write_config(root: Path, text: str, name: str = "knoxidx.toml") -> Path:
    (root / name).write_text(text, encoding="utf-8")
    return root


def test_settings_from_file_and_environment(tmp_path: Path) -> None:
    user = write_config(tmp_path, """
embedder = "voyage"
[voyage]
model = "voyage-code-3"
dimension = 512
base_url = "http://127.0.0.1:9/v1"
[egress]
never_send = ["internal/**"]
mask_secrets = false
""", "user.toml") / "user.toml"
    s = load_settings(tmp_path, env={"KNOXIDX_CONFIG": str(user)})
    assert (s.embedder, s.voyage_dimension, s.offline, s.mask_secrets) == ("voyage", 512, False,
                                                                           False)
    assert s.never_send == ("internal/**",)
    assert s.embedder_config()["voyage_base_url"] == "http://127.0.0.1:9/v1"
    env = {"KNOXIDX_CONFIG": str(user), "KNOXIDX_EMBEDDER": "local",
           "KNOXIDX_NEVER_SEND": "*.sql, fixtures/**"}
    s = load_settings(tmp_path, env=env)
    assert s.embedder == "local" and s.never_send == ("internal/**", "*.sql", "fixtures/**")


def test_offline_is_on_if_any_source_says_so(tmp_path: Path) -> None:
    assert load_settings(tmp_path, env={}).offline is False
    assert load_settings(tmp_path, env={"KNOXIDX_OFFLINE": "1"}).offline is True
    write_config(tmp_path, "offline = true\n", ".knoxidx.toml")
    s = load_settings(tmp_path, env={"KNOXIDX_OFFLINE": "0"})
    assert s.offline is True and s.offline_because == ".knoxidx.toml"


@pytest.mark.parametrize(("text", "message"), [
    ("embeder = 'voyage'\n", "unknown setting 'embeder'"),
    ("[egress]\nnever-send = ['x']\n", "unknown setting 'egress.never-send'"),
    ("[voyage]\napi_key = 'pa-123'\n", "put API keys in the environment"),
    ("offline = 'yes'\n", "offline must be a bool"),
    ("[voyage]\ndimension = 300\n", "dimension must be one of 256, 512, 1024, 2048"),
    ("[egress]\nnever_send = '*.sql'\n", "never_send must be a list"),
    ("embedder = \n", "not valid TOML"),
])
def test_bad_settings_are_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    write_config(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as info:
        load_settings(tmp_path, env={})
    assert "\n" not in str(info.value) and str(tmp_path / "knoxidx.toml") in str(info.value)


# ---- offline selection -----------------------------------------------------------------------


def test_offline_selects_the_local_embedder_and_no_reranker_and_says_so_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(backends, "_offline_noted", [])
    env = {"KNOXIDX_EMBEDDER": "voyage", "VOYAGE_API_KEY": "k", "KNOXIDX_OFFLINE": "1"}
    with caplog.at_level(logging.WARNING):
        assert isinstance(select_embedder(env=env), LocalEmbedder)
        assert isinstance(select_embedder({"embedder": "voyage", "offline": True},
                                          env={"VOYAGE_API_KEY": "k"}), LocalEmbedder)
        assert select_reranker(env=env) is None
    notes = [r.getMessage() for r in caplog.records if "offline" in r.getMessage()]
    assert notes == [backends.OFFLINE_NOTE]


def test_the_voyage_client_refuses_to_exist_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("voyageai")
    from knoxidx.retrieval.voyage import VoyageEmbedder, VoyageReranker

    monkeypatch.setenv("KNOXIDX_OFFLINE", "1")
    with pytest.raises(EmbeddingConfigError, match="offline"):
        VoyageEmbedder(api_key="k")
    with pytest.raises(EmbeddingConfigError, match="offline"):
        VoyageReranker(api_key="k")


# ---- rerank: never-send chunks stay out of the request and keep their place -----------------


def test_reranker_never_sees_never_send_chunks_which_keep_their_rank(store) -> None:
    from knoxidx.retrieval.chunker import chunk_file
    from knoxidx.retrieval.hybrid_search import HybridSearch
    from knoxidx.retrieval.sources import SymbolHit
    from knoxidx.update.embedding_refresh import update_file

    order = ["a.py", "app/secrets.py", "b.py", "c.py"]
    for path in order:
        source = f"def f_{path[-4]}():\n    return '{path}'\n".encode()
        update_file(store, path, chunk_file(path, source, "python", []))

    class Reverse:
        def __init__(self) -> None:
            self.egress = Egress()
            self.seen: list[list[str]] = []

        def rerank(self, query, documents, top_k, paths=None):
            self.seen.append(list(paths))
            assert not any("secrets" in d for d in documents)
            return [(i, float(i)) for i in reversed(range(len(documents)))]

    def symbols(query: str, limit: int) -> list[SymbolHit]:
        return [SymbolHit(path, 1, "f", "Function") for path in order]

    reranker = Reverse()
    results = HybridSearch(store, symbol_source=symbols, reranker=reranker).search("zzqq", k=4)
    assert reranker.seen == [["a.py", "b.py", "c.py"]]
    assert [r.path for r in results] == ["c.py", "app/secrets.py", "b.py", "a.py"]
    assert [("rerank" in r.sources) for r in results] == [True, False, True, True]


def test_an_unreadable_ledger_is_a_clear_error_and_status_still_answers(tmp_path: Path) -> None:
    from knoxidx.index import Index
    from knoxidx.retrieval.ledger import LedgerUnreadableError
    from tests.helpers import build, write_tree

    root = write_tree(tmp_path, {"app.py": "def f():\n    return 1\n"})
    build(root)
    (root / ".knoxidx" / "egress.jsonl").mkdir()  # unreadable as a file, even by root
    with Index.open(root) as idx:
        with pytest.raises(LedgerUnreadableError, match="cannot read the egress ledger"):
            idx.egress()
        assert "cannot read the egress ledger" in idx.status()["egress"]["error"]
