"""The retrieval targets checked against measured results, and the markdown table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.retrieval_eval.run import MODES, LanguageResult

TARGET_RECALL = 0.80
TARGET_MRR = 0.55
SPREAD = 0.15  # each language within this of the mean (Recall@10 and MRR@10)
LEXICAL_GAP = 0.15  # hybrid Recall@10 at least this above lexical-only


def summarise(results: Sequence[LanguageResult]) -> dict[str, Any]:
    if not results:
        return {}
    mean = {
        mode: {
            metric: round(sum(r.metrics[mode][metric] for r in results) / len(results), 4)
            for metric in ("recall@10", "mrr@10")
        }
        for mode in MODES
    }
    hybrid = mean["hybrid"]
    within = {
        r.language: all(
            abs(r.metrics["hybrid"][m] - hybrid[m]) <= SPREAD for m in ("recall@10", "mrr@10")
        )
        for r in results
    }
    gap = round(hybrid["recall@10"] - mean["lexical"]["recall@10"], 4)
    return {
        "mean": mean,
        "within_spread": within,
        "hybrid_minus_lexical_recall@10": gap,
        "targets_met": {
            "recall@10>=0.80": hybrid["recall@10"] >= TARGET_RECALL,
            "mrr@10>=0.55": hybrid["mrr@10"] >= TARGET_MRR,
            "each_language_within_0.15": all(within.values()),
            "hybrid_minus_lexical>=0.15": gap >= LEXICAL_GAP,
        },
    }


def markdown_table(results: Sequence[LanguageResult], summary: dict[str, Any]) -> str:
    head = (
        "| language (project) | queries | files / lines / chunks | hybrid R@10 / MRR@10 "
        "| lexical R@10 / MRR@10 | vector R@10 / MRR@10 | within 0.15 of mean |\n"
        "|---|---|---|---|---|---|---|"
    )
    rows = [head]
    for r in results:
        cells = [f"{r.language} ({r.project})", str(r.queries),
                 f"{r.files} / {r.lines:,} / {r.chunks:,}"]
        cells += [_pair(r.metrics[mode]) for mode in MODES]
        cells.append("yes" if summary["within_spread"][r.language] else "**no**")
        rows.append("| " + " | ".join(cells) + " |")
    mean = summary["mean"]
    rows.append("| **mean** | | | " + " | ".join(f"**{_pair(mean[m])}**" for m in MODES) + " | |")
    gap = summary["hybrid_minus_lexical_recall@10"]
    met = ", ".join(f"{k}: {'yes' if v else 'no'}" for k, v in summary["targets_met"].items())
    rows.append("")
    rows.append(f"Hybrid - lexical Recall@10: {gap:+.3f}. Targets: {met}.")
    return "\n".join(rows)


def _pair(metrics: dict[str, float]) -> str:
    return f"{metrics['recall@10']:.2f} / {metrics['mrr@10']:.2f}"
