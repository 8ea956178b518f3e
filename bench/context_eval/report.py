"""Per-language and overall figures from the walked repositories, and their markdown tables."""

from __future__ import annotations

import statistics
from typing import Any

from bench.context_eval.systems import SYSTEMS

LANGUAGE_NAMES = {"python": "Python", "go": "Go", "rust": "Rust", "java": "Java",
                  "js": "TypeScript"}
SYSTEM_NAMES = {"context": "knoxidx context", "retrieval": "plain retrieval",
                "bm25": "BM25 windows", "gold_files": "gold-file ceiling"}


def metrics(tasks: list[dict[str, Any]], system: str, budget: str) -> dict[str, Any]:
    scored = [t["systems"][system][budget] for t in tasks]
    if not scored:
        return {"tasks": 0}
    ranks = [s["first_rank"] for s in scored if s["first_rank"] is not None]
    gold = sum(s["gold"] for s in scored)
    return {
        "tasks": len(scored),
        "recall": round(sum(s["covered"] for s in scored) / gold, 4) if gold else 0.0,
        "success": round(sum(s["success"] for s in scored) / len(scored), 4),
        "any_hit": round(sum(s["any_hit"] for s in scored) / len(scored), 4),
        "file_hit": round(sum(s["file_hit"] for s in scored) / len(scored), 4),
        "first_rank_mean": round(statistics.mean(ranks), 2) if ranks else None,
        "first_rank_median": statistics.median(ranks) if ranks else None,
    }


def summarise(runs: list[dict[str, Any]], budgets: list[str]) -> dict[str, Any]:
    """``{variant: {group: {system: {budget: metrics, "named": ..., "unnamed": ...}}}}`` where
    a group is a language (its repository) or ``overall, N repos`` (their tasks pooled)."""
    out: dict[str, Any] = {}
    for variant in ("no_embeddings", "embeddings"):
        chosen = [r for r in runs if r["embeddings"] == (variant == "embeddings")]
        if not chosen:
            continue
        groups = {group_name(r): r["tasks"] for r in sorted(chosen, key=lambda r: r["repo"])}
        if len(groups) > 1:
            groups[f"overall, {len(groups)} repos"] = [t for r in chosen for t in r["tasks"]]
        out[variant] = {}
        for group, tasks in groups.items():
            named = [t for t in tasks if t["names_gold"]]
            unnamed = [t for t in tasks if not t["names_gold"]]
            out[variant][group] = {
                system: {budget: {**metrics(tasks, system, budget),
                                  "named": metrics(named, system, budget),
                                  "unnamed": metrics(unnamed, system, budget)}
                         for budget in budgets}
                for system in SYSTEMS
            }
    return out


def group_name(run: dict[str, Any]) -> str:
    family = run["mining"]["family"]
    return f"{LANGUAGE_NAMES.get(family, family)} ({run['repo']})"


def _f(value: Any) -> str:
    return "–" if value is None else f"{value:.2f}"


def _rank(value: Any) -> str:
    return "–" if value is None else f"{value:.1f}"


def markdown(summary: dict[str, Any], budgets: list[str]) -> str:
    low, high = budgets[0], budgets[-1]
    k = {b: f"{int(b) // 1000}k" for b in budgets}
    lines: list[str] = []
    for variant, groups in summary.items():
        title = "with embeddings" if variant == "embeddings" else "without embeddings"
        lines += [f"**{title}**", "",
                  f"| language (tasks) | system | recall @{k[low]} | recall @{k[high]} | "
                  f"success @{k[low]} | success @{k[high]} | any-hit @{k[low]} / @{k[high]} | "
                  f"file-hit @{k[low]} / @{k[high]} | first covering block @{k[high]} "
                  "(mean / median) |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for group, systems in groups.items():
            n = systems["context"][low]["tasks"]
            for system in SYSTEMS:
                a, b = systems[system][low], systems[system][high]
                lines.append(
                    f"| {group} ({n}) | {SYSTEM_NAMES[system]} | {_f(a['recall'])} | "
                    f"{_f(b['recall'])} | {_f(a['success'])} | {_f(b['success'])} | "
                    f"{_f(a['any_hit'])} / {_f(b['any_hit'])} | "
                    f"{_f(a['file_hit'])} / {_f(b['file_hit'])} | "
                    f"{_rank(b['first_rank_mean'])} / {_rank(b['first_rank_median'])} |")
        lines.append("")
        overall = list(groups.values())[-1]  # the pooled group when there are several
        lines += [f"Questions that name a gold definition vs not ({title}, all tasks):", "",
                  f"| system | named: recall @{k[low]} / @{k[high]} | named: success "
                  f"@{k[low]} / @{k[high]} | not named: recall @{k[low]} / @{k[high]} | "
                  f"not named: success @{k[low]} / @{k[high]} |",
                  "|---|---|---|---|---|"]
        for system in SYSTEMS:
            a, b = overall[system][low], overall[system][high]
            lines.append(
                f"| {SYSTEM_NAMES[system]} | {_f(a['named'].get('recall'))} / "
                f"{_f(b['named'].get('recall'))} ({a['named']['tasks']} tasks) | "
                f"{_f(a['named'].get('success'))} / {_f(b['named'].get('success'))} | "
                f"{_f(a['unnamed'].get('recall'))} / {_f(b['unnamed'].get('recall'))} "
                f"({a['unnamed']['tasks']} tasks) | {_f(a['unnamed'].get('success'))} / "
                f"{_f(b['unnamed'].get('success'))} |")
        lines.append("")
    return "\n".join(lines)
