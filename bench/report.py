"""Render bench results as BENCHMARKS.md: every figure next to its baseline and target."""

from __future__ import annotations

from typing import Any


def _f(x: Any, digits: int = 2) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        if x != x:  # NaN
            return "–"
        return f"{x:,.{digits}f}"
    return f"{x:,}" if isinstance(x, int) else str(x)


def _check(ok: bool | None) -> str:
    return "" if ok is None else (" ✅" if ok else " ❌")


BUILDS = {True: "compiled build, ", False: "pure-Python build, "}


def render(r: dict[str, Any]) -> str:
    out = [
        "# knoxidx benchmarks",
        "",
        "Each section says when and where it was measured. Reproduce the generated ones with "
        "`python -m bench` (add `--quick` for the 5-minute version; `--skip SECTION` leaves "
        "that section as it was); raw figures are in `bench/results/`. Corpora: "
        "`../shared/corpus/get-corpus.sh` (PyPI, npm and Debian releases of django, "
        "sqlalchemy, zod, tanstack-query, radix-themes, three, eslint, x/tools, go-git, tokio, "
        "syn, javac, java.time/net).",
        "",
    ]

    def measured(key: str) -> str:
        # a section a --skip run carried over says the runs and machine it was measured with
        how = {**r, **(r.get("earlier", {}).get(key) or {})}
        m = how["machine"]
        build = BUILDS.get(m.get("compiled"), "")
        return (f"Measured {r['date']} on {m['cpu']} ({m['cores']} cores), Python "
                f"{m['python']}, {build}{'quick mode, ' if r.get('quick') else ''}medians "
                f"of {how['runs']} run(s).")

    speed = r.get("speed") or {}
    rows = list(speed.items())
    if r.get("speed_all"):
        rows.append(("all five languages", r["speed_all"]))
    if rows:
        out += [
            "## Cold graph index (no embeddings) vs baselines measured in the same run",
            "",
            measured("speed"),
            "",
            "Baselines: a bare read + tree-sitter parse of the same files in one process (the "
            "physical floor) and `ctags -R` (definitions only). Target: index ≤ 2.5× bare "
            "parse and ≥ 60,000 lines/s overall; peak memory ≤ 600 MB. Each timed build "
            "follows a bare parse (so a drifting host moves both sides of the ratio) and is "
            "not observed; the peak memory is the summed PSS of one more build's process tree, "
            "sampled 20 times a second (the sampling slowed the builds it watched by 8-27 %).",
            "",
            "| corpus | files | lines | bare parse s | ctags s | knoxidx s | ÷ parse | ÷ ctags "
            "| lines/s | peak MB | DB KB/kloc |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name, s in rows:
            out.append(
                f"| {name} | {_f(s['files'])} | {_f(s['lines'])} | {_f(s['bare_parse_s'])} | "
                f"{_f(s['ctags_s'])} | {_f(s['index_s'])} | "
                f"{_f(s['ratio_to_parse'])}{_check(s['ratio_to_parse'] <= 2.5)} | "
                f"{_f(s['ratio_to_ctags'])} | {_f(s['lines_per_s'], 0)} | "
                f"{_f(s['peak_mib'], 0)}{_check(s['peak_mib'] <= 600)} | "
                f"{_f(s['db_bytes_per_kloc'] / 1024, 1)} |"
            )
        out.append("")
        name, s = rows[-1]
        if s.get("parallel_speedup"):
            out += [
                f"What the cores give ({name}): the same bare parse split over {s['cores']} "
                f"processes took {_f(s['parallel_parse_s'])} s, a "
                f"{_f(s['parallel_speedup'])}x speedup over one process (median of "
                f"{len(s['bare_parse_all_s'])} pairs). So a build within 2.5x of the "
                f"one-process parse may do at most {_f(2.5 * s['parallel_speedup'])}x its "
                "single-core work, however well it spreads over the cores.",
                "",
            ]
        if s.get("cpu_ratio_to_parse"):
            out += [
                f"The work ({name}): each timed build's CPU (user and system time of its "
                f"process tree) over its bare parse's was {_f(s['cpu_ratio_to_parse'])}x "
                f"(median of the pairs), and a build kept {_f(s['index_cores_busy'])} cores "
                "busy (its CPU over its wall time): the wall ratio is the one over the other, "
                "so they tell a build that does too much from one that spreads badly.",
                "",
            ]
    inc = r.get("incremental")
    if inc:
        out += [
            f"## Incremental re-index ({inc['corpus']})",
            "",
            measured("incremental"),
            "",
            "Edit N files (a line inserted at the top: every definition moves), then update. "
            "Target for one file: ≤ 0.3 s in-process, ≤ 1 s for the whole `knoxidx index`.",
            "",
            "| files edited | in-process s | whole command s |",
            "|---|---|---|",
        ]
        for n, v in inc.items():
            if n == "corpus":
                continue
            ok_in = v["in_process_s"] <= 0.3 if n == "1" else None
            ok_cmd = v["command_s"] <= 1.0 if n == "1" else None
            out.append(f"| {n} | {_f(v['in_process_s'], 3)}{_check(ok_in)} | "
                       f"{_f(v['command_s'], 3)}{_check(ok_cmd)} |")
        out.append("")
    q = r.get("queries")
    if q:
        out += [
            "## Query latency (same corpus)",
            "",
            measured("queries"),
            "",
            "Targets: `knoxidx callers` ≤ 5 ms in-process and ≤ 0.3 s as a whole command.",
            "",
            "| query | in-process p50 ms | p95 ms | whole command p50 s | p95 s |",
            "|---|---|---|---|---|",
        ]
        for key in ("symbols", "callers", "impact_depth3"):
            v = q.get(key, {})
            cmd = q.get(f"{key}_command", {})
            ok = v.get("p50_ms", 1e9) <= 5 if key == "callers" else None
            okc = cmd.get("p50_s", 1e9) <= 0.3 if key == "callers" and cmd else None
            out.append(f"| {key} | {_f(v.get('p50_ms'))}{_check(ok)} | {_f(v.get('p95_ms'))} | "
                       f"{_f(cmd.get('p50_s'), 3)}{_check(okc)} | {_f(cmd.get('p95_s'), 3)} |")
        out.append("")
    g = r.get("growth")
    if g:
        out += ["## Growth (synthetic repos cloned from the corpora)", "", measured("growth"), "",
                "| lines | index s | peak MB | lines/s |", "|---|---|---|---|"]
        for p in g["points"]:
            out.append(f"| {_f(p['lines'])} | {_f(p['seconds'])} | {_f(p['peak_mib'], 0)} | "
                       f"{_f(p['lines'] / p['seconds'], 0)} |")
        slope = g.get("time_ratio_per_lines_ratio")
        out += ["", f"Time grows {_f(slope)}× as fast as lines between the smallest and "
                    "largest size (1.0 = linear).", ""]
    acc = r.get("accuracy")
    if acc:
        out += ["## Call-graph accuracy", "", measured("accuracy"), "", acc.get("markdown", ""),
                ""]
    return "\n".join(out) + "\n"


def _sections(text: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The lines before the first ``## `` heading, and each ``## `` section (heading, lines)."""
    head: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("## "):
            sections.append((line, [line]))
        elif sections:
            sections[-1][1].append(line)
        else:
            head.append(line)
    return head, sections


def keep_other_sections(rendered: str, previous: str) -> str:
    """``previous`` with the ``## `` sections ``rendered`` produces put in their places, and
    ``rendered``'s new ones after them: the sections a run did not produce (other benchmarks'
    appended sections, e.g. ``python -m bench.postgres``, or a ``--skip``ped one) stay as they
    were, where they were, each with its own "Measured" line."""
    head, new = _sections(rendered)
    _, old = _sections(previous)
    produced = dict(new)
    seen = {heading for heading, _ in old}
    blocks = [produced.get(heading, lines) for heading, lines in old]
    blocks += [lines for heading, lines in new if heading not in seen]
    parts = ["\n".join(head).rstrip("\n")]
    parts += ["\n".join(lines).rstrip("\n") for lines in blocks]
    return "\n\n".join(parts) + "\n"
