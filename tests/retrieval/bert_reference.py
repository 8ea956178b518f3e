"""A plain-numpy BERT encoder with mean pooling: an independent check of the ONNX graph that
``knoxidx.retrieval.minilm`` builds (same weights, written the obvious way)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    centred = x - x.mean(-1, keepdims=True)
    return centred / np.sqrt((centred * centred).mean(-1, keepdims=True) + eps) * w + b


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7)."""
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return np.sign(x) * (1.0 - poly * np.exp(-x * x))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def encode(
    weights: Mapping[str, np.ndarray], ids: list[int], layers: int, heads: int
) -> np.ndarray:
    n = len(ids)

    class _F64(dict):
        def __missing__(self, key: str) -> np.ndarray:
            value = np.asarray(weights[key], dtype=np.float64)
            self[key] = value
            return value

    w = _F64()
    x = (
        np.asarray(weights["embeddings.word_embeddings.weight"][ids], dtype=np.float64)
        + w["embeddings.position_embeddings.weight"][:n]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    hidden = x.shape[1]
    size = hidden // heads
    for i in range(layers):
        p = f"encoder.layer.{i}."

        def dense(v: np.ndarray, name: str, p: str = p) -> np.ndarray:
            return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q, k, v = (dense(x, f"attention.self.{n}") for n in ("query", "key", "value"))
        context = np.zeros_like(x)
        for h in range(heads):
            cols = slice(h * size, (h + 1) * size)
            scores = q[:, cols] @ k[:, cols].T / math.sqrt(size)
            probs = np.exp(scores - scores.max(-1, keepdims=True))
            probs /= probs.sum(-1, keepdims=True)
            context[:, cols] = probs @ v[:, cols]
        x = _layer_norm(
            dense(context, "attention.output.dense") + x,
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
        )
        x = _layer_norm(
            dense(_gelu(dense(x, "intermediate.dense")), "output.dense") + x,
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
        )
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)
