"""Embedding is part of indexing: `knoxidx index` embeds with the local model by default (after
the graph and lexical search are saved), `--no-embed`, `--graph-only` and $KNOXIDX_EMBED=0 skip
it, offline with Voyage configured skips it and says so, a kill keeps every committed batch
and the next run goes on, search says how much it covers, and a watcher embeds in its spare
time without holding back a change. The real local model throughout."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from knoxidx.cli import main
from knoxidx.cli.embed import ProgressLines
from knoxidx.graph.sqlite_schema import DB_NAME, INDEX_DIR
from knoxidx.update import background_embed as background
from tests.agent.support import wait_for


def _module(i: int) -> str:
    return (
        f'"""Helpers of part {i}."""\n\n\n'
        f"def checksum_part_{i}(values: list[int]) -> int:\n"
        f'    """Add the values of part {i} modulo a prime, to spot a corrupted download."""\n'
        f"    total = 0\n    for value in values:\n        total = (total + value * {i + 3}) % 65521\n"
        f"    return total\n\n\n"
        f"class Part{i}Reader:\n"
        f'    """Reads the records of part {i} from a stream, one per line."""\n\n'
        f"    def __init__(self, stream):\n        self.stream = stream\n\n"
        f"    def records(self):\n        for line in self.stream:\n"
        f"            yield line.strip().split(',')\n"
    )


@pytest.fixture
def small_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    for i in range(3):
        (root / "pkg" / f"part{i}.py").write_text(_module(i), encoding="utf-8")
    return root


def _repo_of(tmp_path: Path, files: int) -> Path:
    root = tmp_path / "big"
    (root / "pkg").mkdir(parents=True)
    for i in range(files):
        (root / "pkg" / f"part{i}.py").write_text(_module(i), encoding="utf-8")
    return root


@pytest.fixture
def embedding_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a user has: no $KNOXIDX_EMBED (tests/conftest.py sets it to 0 for the others)."""
    monkeypatch.delenv("KNOXIDX_EMBED", raising=False)


def _counts(root: Path) -> tuple[int, int, int]:
    """(chunks, vectors, pending) as stored."""
    conn = sqlite3.connect(root / INDEX_DIR / DB_NAME)
    try:
        return tuple(conn.execute(  # type: ignore[return-value]
            "SELECT (SELECT count(*) FROM chunk), (SELECT count(*) FROM chunk_vector), "
            "(SELECT count(*) FROM embed_pending)").fetchone())
    finally:
        conn.close()


def _index(*args: str) -> Any:
    result = CliRunner().invoke(main, ["index", "--jobs", "1", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_index_embeds_by_default(small_repo: Path, embedding_on: None,
                                 local_embedder: Any) -> None:
    human = _index(str(small_repo)).output.splitlines()
    # the graph and lexical search are reported (and usable) before the embedding's line
    assert human[0].startswith("indexed ") and human[1].startswith("search: ")
    assert "to embed," in human[1] and "knoxidx embed" not in human[1]
    assert any(line.startswith("embedded ") and "0 pending" in line for line in human[2:])
    chunks, vectors, pending = _counts(small_repo)
    assert chunks >= 3 and vectors == chunks and pending == 0
    answer = CliRunner().invoke(main, ["search", "spot a corrupted download", str(small_repo),
                                       "--json"])
    data = json.loads(answer.output)
    assert data["mode"] == "hybrid" and data["note"] == "" and data["pending_embeddings"] == 0
    assert any("vector" in r["sources"] for r in data["results"])
    # nothing new: no model call, and the answer says so
    again = json.loads(_index("--json", str(small_repo)).output)["retrieval"]
    assert again["pending"] == 0 and again["embedded"] == 0 and "embed" not in again["timings"]


@pytest.mark.parametrize("how", ["--no-embed", "--graph-only", "KNOXIDX_EMBED=0"])
def test_skipping_the_embedding(small_repo: Path, embedding_on: None,
                                monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    if how.startswith("KNOXIDX_EMBED"):
        monkeypatch.setenv("KNOXIDX_EMBED", "0")
        data = json.loads(_index("--json", str(small_repo)).output)
    else:
        data = json.loads(_index(how, "--json", str(small_repo)).output)
    if how == "--graph-only":
        assert not data["retrieval"]  # no chunks: nothing to embed
        return
    chunks, vectors, pending = _counts(small_repo)
    assert data["retrieval"]["embedded"] == 0 and vectors == 0 and pending == chunks > 0


def test_embed_flag_wins_over_the_environment(small_repo: Path, local_embedder: Any) -> None:
    assert os.environ["KNOXIDX_EMBED"] == "0"
    data = json.loads(_index("--embed", "--json", str(small_repo)).output)["retrieval"]
    assert data["pending"] == 0 and data["embedded"] == data["chunks"]


def test_offline_with_voyage_configured_skips_and_says_so(
    small_repo: Path, embedding_on: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The local model would replace Voyage's vectors: nothing is embedded, nothing dialled
    (the Voyage client is never made), and the answer says why."""
    monkeypatch.setenv("KNOXIDX_EMBEDDER", "voyage")
    monkeypatch.setenv("VOYAGE_API_KEY", "pa-test-key")
    monkeypatch.setenv("KNOXIDX_OFFLINE", "0")  # restored after the test: --offline sets it
    human = _index("--offline", str(small_repo))
    assert "offline: Voyage is the configured embedder" in human.output
    chunks, vectors, pending = _counts(small_repo)
    assert vectors == 0 and pending == chunks > 0
    data = json.loads(_index("--offline", "--json", str(small_repo)).output)["retrieval"]
    assert data["embed_skipped"].startswith("offline: Voyage")


def test_search_says_how_much_is_embedded(small_repo: Path, local_embedder: Any) -> None:
    data = json.loads(_index("--json", str(small_repo)).output)["retrieval"]
    assert CliRunner().invoke(main, ["embed", str(small_repo), "--limit", "2"]).exit_code == 0
    result = CliRunner().invoke(main, ["search", "records from a stream", str(small_repo)])
    assert (f"note: 2 of {data['chunks']} chunks embedded; vector results cover those"
            in result.output)
    lexical = CliRunner().invoke(main, ["search", "records", str(small_repo), "--mode",
                                        "lexical"])
    assert "chunks embedded" not in lexical.output  # lexical search needs no vectors


def test_progress_lines_at_most_every_five_seconds() -> None:
    now = [100.0]
    out = io.StringIO()
    lines = ProgressLines(out, clock=lambda: now[0])
    lines("embed", 0, 500)  # the start: no line
    for done, at in ((32, 101.0), (64, 104.9), (96, 105.0), (128, 106.0), (160, 110.0),
                     (500, 125.0)):
        now[0] = at
        lines("embed", done, 500)
        lines("parse", 1, 2)  # other phases: never a line
    assert out.getvalue().splitlines() == [
        "embedded 96/500 chunks, 19.2/s, ~21 s left",
        "embedded 160/500 chunks, 16.0/s, ~21 s left",
    ]  # and none at the end: the summary says it


@pytest.mark.slow
def test_a_killed_index_keeps_its_batches_and_the_next_run_goes_on(
    tmp_path: Path, embedding_on: None
) -> None:
    """SIGKILL in the middle of the embedding: the graph and lexical search are complete, the
    batches committed so far keep their vectors, and the next `knoxidx index` embeds exactly
    the rest."""
    root = _repo_of(tmp_path, 40)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-c", "from knoxidx.cli import run; run()",
                             "index", "--jobs", "1", str(root)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: (root / INDEX_DIR / DB_NAME).exists() and _safe_counts(root)[1] > 0,
                 what="a first committed batch", timeout=240)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    chunks, vectors, pending = _counts(root)
    assert 0 < vectors < chunks and vectors + pending == chunks
    symbols = CliRunner().invoke(main, ["symbols", "checksum_part_39", str(root)])
    assert "part39.checksum_part_39" in symbols.output  # the graph was whole before
    data = json.loads(_index("--json", str(root)).output)["retrieval"]
    assert data["embedded"] + data["from_cache"] == pending and data["pending"] == 0
    assert _counts(root) == (chunks, chunks, 0)


def _safe_counts(root: Path) -> tuple[int, int, int]:
    try:
        return _counts(root)
    except sqlite3.Error:  # not there yet (the first build renames it into place)
        return (0, 0, 0)


@pytest.mark.heavy
def test_a_watcher_embeds_in_spare_time_and_a_change_does_not_wait(
    tmp_path: Path, embedding_on: None, monkeypatch: pytest.MonkeyPatch, local_embedder: Any
) -> None:
    """One chunk per step: a file change made while most chunks are still pending is in the
    graph before the backlog is done; then everything is embedded, /status says so, and the
    changed file's new chunk gets its vector too."""
    from knoxidx.api.readers import status_of
    from knoxidx.index import Index
    from knoxidx.watch import Watcher

    root = _repo_of(tmp_path, 20)
    monkeypatch.setattr(background, "MAX_STEP_CHUNKS", 1)
    # once embedding has begun, the next step waits for the change to be written: a test
    # thread descheduled on a loaded machine could find the backlog done before it wrote
    written = threading.Event()
    real_step = background.BackgroundEmbedding.step

    def step(self: Any) -> dict:
        if self.embedded >= 2:
            written.wait(120)
        return real_step(self)

    monkeypatch.setattr(background.BackgroundEmbedding, "step", step)
    events: list[tuple[str, dict]] = []
    lock = threading.Lock()

    def emit(event: str, data: dict) -> None:
        with lock:
            events.append((event, data))

    watcher = Watcher(root, debounce_ms=50, jobs=1, reconcile_s=0, emit=emit)
    watcher.start()
    try:
        wait_for(lambda: watcher.snapshot()["chunks_embedded"] >= 2, what="embedding begins",
                 timeout=120)
        (root / "pkg" / "fresh.py").write_text(
            "def fresh_function():\n    \"\"\"Made while the watcher embeds.\"\"\"\n"
            "    return 1\n", encoding="utf-8")
        written.set()
        wait_for(lambda: any(e == "batch" and d["reason"] == "changes" for e, d in events),
                 what="the change's batch", timeout=60)
        state = watcher.snapshot()
        assert state["chunks_pending"] > 0  # the backlog did not hold the change back
        wait_for(lambda: watcher.snapshot()["chunks_pending"] == 0, what="the backlog",
                 timeout=300)
        with Index.open_reader(root) as idx:
            status = status_of(idx, watcher)
        assert status["chunks_pending"] == 0
        assert status["chunks_embedded"] == status["retrieval"]["chunks"]
        assert status["watcher"]["chunks_embedded"] == status["chunks_embedded"]
        assert any(e == "embedded" for e, _ in events)
    finally:
        written.set()
        watcher.stop()
    chunks, vectors, pending = _counts(root)
    assert vectors == chunks and pending == 0


def test_a_watcher_with_embedding_off_leaves_chunks_pending(small_repo: Path) -> None:
    from knoxidx.watch import Watcher

    watcher = Watcher(small_repo, debounce_ms=50, jobs=1, reconcile_s=0)
    watcher.start()
    try:
        wait_for(lambda: watcher.snapshot()["phase"] == "idle", what="the initial update")
        assert watcher.snapshot()["embedding"] == "off"
    finally:
        watcher.stop()
    chunks, vectors, pending = _counts(small_repo)
    assert vectors == 0 and pending == chunks


def test_a_step_gives_way_to_a_change_and_writes_nothing(small_repo: Path) -> None:
    """While the model works on a batch, a change arriving makes the step give up at once:
    the batch is not written (its chunks stay pending) and the next step embeds them."""
    from knoxidx.index import Index

    _index(str(small_repo))  # KNOXIDX_EMBED=0: every chunk pending
    change_waits = threading.Event()
    model_free = threading.Event()
    with Index.open(small_repo) as idx:
        embedding = background.BackgroundEmbedding(idx, should_yield=change_waits.is_set)
        embedding.refresh_counts()
        chunks = embedding.pending
        embedding._make_embedder()
        assert embedding._pool is not None
        embedding._pool.submit(model_free.wait)  # the model thread is busy with a batch
        change_waits.set()
        try:
            assert embedding.step() == {} and embedding.yielded == 1
        finally:
            model_free.set()
        assert _counts(small_repo) == (chunks, 0, chunks)
        change_waits.clear()
        done = embedding.step()
        assert done["embedded"] == 2 and embedding.pending == chunks - 2
        embedding.close()
    assert _counts(small_repo) == (chunks, 2, chunks - 2)


def test_an_embedder_that_cannot_start_fails_only_an_explicit_embed(
    small_repo: Path, embedding_on: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Voyage chosen without a key: by default the index succeeds (graph and lexical search
    saved) with a warning; `--embed` asked for the embedding and fails with the reason."""
    monkeypatch.setenv("KNOXIDX_EMBEDDER", "voyage")
    monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    done = CliRunner().invoke(main, ["index", "--jobs", "1", str(small_repo)])
    assert done.exit_code == 0, done.output
    assert "warning: not embedded: the Voyage embedder needs VOYAGE_API_KEY" in done.output
    chunks, vectors, pending = _counts(small_repo)
    assert vectors == 0 and pending == chunks > 0
    asked = CliRunner().invoke(main, ["index", "--embed", str(small_repo)])
    assert "needs VOYAGE_API_KEY" in str(asked.exception)  # the CLI: exit 1, one line
