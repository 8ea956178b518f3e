"""The optimised model graph is cached on disk, and a load from the cache embeds exactly like a
fresh build; a damaged cache is rebuilt rather than fatal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from knoxidx.retrieval import minilm
from knoxidx.retrieval.minilm import CACHE_DIR_ENV, MiniLM, cached_graph_path, model_dir

TEXTS = ["parse the config file", "def load_user_settings(path): return json.load(path)"]


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
