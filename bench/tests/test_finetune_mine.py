"""Mined hard negatives: the project's documents the model ranks highest for a pair's query, less
its answer, any copy of the answer's text and any definition of the answer's name."""

from __future__ import annotations

import numpy as np

from bench.finetune.mine import Document, mine_project, project_documents, rivals, short_name


def test_short_name_is_the_definitions_own_name() -> None:
    assert short_name("Reader.read") == "read"
    assert short_name("io::Reader::read") == "read"
    assert short_name("parse_header") == "parse_header"


def test_rivals_are_the_top_ranks_less_the_answer_its_copies_and_its_name() -> None:
    documents = [
        Document("answer text", frozenset({"tide_height"})),
        Document("overload", frozenset({"tide_height"})),  # same name: likely a false negative
        Document("rival a", frozenset({"moon_phase"})),
        Document("rival b", frozenset({"sun_angle"})),
        Document("far away", frozenset({"wind_speed"})),
    ]
    scores = np.array([0.9, 0.95, 0.8, 0.7, 0.1])
    assert rivals(scores, documents, "answer text", "tide_height", depth=4) == [2, 3]
    # the answer counts towards the depth: with 3 ranks, rank 4 (rival b) is out
    assert rivals(scores, documents, "answer text", "tide_height", depth=3) == [2]
    # hardest first, whatever the documents' order
    assert rivals(np.array([0.9, 0.0, 0.5, 0.85, 0.6]), documents, "answer text",
                  "tide_height", depth=5) == [3, 4, 2]


def test_a_chunk_answering_two_pairs_is_one_document_and_never_mined_for_either() -> None:
    pairs = [
        {"query": "q tide", "chunk": "shared chunk", "qualname": "Harbour.tide_height"},
        {"query": "q moon", "chunk": "shared chunk", "qualname": "Harbour.moon_phase"},
        {"query": "q wind", "chunk": "wind chunk", "qualname": "wind_speed"},
        {"query": "q sun", "chunk": "sun chunk", "qualname": "Sky.tide_height"},
    ]
    assert project_documents(pairs) == [
        Document("shared chunk", frozenset({"tide_height", "moon_phase"})),
        Document("wind chunk", frozenset({"wind_speed"})),
        Document("sun chunk", frozenset({"tide_height"})),
    ]
    vectors = {"q tide": [1.0, 0.0], "q moon": [1.0, 0.1], "q wind": [0.0, 1.0],
               "q sun": [0.6, 0.8], "shared chunk": [1.0, 0.0], "wind chunk": [0.0, 1.0],
               "sun chunk": [0.6, 0.8]}

    def embed(texts: list[str]) -> np.ndarray:
        rows = np.array([vectors[t] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    mined = mine_project(pairs, embed, depth=3)
    # tide: the sun chunk also defines a tide_height, so only the wind chunk is a rival
    assert mined[0] == ["wind chunk"]
    assert mined[1] == ["sun chunk", "wind chunk"]
    assert mined[2] == ["sun chunk", "shared chunk"]
    # sun (Sky.tide_height): the shared chunk defines a tide_height too
    assert mined[3] == ["wind chunk"]
