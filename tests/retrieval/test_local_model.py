from __future__ import annotations

import numpy as np
import pytest

from knoxidx.retrieval.tokens import default_counter


def test_local_model_embeds_offline_and_semantically(local_embedder) -> None:
    docs = local_embedder.embed_documents(
        ["read the contents of a file from disk", "sort a list of numbers", "open a network socket"]
    )
    assert docs.shape == (3, 384) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    query = local_embedder.embed_query("load text from a file")
    assert int(np.argmax(docs @ query)) == 0
    assert local_embedder.embed_documents([]).shape == (0, 384)
    # batching by length does not change results
    single = local_embedder.embed_documents(["sort a list of numbers"])[0]
    assert np.allclose(single, docs[1], atol=1e-4)


def test_token_counter_is_the_models_wordpiece() -> None:
    counter = default_counter()
    assert counter.count("parseHTTPResponse") > 1
    text = "def f(x):\n    return x + 1\n\nclass A:\n    pass\n"
    assert counter.count(text) == sum(counter.count_many(text.split("\n")))


@pytest.mark.heavy
def test_onnx_graph_matches_a_plain_numpy_bert() -> None:
    from bert_reference import encode

    from knoxidx.retrieval.backends import LocalEmbedder
    from knoxidx.retrieval.minilm import read_safetensors
    from knoxidx.retrieval.model_files import model_dir

    local_embedder = LocalEmbedder(precision="fp32")  # the graph exactly; int8 is tested apart

    weights = dict(read_safetensors(model_dir() / "model.safetensors"))
    assert local_embedder.adapter is not None  # the default model is MiniLM with its adapter
    factors = read_safetensors(local_embedder.adapter)
    for key in factors:
        if key.endswith(".lora_a"):  # W + B @ A, written out here rather than by merge_adapter
            name = key.removesuffix(".lora_a")
            lora_b = factors[f"{name}.lora_b"].astype(np.float64)
            weights[name] = weights[name] + lora_b @ factors[key].astype(np.float64)
    texts = ["def parse_http_response(raw): return raw.split()", "a short sentence"]
    got = local_embedder.embed_documents(texts)
    tokenizer = local_embedder.model._tokenizer
    for text, vector in zip(texts, got, strict=True):
        ids = tokenizer.encode(text).ids
        expected = encode(weights, ids, layers=6, heads=12)
        assert float(expected @ vector) > 0.9999
