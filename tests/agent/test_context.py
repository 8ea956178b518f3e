"""The context builder: the budget holds, the top hit is covered, callees come along when
there is room, the order is deterministic, and the graph stands in when search cannot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from knoxidx.answers.centrality import CENTRALITY_FILE
from knoxidx.answers.context import ContextWeights, build_context, gather
from knoxidx.cli import main
from knoxidx.index import Index
from knoxidx.retrieval.errors import SearchInputError
from knoxidx.retrieval.tokens import default_counter
from tests.agent.support import make_repo

QUERY = "parse the configuration file"
BUDGETS = (64, 80, 100, 130, 170, 220, 300, 400, 550, 800, 1200, 2000, 4000)


@pytest.mark.parametrize("budget", BUDGETS)
def test_never_exceeds_the_budget_and_covers_the_top_hit(shared_repo: Path, budget: int) -> None:
    with Index.open(shared_repo) as idx:
        data = idx.context(QUERY, budget)
    counted = default_counter().count(data["markdown"])
    assert counted == data["tokens"] <= budget
    top = data["items"][0]
    assert top["qualified_name"] == "app.config.parse_config"
    assert top["included"] is not None  # whole, an excerpt, its signature or its head
    if budget >= 300:
        assert top["included"] == "full"
        assert "def parse_config(path=DEFAULT_PATH):" in data["markdown"]


def test_includes_callee_definitions_when_room_allows(shared_repo: Path) -> None:
    with Index.open(shared_repo) as idx:
        data = idx.context(QUERY, 4000)
    md = data["markdown"]
    by_name = {i["qualified_name"]: i for i in data["items"]}
    for callee in ("app.util.read_text", "app.util.normalise"):
        assert by_name[callee]["included"] in ("full", "merged")
        assert any("called by parse_config" in r for r in by_name[callee]["reasons"])
    assert "def read_text(path):" in md and "return fh.read()" in md
    assert "class Config" in md  # the constructed class
    assert "app/main.py" in md  # a caller
    # headers: path:start-end (kind qualified_name — why); the top hit's file is small, so it
    # is shown whole with Config and the imports: one block, one header (its 23 lines)
    assert md.startswith("app/config.py:1-23 (Function parse_config — search hit #1")
    assert "app.config.Config" in data["blocks"][0]["items"]
    # which of search's sources found a hit is in the JSON, not in the header an agent reads
    top = by_name["app.config.parse_config"]["reasons"][0]
    assert top.startswith("search hit #1 (") and "lexical" in top
    assert md.startswith("app/config.py:1-23 (Function parse_config — search hit #1;")


def test_nothing_is_shown_twice(shared_repo: Path) -> None:
    with Index.open(shared_repo) as idx:
        data = idx.context(QUERY, 4000)
    ranges: dict[str, list[tuple[int, int]]] = {}
    for block in data["blocks"]:
        if block["mode"] == "signature":
            continue
        for start, end in ranges.get(block["path"], []):
            assert block["end_line"] < start or block["start_line"] > end, block
        ranges.setdefault(block["path"], []).append((block["start_line"], block["end_line"]))
    assert data["markdown"].count("def read_text(path):") == 1


def test_low_ranked_definitions_get_only_their_signatures(shared_repo: Path) -> None:
    with Index.open(shared_repo) as idx:
        data = build_context(idx, QUERY, max_tokens=4000,
                             weights=ContextWeights(full_cutoff=0.9, top_file_share=0.0))
    modes = {i["qualified_name"]: i["included"] for i in data["items"]}
    assert modes["app.config.parse_config"] == "full"
    # a definition reached through the graph only (search lists normalise, read_text and the
    # methods as definitions of their own since results are definition-sized), below the cut
    # a class that is not a hit is shown as its outline: its first line and its members'
    assert modes["app.config.Config"] == "outline"
    assert "outline)\n```python\nclass Config:\n… (lines 10-11 not shown)\n" \
        "    def __init__(self, values):\n… (lines 13-14 not shown)\n" \
        "    def get(self, key, default=None):\n… (line 16 not shown)\n```" in data["markdown"]


def test_items_carry_scores_reasons_and_are_ranked(shared_repo: Path) -> None:
    with Index.open(shared_repo) as idx:
        data = idx.context(QUERY, 2000)
    scores = [i["score"] for i in data["items"]]
    assert scores == sorted(scores, reverse=True)
    hits = [i["rank"] for i in data["items"] if i["reasons"][0].startswith("search hit")]
    assert hits == sorted(hits)
    weights = ContextWeights()
    for item in data["items"]:
        parts = item["scores"]
        assert set(parts) == {"semantic", "lexical", "proximity", "centrality"}
        expected = (weights.semantic * parts["semantic"] + weights.lexical * parts["lexical"]
                    + weights.proximity * parts["proximity"]
                    + weights.centrality * parts["centrality"])
        # at most the formula: a hit never outranks one search put before it, nor a
        # neighbour the hit that brought it in
        assert item["score"] <= expected + 1e-5
        assert item["reasons"]
    assert data["weights"]["proximity"] == weights.proximity


def test_deterministic_for_the_same_index_and_query(shared_repo: Path) -> None:
    with Index.open(shared_repo) as a, Index.open_reader(shared_repo) as b:
        first = a.context(QUERY, 700)
        second = b.context(QUERY, 700)
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


def test_centrality_is_cached_by_index_state(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    cache = root / ".knoxidx" / CENTRALITY_FILE
    with Index.open(root) as idx:
        idx.context(QUERY, 500)
        assert cache.exists()
        stamp = cache.stat().st_mtime_ns
        idx.context("read a whole file", 500)
        assert cache.stat().st_mtime_ns == stamp  # same state: not recomputed
        (root / "app" / "util.py").write_text("def read_text(path):\n    return path\n")
        idx.update(jobs=1)
        idx.context(QUERY, 500)
        assert cache.stat().st_mtime_ns != stamp


def test_falls_back_to_symbol_names_without_search_data(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", retrieval=False)  # a graph-only index
    with Index.open(root) as idx:
        data = build_context(idx, "what does parse_config return", max_tokens=1500)
    assert data["search"]["fallback"] is True
    assert data["items"][0]["qualified_name"] == "app.config.parse_config"
    assert "named in the query" in data["items"][0]["reasons"][0]
    assert "def read_text(path):" in data["markdown"]


@pytest.mark.parametrize("query,budget", [("", 1000), ("x" * 3000, 1000), ("q", 10),
                                          ("q", True), ("q", "100")])
def test_bad_arguments(shared_repo: Path, query: str, budget: object) -> None:
    with Index.open(shared_repo) as idx, pytest.raises(SearchInputError):
        idx.context(query, budget)  # type: ignore[arg-type]


def test_cli_context_markdown_and_json(shared_repo: Path) -> None:
    runner = CliRunner()
    human = runner.invoke(main, ["context", QUERY, str(shared_repo), "--max-tokens", "600"])
    assert human.exit_code == 0, human.output
    assert "(Function parse_config — search hit #1" in human.output
    assert "app/config.py:" in human.output
    machine = runner.invoke(main, ["context", QUERY, str(shared_repo), "--json"])
    data = json.loads(machine.output)
    assert data["max_tokens"] == 8000 and data["items"][0]["reasons"]


def test_big_top_hit_and_markdown_in_code(tmp_path: Path) -> None:
    methods = "\n".join(
        f"    def step_{i}(self, value):\n        \"\"\"Step {i}.\"\"\"\n"
        f"        return value + {i}\n"
        for i in range(60))
    files = {
        "big/engine.py": (
            'class PipelineEngine:\n    """Runs the pipeline.\n\n    ```python\n'
            '    engine = PipelineEngine()\n    ```\n    """\n\n' + methods),
        "big/use.py": "from big.engine import PipelineEngine\n\n\n"
                      "def build_engine():\n    return PipelineEngine()\n",
    }
    root = make_repo(tmp_path / "repo", files)
    counter = default_counter()
    with Index.open(root) as idx:
        for budget in (64, 100, 200, 400, 800, 1600, 3200):
            data = idx.context("PipelineEngine pipeline engine", budget)
            assert data["tokens"] == counter.count(data["markdown"]) <= budget
            assert sum(b["tokens"] for b in data["blocks"]) <= data["tokens"]
            top = data["items"][0]
            # the class is central, but only a graph neighbour of the hits: it never leads
            assert top["reasons"][0].startswith("search hit #1")
            ranks = {i["qualified_name"]: i["rank"] for i in data["items"]}
            assert ranks["engine.PipelineEngine"] > ranks["engine.PipelineEngine.step_0"]
            if budget >= 100:
                assert top["included"] in ("full", "truncated", "excerpt", "elided")
            # a fence longer than the backticks inside the code keeps the block whole
            assert "````python" in data["markdown"] or "```python\n    engine" not in \
                data["markdown"]


def test_semantic_factor_with_embedded_chunks(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    with Index.open(root) as idx:
        assert idx.embed()["pending"] == 0  # the local model, offline
        first = idx.context(QUERY, 1500)
        second = idx.context(QUERY, 1500)
    assert first["search"]["semantic"] is True and first["search"]["mode"] == "hybrid"
    by_name = {i["qualified_name"]: i["scores"]["semantic"] for i in first["items"]}
    assert 0 < by_name["app.config.parse_config"] <= 1
    assert first["tokens"] <= 1500
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


def test_context_weighs_the_vector_sources_at_its_own_weight_and_search_keeps_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from knoxidx.retrieval import hybrid_search
    from knoxidx.retrieval.hybrid_search import SOURCE_WEIGHTS, VECTOR_SOURCES

    fusions: list[tuple[set[str], dict[str, float]]] = []
    fuse = hybrid_search.reciprocal_rank_fusion

    def noted(ranked, k=60, weights=None):  # the real fusion, what it was given noted
        fusions.append((set(ranked), dict(weights or {})))
        return fuse(ranked, k, weights)

    monkeypatch.setattr(hybrid_search, "reciprocal_rank_fusion", noted)
    installed = dict(SOURCE_WEIGHTS)
    root = make_repo(tmp_path / "repo")
    with Index.open(root) as idx:
        assert idx.embed()["pending"] == 0  # the local model, offline: the vector sources rank
        idx.context(QUERY, 1500, weights=ContextWeights(vector_fusion=0.25))
        asked_by_context = fusions[:]
        fusions.clear()
        idx.search(QUERY, k=10)
        asked_by_search = fusions[:]
        fusions.clear()
        idx.context(QUERY, 1500)
        asked_by_default_context = fusions[:]
    lowered = installed | dict.fromkeys(VECTOR_SOURCES, 0.25)
    assert asked_by_context and all(w == lowered for _, w in asked_by_context)
    assert all(set(VECTOR_SOURCES) <= sources for sources, _ in asked_by_context)
    assert asked_by_search and all(w == installed for _, w in asked_by_search)
    assert all(set(VECTOR_SOURCES) <= sources for sources, _ in asked_by_search)
    default = installed | dict.fromkeys(VECTOR_SOURCES, ContextWeights().vector_fusion)
    assert asked_by_default_context and all(w == default for _, w in asked_by_default_context)
    assert SOURCE_WEIGHTS == installed  # nothing global was changed


@pytest.mark.parametrize("weights", [{"vectors": 0.5}, {"vector": -1}, {"lexical": float("nan")},
                                     {"vector": True}, [("vector", 0.5)]])
def test_search_refuses_bad_source_weights(shared_repo: Path, weights: object) -> None:
    with Index.open(shared_repo) as idx, pytest.raises(SearchInputError):
        idx.search(QUERY, source_weights=weights)  # type: ignore[arg-type]


def test_of_many_callers_the_ones_the_question_names_are_gathered(tmp_path: Path) -> None:
    # a hub's callers beyond the first few the graph lists were dropped whatever the question
    # said; the caller it names must be gathered even when the graph lists it last
    callers = "".join(f"\n\ndef step_{n}():\n    return checksum(b'{n}')\n" for n in range(12))
    root = make_repo(tmp_path / "repo", {
        "app/__init__.py": "",
        "app/hashing.py": "def checksum(data):\n    \"\"\"Checksum of data.\"\"\"\n"
                          "    return sum(data) % 255\n",
        "app/steps.py": "from app.hashing import checksum\n" + callers
                        + "\n\ndef verify_upload():\n    return checksum(b'upload')\n",
    })
    # the top hit alone seeds (search finds the callers too: they would be hits)
    weights = ContextWeights(search_k=1, sibling=0.0, recent=0.0)
    with Index.open(root) as idx:
        gathered = gather(idx, "checksum of the upload is wrong", weights)
    top = next(c for c in gathered.candidates.values() if c.hit_rank == 0)
    assert top.name == "app.hashing.checksum"
    callers = {c.name for c in gathered.candidates.values() if ("caller", top.key) in c.links}
    assert len(callers) == weights.per_relation
    assert "app.steps.verify_upload" in callers


def test_the_top_hits_small_file_is_shown_whole_within_its_share(tmp_path: Path) -> None:
    # a change often spans a small file's functions that neither share the question's words
    # nor call each other; the whole file is shown when it fits its share of the budget
    encode = "".join(f"    header_{n} = len(payload) + {n}  # the frame's length header\n"
                     for n in range(8))
    pad = "".join(f"    block_{n} = size * {n} % 8  # zero bytes up to a multiple of eight\n"
                  for n in range(8))
    codec = (f"def encode_frame(payload):\n{encode}    return bytes([header_0]) + payload\n"
             f"\n\ndef _padding(size):\n{pad}    return b'\\x00' * block_1\n")
    root = make_repo(tmp_path / "repo", {"app/__init__.py": "", "app/codec.py": codec,
                                         "app/other.py": "def unrelated():\n    return 1\n"})
    question = "encode frame length header"
    weights = ContextWeights(recent=0.0)
    with Index.open(root) as idx:
        roomy = build_context(idx, question, max_tokens=4000, weights=weights)
        tight = build_context(idx, question, max_tokens=200, weights=weights)
        never = build_context(idx, question, max_tokens=4000,
                              weights=ContextWeights(recent=0.0, top_file_share=0.0))
    lines = codec.count("\n")  # (it ends with one: no line after it)
    assert roomy["items"][0]["qualified_name"] == "app.codec.encode_frame"
    assert [(b["start_line"], b["end_line"], b["mode"]) for b in roomy["blocks"]
            if b["path"] == "app/codec.py"] == [(1, lines, "full")]
    assert "def _padding(size):" in roomy["markdown"]
    assert all(i["kind"] != "file" for i in roomy["left_out"] + tight["left_out"])
    assert "def _padding(size):" not in tight["markdown"]  # 12 % of 200 tokens: too little
    assert "def _padding(size):" not in never["markdown"]


def test_context_reads_search_as_deep_as_its_weights_say(tmp_path: Path) -> None:
    # context's seeds are the definitions of its own ``search_depth`` fused chunks (20),
    # not of the 60 that `knoxidx search` reranks
    files = {"app/__init__.py": ""} | {
        f"app/parser_{n}.py": f"def parse_config_{n}(path):\n    return open(path).read()\n"
        for n in range(45)
    }
    root = make_repo(tmp_path / "repo", files)
    with Index.open(root) as idx:
        plain = idx.search(QUERY, k=50)["results"]
        default_hits = idx.context(QUERY, 4000)["search"]["hits"]
        deeper_hits = idx.context(QUERY, 4000,
                                  weights=ContextWeights(search_depth=40))["search"]["hits"]
    assert (len(plain), default_hits, deeper_hits) == (45, 20, 40)


@pytest.mark.parametrize("depth", [0, -3, 201, 2.5, True, "40"])
def test_search_refuses_a_bad_depth(shared_repo: Path, depth: object) -> None:
    with Index.open(shared_repo) as idx, pytest.raises(SearchInputError, match="depth"):
        idx.search(QUERY, depth=depth)  # type: ignore[arg-type]
