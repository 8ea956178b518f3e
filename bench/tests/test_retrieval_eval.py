"""The docstring -> code benchmark's own rules, on cases whose answers are known."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.retrieval_eval.corpus import build_task, informative, write_copy
from bench.retrieval_eval.docs import doc_comment, has_body, node_for, parse, summary
from bench.retrieval_eval.metrics import Span, first_hit, is_hit, score
from knoxidx.parse.extract import extract

# ---- the hit rule and the scores ---------------------------------------------------------------


def test_a_hit_overlaps_the_function_and_is_definition_sized() -> None:
    target = Span("a.py", 100, 109)  # 10 lines: results up to 50 lines count
    assert is_hit(Span("a.py", 105, 105), target)
    assert is_hit(Span("a.py", 60, 109), target)  # 50 lines, overlapping
    assert not is_hit(Span("a.py", 60, 110), target)  # 51 lines: too big
    assert not is_hit(Span("a.py", 110, 120), target)  # no overlap
    assert not is_hit(Span("b.py", 100, 109), target)  # another file
    long = Span("a.py", 1, 40)  # 40 lines: results up to 80 lines count
    assert is_hit(Span("a.py", 1, 80), long) and not is_hit(Span("a.py", 1, 81), long)


def test_recall_and_mrr_at_10() -> None:
    t = [Span("a.py", 10, 20), Span("b.py", 1, 5), Span("c.py", 1, 5)]
    miss = Span("x.py", 1, 2)
    rankings = [
        [Span("a.py", 10, 20)],  # rank 1
        [miss, miss, Span("b.py", 3, 4)],  # rank 3
        [miss] * 10 + [Span("c.py", 1, 5)],  # rank 11: outside the first 10
    ]
    assert [first_hit(r, x) for r, x in zip(rankings, t, strict=True)] == [1, 3, 0]
    s = score(rankings, t)
    assert s.queries == 3
    assert s.recall == pytest.approx(2 / 3)
    assert s.mrr == pytest.approx((1 + 1 / 3) / 3)
    assert score([], []).recall == 0.0
    with pytest.raises(ValueError):
        score([[]], [])


# ---- finding, filtering and stripping doc comments ---------------------------------------------

SOURCES = {
    "java": (
        "Example.java",
        (b"class Example {\n"
        b"    /** Other. */\n"
        b"    int x;\n"
        b"\n"
        b"    /**\n"
        b"     * Computes the {@code total} weight of every parcel in the shipment.\n"
        b"     * @param s the shipment\n"
        b"     */\n"
        b"    @Override\n"
        b"    int weigh(int s) {\n"
        b"        return s * 2;\n"
        b"    }\n"
        b"}\n"),
    ),
    "rust": (
        "lib.rs",
        (b"/// Computes the total weight of every parcel in the shipment.\n"
        b"///\n"
        b"/// # Examples\n"
        b"#[inline]\n"
        b"fn weigh(s: u32) -> u32 {\n"
        b"    s * 2\n"
        b"}\n"),
    ),
    "go": (
        "w.go",
        (b"package w\n\n"
        b"// weigh computes the total weight of every parcel\n"
        b"// in the shipment.\n"
        b"func weigh(s int) int {\n"
        b"\treturn s * 2\n"
        b"}\n"),
    ),
    "javascript": (
        "w.js",
        (b"// not a doc\n"
        b"/** Computes the total weight of every parcel in the shipment. */\n"
        b"export function weigh(s) {\n"
        b"  return s * 2;\n"
        b"}\n"),
    ),
    "python": (
        "w.py",
        (b"def weigh(s):\n"
        b'    """Computes the total weight of every parcel\n'
        b"    in the shipment.\n\n"
        b"    Args:\n"
        b'        s: the shipment\n    """\n'
        b"    return s * 2\n"),
    ),
}
EXPECTED_LINES = {"java": (5, 8), "rust": (1, 3), "go": (3, 4), "javascript": (2, 2),
                  "python": (2, 7)}


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_doc_comments_are_located_and_summarised(language: str) -> None:
    path, source = SOURCES[language]
    tree = parse(source, language)
    weigh = next(d for d in extract(path, source, language).defs if d.name == "weigh")
    doc = doc_comment(node_for(tree.root_node, weigh.start_byte, weigh.end_byte), language, source)
    assert doc is not None
    assert (doc.first_line, doc.last_line) == EXPECTED_LINES[language]
    text = summary(doc.raw)
    assert text.lower().rstrip(".").endswith("total weight of every parcel in the shipment")
    assert "@param" not in text and "Args" not in text and "{@code" not in text


def test_trivial_docs_are_not_queries() -> None:
    assert not informative("Returns the name.", "getName")
    assert not informative("Gets the current value of the counter", "getCounterValue")
    assert not informative("{@inheritDoc} with more words than six here", "run")
    assert informative("Computes the total weight of every parcel in the shipment.", "weigh")


TOY = {
    "zoo/animals.py": '''
def feed_zebra(bucket):
    """Pour striped savanna pellets into the zebra trough at dawn."""
    pellets = bucket.take("savanna")
    trough = pellets.pour("zebra")
    return trough


def erupt_volcano(magma):
    """Release molten basalt from the volcano crater during an eruption."""
    basalt = magma.melt("crater")
    crater = basalt.release()
    return crater


def tune_saxophone(reed):
    """Adjust the brass saxophone reed until the jazz pitch is true."""
    brass = reed.adjust("jazz")
    pitch = brass.tune()
    return pitch
''',
    "zoo/unrelated.py": '''
def helper(x):
    """Duplicate summary that must not become a query."""
    return x


def other(x):
    """Duplicate summary that must not become a query."""
    return x
''',
}


def toy_repo(root: Path) -> Path:
    for rel, text in TOY.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text.lstrip("\n"))
    return root


def test_task_selects_documented_functions_and_strips_their_docs(tmp_path: Path) -> None:
    src = toy_repo(tmp_path / "src")
    task, chosen = build_task(src, "toy", ("python",), queries=10, min_chunks=1)
    assert sorted(t.qualname for t in task.targets) == [
        "erupt_volcano", "feed_zebra", "tune_saxophone"
    ]  # the duplicated summaries are left out
    copy = tmp_path / "copy"
    write_copy(src, copy, task, chosen)
    stripped = (copy / "zoo/animals.py").read_text().split("\n")
    assert not any('"""' in line for line in stripped)
    for t in task.targets:
        lines = stripped[t.start_line - 1 : t.end_line]
        assert lines[0].startswith(f"def {t.qualname}(")
        assert lines[-1].strip().startswith("return")
    assert not (copy / ".knoxidx").exists() or (copy / ".knoxidx").is_dir()


def test_the_types_check_asks_about_documented_classes(tmp_path: Path, monkeypatch) -> None:
    src = toy_repo(tmp_path / "src")
    (src / "zoo/keepers.py").write_text(
        "class Keeper:\n"
        '    """Looks after the striped savanna animals of the northern enclosure."""\n'
        "\n"
        "    def feed(self):\n"
        "        return 1\n"
    )
    monkeypatch.setenv("KNOXIDX_EVAL_KINDS", "Class,Interface")
    task, _ = build_task(src, "toy", ("python",), queries=10, min_chunks=1)
    assert [t.qualname for t in task.targets] == ["Keeper"]


def test_a_go_struct_has_a_body_and_its_doc_sits_above_type() -> None:
    source = (b"package zoo\n\n// Keeper looks after the striped savanna animals of the enclosure.\n"
              b"type Keeper struct {\n\tName string\n}\n\ntype Alias = Keeper\n")
    facts = extract("zoo.go", source, "go")
    tree = parse(source, "go")
    nodes = {d.name: node_for(tree.root_node, d.start_byte, d.end_byte) for d in facts.defs}
    keeper = nodes["Keeper"]
    assert has_body(keeper) and not has_body(nodes["Alias"])
    doc = doc_comment(keeper, "go", source)
    assert doc is not None and "savanna animals" in summary(doc.raw)


def test_toy_repo_end_to_end_scores_the_known_answers(tmp_path: Path, monkeypatch) -> None:
    """Each query's words occur only in its own function: lexical search must put it first,
    and the scores must say so (R@10 = MRR@10 = 1)."""
    from bench.retrieval_eval.run import index_and_ask

    monkeypatch.setenv("KNOXIDX_EVAL_DIR", str(tmp_path / "work"))
    src = toy_repo(tmp_path / "src")
    # two chunks wanted: the distractor file joins the one with the queries
    task, chosen = build_task(src, "toy", ("python",), queries=10, min_chunks=2)
    assert task.files == ["zoo/animals.py", "zoo/unrelated.py"]
    repo = tmp_path / "work" / "repo"
    write_copy(src, repo, task, chosen)
    result = index_and_ask(repo, task.targets, language="python", project="toy",
                           work=tmp_path / "work")
    assert result.queries == 3 and result.chunks == 2 and result.files == 2
    assert result.metrics["lexical"] == {"recall@10": 1.0, "mrr@10": 1.0}
    assert result.metrics["hybrid"] == {"recall@10": 1.0, "mrr@10": 1.0}
    for mode in ("hybrid", "lexical", "vector"):
        assert 0.0 <= result.metrics[mode]["mrr@10"] <= result.metrics[mode]["recall@10"] <= 1.0
    assert (tmp_path / "work" / "raw.json").exists()


@pytest.mark.slow
def test_quick_run_on_the_real_corpus(capsys) -> None:
    from bench.retrieval_eval.__main__ import main

    corpus = Path(os.environ.get("KNOXIDX_CORPUS", Path.home() / ".cache" / "knoxidx-corpus"))
    if not (corpus / "python" / "django").is_dir():
        pytest.skip("corpus not fetched (../shared/corpus/get-corpus.sh)")
    assert main(["--quick", "--no-save", "--corpus", str(corpus)]) == 0
    assert "| python (python/django) | 20 |" in capsys.readouterr().out


def test_the_dev_set_is_held_out_from_the_reported_one() -> None:
    """Settings are tuned on the dev projects: none of them may be a reported one, and every
    reported language has one."""
    from bench.retrieval_eval.run import CORPORA, DEV_CORPORA

    assert DEV_CORPORA.keys() == CORPORA.keys()
    assert not {c.project for c in DEV_CORPORA.values()} & {c.project for c in CORPORA.values()}
    for lang, spec in DEV_CORPORA.items():
        assert spec.languages == CORPORA[lang].languages


def _asked_toy_copy(tmp_path: Path, monkeypatch) -> Path:
    """The benchmark's work folder for a toy repository, indexed, embedded and asked once."""
    from bench.retrieval_eval.run import index_and_ask

    monkeypatch.setenv("KNOXIDX_EVAL_DIR", str(tmp_path / "work"))
    src = toy_repo(tmp_path / "src")
    task, chosen = build_task(src, "toy", ("python",), queries=10, min_chunks=2)
    work = tmp_path / "work"
    write_copy(src, work / "repo", task, chosen)
    index_and_ask(work / "repo", task.targets, language="python", project="toy", work=work)
    return work


def test_misses_asks_an_embedded_copy_again_and_lists_what_hybrid_misses(
        tmp_path: Path, monkeypatch) -> None:
    import json

    from bench.retrieval_eval.metrics import Span
    from bench.retrieval_eval.misses import ask_again, fused_ranks
    from knoxidx.index import Index

    work = _asked_toy_copy(tmp_path, monkeypatch)
    scores, lines = ask_again(work, show=True)
    assert scores["hybrid"] == (1.0, 1.0) and lines[1].endswith("ranks 111")
    assert not any(line.startswith("MISS") for line in lines)
    # a target no result can answer (its file is not indexed) is listed with what came instead
    raw = json.loads((work / "raw.json").read_text())
    raw["targets"][0]["path"] = "zoo/elsewhere.py"
    (work / "raw.json").write_text(json.dumps(raw))
    scores, lines = ask_again(work, show=True)
    assert scores["hybrid"][0] == 2 / 3 and lines[1].endswith("ranks x11")
    miss = lines.index(next(line for line in lines if line.startswith("MISS")))
    assert lines[miss].endswith("zoo/elsewhere.py:" + f"{raw['targets'][0]['start_line']}-"
                                f"{raw['targets'][0]['end_line']}")
    assert lines[miss + 2] == ("  source ranks: {'lexical': 0, 'vector': 0, 'declarations': 0, "
                               "'symbol': 0, 'names': 0, 'fused': 0} (the rerank reads the "
                               "first 60 fused)")
    assert lines[miss + 3].startswith("   - zoo/")  # the results given instead
    # the ranks are asked of this checkout's sources: an answered target's chunk is found
    target = raw["targets"][1]
    with Index.open(work / "repo") as idx:
        idx.search(target["query"], k=10)
        found = fused_ranks(idx, target["query"],
                            Span(target["path"], target["start_line"], target["end_line"]))
    assert found["fused"] >= 1 and found["lexical"] >= 1


def test_rerank_terms_add_up_to_the_scores_the_search_gives(tmp_path: Path, monkeypatch) -> None:
    import json

    from bench.retrieval_eval.rerank_terms import describe

    work = _asked_toy_copy(tmp_path, monkeypatch)
    assert describe(work) == []  # every target answered first
    # the first target's question, with the second target's function as its answer
    raw = json.loads((work / "raw.json").read_text())
    first, second = raw["targets"][:2]
    raw["targets"][0] = second | {"query": first["query"]}
    (work / "raw.json").write_text(json.dumps(raw))
    lines = describe(work, k=1)
    assert lines[0].startswith(f"MISS {second['qualname']} {second['path']}:")
    answer, top = lines[2], lines[3]
    assert answer.startswith(f"  answer: {second['qualname']} ")
    assert top.startswith(f"  first: {first['qualname']} ")
    # the terms of what ranks first add up to the score the search gave it
    total, score = top.rsplit("total ", 1)[1].split("; score ")
    assert float(total) == pytest.approx(float(score), abs=1e-3)


def test_misses_asks_with_the_vector_sources_at_the_given_fusion_weight(
        tmp_path: Path, monkeypatch) -> None:
    from bench.retrieval_eval.misses import ask_again
    from knoxidx.retrieval.hybrid_search import SOURCE_WEIGHTS, HybridSearch

    work = _asked_toy_copy(tmp_path, monkeypatch)
    installed = dict(SOURCE_WEIGHTS)
    seen: list[dict[str, float]] = []
    search = HybridSearch.search

    def recording(self, *args, **kwargs):  # the real search, its weights noted
        seen.append(dict(self.source_weights))
        return search(self, *args, **kwargs)

    monkeypatch.setattr(HybridSearch, "search", recording)
    scores, _ = ask_again(work, show=False, vector_weights=0.5)
    assert scores["hybrid"] == (1.0, 1.0)
    assert seen and all(w == installed | {"vector": 0.5, "declarations": 0.5} for w in seen)
    seen.clear()
    ask_again(work, show=False)
    assert seen and all(w == installed for w in seen)
    assert SOURCE_WEIGHTS == installed
