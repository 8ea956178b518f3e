"""The local model's low-rank adapter: which file a setting chooses, what it does to the
weights, that the vectors it makes are told apart from the plain model's, and a clear error for
an adapter that does not fit."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from knoxidx.core.config import load_settings
from knoxidx.retrieval.backends import (
    ADAPTERS_DIR,
    DEFAULT_ADAPTER,
    LOCAL_ADAPTER_ENV,
    LocalEmbedder,
    adapter_path,
    select_embedder,
)
from knoxidx.retrieval.errors import EmbeddingConfigError, ModelUnavailableError
from knoxidx.retrieval.minilm import (
    CACHE_DIR_ENV,
    MiniLM,
    cached_graph_path,
    merge_adapter,
    read_safetensors,
)
from knoxidx.retrieval.model_files import model_dir

QUERY = "open a network socket to a host"


def write_adapter(path: Path, tensors: dict[str, np.ndarray]) -> Path:
    """A safetensors file, written by hand (the format: u64 header size, JSON header, data)."""
    header, offset, blobs = {}, 0, []
    for name, array in tensors.items():
        data = np.ascontiguousarray(array, dtype=np.float16).tobytes()
        header[name] = {"dtype": "F16", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))
    return path


def test_the_setting_chooses_the_adapter_file(tmp_path: Path) -> None:
    bundled = ADAPTERS_DIR / f"{DEFAULT_ADAPTER}.safetensors"
    assert bundled.is_file() and bundled.stat().st_size < 2_000_000
    assert adapter_path(None) == bundled == adapter_path(DEFAULT_ADAPTER)
    assert adapter_path("none") is None and adapter_path(" None ") is None
    own = write_adapter(tmp_path / "mine.safetensors", {})
    assert adapter_path(str(own)) == own
    with pytest.raises(EmbeddingConfigError, match="unknown local adapter 'code-v9'.*code-v1"):
        adapter_path("code-v9")
    with pytest.raises(EmbeddingConfigError, match="unknown local adapter"):
        adapter_path(str(tmp_path / "missing.safetensors"))
    unreadable = tmp_path / "locked.safetensors"
    unreadable.mkdir()  # a folder by that name: there, but not a file to read
    with pytest.raises(EmbeddingConfigError, match="unknown local adapter"):
        LocalEmbedder(adapter=str(unreadable))


def test_each_adapter_is_its_own_model_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An index records the model id; a different adapter (or a refit one under the same name)
    must read as another model, so its vectors are re-made rather than mixed."""
    monkeypatch.delenv(LOCAL_ADAPTER_ENV, raising=False)
    plain = LocalEmbedder(adapter="none").model_id
    default = LocalEmbedder().model_id
    assert plain == "local/all-MiniLM-L6-v2@int8/condensed-v2/256"
    assert default.startswith("local/all-MiniLM-L6-v2+code-v1.") and default != plain
    assert LocalEmbedder(adapter="none", precision="fp32").model_id == (
        "local/all-MiniLM-L6-v2/condensed-v2/256")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write_adapter(tmp_path / "a" / "x.safetensors", {})
    second = write_adapter(tmp_path / "b" / "x.safetensors",
                           {"encoder.layer.0.output.dense.weight.lora_a": np.zeros((1, 1536))})
    ids = {LocalEmbedder(adapter=str(p)).model_id for p in (first, second)}
    assert len(ids) == 2 and all("+x." in i for i in ids)
    assert select_embedder({}).model_id == default
    assert select_embedder({"local_adapter": "none"}).model_id == plain
    monkeypatch.setenv(LOCAL_ADAPTER_ENV, "none")  # the environment overrides the file
    assert select_embedder({"local_adapter": "code-v1"}).model_id == plain
    assert LocalEmbedder().model_id == plain
    assert select_embedder({}, env={}).model_id == default


def test_the_config_file_chooses_the_adapter(tmp_path: Path) -> None:
    (tmp_path / "knoxidx.toml").write_text('[local]\nadapter = "none"\n')
    settings = load_settings(tmp_path, env={})
    assert select_embedder(settings.embedder_config(), env={}).model_id.endswith(
        "all-MiniLM-L6-v2@int8/condensed-v2/256")
    (tmp_path / "knoxidx.toml").write_text('[local]\nadapter = "/tmp/x.safetensors"\n')
    with pytest.raises(Exception, match="adapter"):
        load_settings(tmp_path, env={})


def test_merge_adds_the_low_rank_product_and_refuses_a_misfit(tmp_path: Path) -> None:
    weights = read_safetensors(model_dir() / "model.safetensors")
    name = "encoder.layer.2.attention.self.value.weight"
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(4, 384)) * 0.1, rng.normal(size=(384, 4)) * 0.1
    adapter = write_adapter(tmp_path / "ok.safetensors", {f"{name}.lora_a": a, f"{name}.lora_b": b})
    merged = merge_adapter(weights, adapter)
    expected = weights[name] + b.astype(np.float16).astype(np.float64) @ a.astype(
        np.float16).astype(np.float64)
    assert np.allclose(merged[name], expected, atol=1e-5)
    untouched = "encoder.layer.2.attention.self.query.weight"
    assert merged[untouched] is weights[untouched]
    bad = write_adapter(tmp_path / "bad.safetensors",
                        {f"{name}.lora_a": a[:, :100], f"{name}.lora_b": b})
    with pytest.raises(ModelUnavailableError, match="does not fit the model.*another shape"):
        merge_adapter(weights, bad)
    garbage = tmp_path / "garbage.safetensors"
    for content in (b"", b"\x10\x00\x00\x00\x00\x00\x00\x00not json at all!", b"\xff" * 64):
        garbage.write_bytes(content)
        with pytest.raises(ModelUnavailableError, match="cannot be read as safetensors"):
            merge_adapter(weights, garbage)
    unknown = write_adapter(tmp_path / "unknown.safetensors",
                            {"no.such.weight.lora_a": a, "no.such.weight.lora_b": b})
    with pytest.raises(ModelUnavailableError, match="no.such.weight is not in the model"):
        merge_adapter(weights, unknown)


@pytest.mark.heavy
def test_an_adapter_changes_the_vectors_and_its_graph_is_cached_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    name = "encoder.layer.5.output.dense.weight"
    zero = write_adapter(tmp_path / "zero.safetensors",
                         {f"{name}.lora_a": np.ones((2, 1536)), f"{name}.lora_b": np.zeros((384, 2))})
    assert cached_graph_path(model_dir(), zero) != cached_graph_path(model_dir())
    plain = MiniLM(threads=1).encode([QUERY])[0]
    assert np.allclose(MiniLM(threads=1, adapter=zero).encode([QUERY])[0], plain, atol=1e-6)
    bundled = MiniLM(threads=1, adapter=adapter_path(None)).encode([QUERY])[0]
    assert abs(float(np.linalg.norm(bundled)) - 1.0) < 1e-5
    assert float(bundled @ plain) < 0.9999  # a real change, not the plain model again
