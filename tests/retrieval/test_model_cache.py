"""The optimised model graph is cached on disk, and a load from the cache embeds exactly like a
fresh build; a damaged cache is rebuilt rather than fatal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from knoxidx.retrieval import minilm
from knoxidx.retrieval.minilm import (
    CACHE_DIR_ENV,
    MiniLM,
    cached_graph_path,
    int8_graph_path,
)
from knoxidx.retrieval.model_files import model_dir

TEXTS = ["parse the config file", "def load_user_settings(path): return json.load(path)"]


@pytest.mark.heavy
def test_cached_graph_loads_without_building_and_embeds_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    cached = cached_graph_path(model_dir())
    assert tmp_path in cached.parents and not cached.exists()
    built = MiniLM(threads=1).encode(TEXTS)
    assert cached.is_file() and (cached.parent / "model.data").is_file()
    assert [p.name for p in tmp_path.rglob("*.tmp")] == []

    def no_build(*args: object) -> bytes:
        raise AssertionError("the cached graph should have been used")

    monkeypatch.setattr(minilm, "build_bert_onnx", no_build)
    assert np.allclose(MiniLM(threads=1).encode(TEXTS), built, atol=1e-6)

    monkeypatch.undo()
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    (cached.parent / "model.data").write_bytes(b"damaged")
    assert np.allclose(MiniLM(threads=1).encode(TEXTS), built, atol=1e-6)
    assert (cached.parent / "model.data").stat().st_size > 1_000_000


@pytest.mark.heavy
def test_int8_graph_is_made_once_from_the_shipped_weights_and_embeds_like_fp32(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    fp32 = MiniLM(threads=1).encode(TEXTS)
    int8 = MiniLM(threads=1, precision="int8").encode(TEXTS)
    cached = cached_graph_path(model_dir())
    assert int8_graph_path(cached).is_file()
    assert [p.name for p in tmp_path.rglob("*.tmp")] == []
    cosines = (fp32 * int8).sum(axis=1)
    assert cosines.min() > 0.98 and not np.allclose(fp32, int8, atol=1e-4)

    def no_quantise(*args: object, **kwargs: object) -> None:
        raise AssertionError("the cached int8 graph should have been used")

    # a text embeds the same alone and among others (int8's activation scale is per call)
    alone = MiniLM(threads=1, precision="int8")
    among = alone.encode(["x " * 200, TEXTS[0], "y", TEXTS[1]], batch_tokens=4096)
    assert np.array_equal(among[[1, 3]], int8)

    import onnxruntime.quantization

    monkeypatch.setattr(onnxruntime.quantization, "quantize_dynamic", no_quantise)
    assert np.allclose(MiniLM(threads=1, precision="int8").encode(TEXTS), int8, atol=1e-6)


@pytest.mark.heavy
def test_batches_hold_at_most_the_token_budget_and_embed_as_one_by_one() -> None:
    model = MiniLM(threads=1)
    texts = ["x " * n for n in (3, 200, 5, 120, 7, 60, 250, 9, 2, 30)]
    shapes: list[tuple[int, int]] = []
    run = model._session.run

    def counted(names: object, feed: dict) -> object:
        shapes.append(feed["input_ids"].shape)
        return run(names, feed)

    model._session.run = counted
    batched = model.encode(texts, batch_size=4, batch_tokens=512)
    assert all(rows * width <= 512 and rows <= 4 for rows, width in shapes)
    assert sum(rows for rows, _ in shapes) == len(texts) and len(shapes) < len(texts)
    one_by_one = np.stack([model.encode([t])[0] for t in texts])
    assert np.allclose(batched, one_by_one, atol=1e-5)
