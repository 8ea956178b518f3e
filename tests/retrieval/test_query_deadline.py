"""A Voyage endpoint that hangs must not hold up a question: search and context give up on it
within a deadline of seconds, across every retry, and answer from the local sources with a
note saying so. Against a real socket on 127.0.0.1 that accepts and never answers."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_voyage import FakeVoyage, HangingServer

from knoxidx.cli import main
from knoxidx.retrieval.errors import RetriesExhaustedError, RetrievalError
from knoxidx.retrieval.resilience import Resilient, RetryPolicy
from tests.helpers import run_cli, write_tree

pytest.importorskip("voyageai")

GENEROUS = 30.0  # seconds: far above a few seconds' deadline, far below 5 retries x 30 s
FILES = {
    "app/__init__.py": "",
    "app/billing.py": '''\
        def charge_customer(customer, amount):
            """Charge the customer's card for the amount due."""
            return customer.card.charge(amount)
        ''',
    "app/report.py": '''\
        def monthly_report(invoices):
            """Sum the invoices of a month into a report."""
            return sum(i.total for i in invoices)
        ''',
}


@pytest.fixture
def hanging() -> Iterator[HangingServer]:
    server = HangingServer()
    yield server
    server.close()


@pytest.fixture
def embedded(tmp_path: Path, fake: FakeVoyage, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository embedded with Voyage (the fake), its user settings then pointed at
    ``user.toml``'s next contents."""
    root = write_tree(tmp_path / "repo", FILES)
    user = tmp_path / "user.toml"
    user.write_text(f'embedder = "voyage"\n[voyage]\nbase_url = "{fake.base_url}"\n')
    monkeypatch.setenv("KNOXIDX_CONFIG", str(user))
    monkeypatch.setenv("VOYAGE_API_KEY", "pa-test-key")
    monkeypatch.delenv("KNOXIDX_EMBEDDER", raising=False)
    monkeypatch.delenv("KNOXIDX_OFFLINE", raising=False)
    result = CliRunner().invoke(main, ["index", "--embed", "--jobs", "1", str(root)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return root


def point_at(root: Path, url: str) -> None:
    (root.parent / "user.toml").write_text(f'embedder = "voyage"\n[voyage]\nbase_url = "{url}"\n')


def test_the_deadline_bounds_every_attempt_and_wait_together() -> None:
    """Attempts that each fail fast stop once the next wait would pass the deadline."""
    now = [0.0]
    attempts: list[float] = []

    def failing() -> None:
        from knoxidx.retrieval.errors import ServiceError

        attempts.append(now[0])
        now[0] += 0.4
        raise ServiceError("Voyage answered HTTP 503", retryable=True, status=503)

    def sleep(seconds: float) -> None:
        now[0] += seconds

    resilient = Resilient(RetryPolicy(max_attempts=10, base_delay=0.5, jitter=0.0, deadline=2.0),
                          sleep=sleep, clock=lambda: now[0])
    with pytest.raises(RetriesExhaustedError, match="2 s deadline"):
        resilient.call(failing, "Voyage embedding")
    assert attempts == [0.0, 0.9]  # 0.4 + 0.5, then 0.4 + 1.0 would pass 2 s
    assert now[0] <= 2.0


def test_a_query_embedder_gives_up_on_a_hanging_endpoint(hanging: HangingServer) -> None:
    from knoxidx.retrieval.backends import select_embedder

    embedder = select_embedder(
        {"embedder": "voyage", "voyage_base_url": hanging.base_url, "query_deadline": 1.0},
        env={"VOYAGE_API_KEY": "k"}, interactive=True)
    started = time.monotonic()
    with pytest.raises(RetrievalError, match="deadline"):
        embedder.embed_query("where are customers charged")
    assert time.monotonic() - started < GENEROUS
    assert len(hanging.connections) >= 1  # it was really asked


@pytest.mark.heavy
def test_cli_search_and_context_fall_back_at_once(embedded: Path, hanging: HangingServer,
                                                  fake: FakeVoyage) -> None:
    point_at(embedded, hanging.base_url)
    env = {"KNOXIDX_QUERY_DEADLINE": "1"}
    # subprocesses: a search that waits out every retry fails on the timeout, not hangs the run
    code, out, err = run_cli("search", "charge the customer card", str(embedded), "--json",
                             env=env, timeout=GENEROUS * 2)
    assert code == 0, err
    found = json.loads(out)
    assert found["results"][0]["path"] == "app/billing.py"
    assert found["mode"] == "hybrid" and "vector" not in found["results"][0]["sources"]
    assert "vector search failed" in found["note"] and "deadline" in found["note"]
    assert "rerank" in found["note"]  # the same service is not asked a second time
    code, out, err = run_cli("context", "charge the customer card", str(embedded), "--json",
                             "--max-tokens", "300", env=env, timeout=GENEROUS * 2)
    assert code == 0, err
    context = json.loads(out)
    assert "vector search failed" in json.dumps(context)
    assert len(hanging.connections) >= 2


def test_http_search_falls_back_at_once(embedded: Path, hanging: HangingServer,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from starlette.testclient import TestClient

    from knoxidx.api.http import create_app

    point_at(embedded, hanging.base_url)
    monkeypatch.setenv("KNOXIDX_QUERY_DEADLINE", "1")
    started = time.monotonic()
    with TestClient(create_app(embedded), base_url="http://127.0.0.1") as client:
        found = client.get("/search", params={"q": "monthly invoices report"}).json()
        vector = client.get("/search", params={"q": "monthly invoices report",
                                               "mode": "vector"}).json()
    assert time.monotonic() - started < GENEROUS
    assert found["results"][0]["path"] == "app/report.py"
    assert "vector search failed" in found["note"] and "rerank skipped" in found["note"]
    assert vector["mode"] == "lexical" and vector["results"][0]["path"] == "app/report.py"
    assert "vector search failed" in vector["note"]


def test_a_bad_deadline_is_a_clear_error(embedded: Path) -> None:
    code, _, err = run_cli("search", "charge", str(embedded), env={"KNOXIDX_QUERY_DEADLINE": "0"})
    assert code == 2 and "KNOXIDX_QUERY_DEADLINE" in err and "Traceback" not in err
