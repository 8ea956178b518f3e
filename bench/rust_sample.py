"""Rust call-graph precision from a hand-judged sample: no compiler oracle runs offline here
(rustc is on the machine, but tokio's and syn's dependencies are not vendored in the corpus).

``--draw`` indexes each crate (a copy, so the corpus stays clean), exports its Calls edges and
draws a stratified sample, seeded: per stratum (confidence x call form) at most ``PER_STRATUM``
edges. New edges are appended to ``bench/rust_sample/<crate>.jsonl`` with ``verdict`` empty;
an edge already there keeps its verdict, and one the index no longer makes is dropped. A person judges each by reading the code and writes
``verdict`` ("right", "wrong" or "undecidable") and a one-line ``reason``.

Records marked ``"sample": "new-edges"`` were drawn apart (seeded, 40 per crate) from the Calls
edges that extracting the items inside macro calls and the extern prelude added, and judged the
same way: a draw keeps them like any judged edge. ``"sample": "new-edges-bounds"`` ones likewise
(all 28 of tokio's; 40 of syn's, seeded, the 3 that paths through a type parameter added
after and 15 of the 85 that loops over the crate's own iterators added, seeded) from those
that generic bounds, trait default methods, loop variables and `::` paths past locals added.
``"sample": "new-edges-tuples"``: 40 of the 381 tokio edges (seeded) that tuple lets added
(`let (tx, rx) = mpsc::channel(8)`; syn gained none). ``"sample": "new-edges-trait-paths"``:
all 103 edges (102 of syn's, 1 of tokio's) that reading `Trait::method(x, ..)` as a call on
x's type changed from the trait's declaration to an impl's method, each judged by the declared
type of the receiver (`FoldHelper::lift(node.attrs, ..)`: the field `attrs: Vec<Attribute>`).
``"sample": "new-edges-wrapped"``: 29 of the 81 tokio edges (25 seeded, 55, and every one of a
method name drawn once) that `let x = Arc::new(T::new(..))` reading x as the T added, and all
25 that `x.clone().m()` inside a chain (a clone the crate does not write) added.
``"sample": "new-edges-unwrapped"``: all 11 tokio edges that reading `.unwrap()`, `.expect(..)`
and `.await` on a call's result as the value it holds added (syn gained none).
``"sample": "new-edges-qualified-result"``: 40 of the 325 (seeded) that reading `io::Result<T>`
(an `Option` or `Result` named by its path) as T added.
``"sample": "new-edges-patterns"``: all 93 (87 of tokio's, 6 of syn's) that pattern bindings
(`if let Some(x) = f()`, `while let`, `let .. else`, `match` arms, `Some(w) = w`), std's
element methods (`self.tx.take()`), `Self` in an impl inside a function or an inline `mod`,
type arguments with parentheses (`Sender<()>`) and a caller's own `cfg` twin added.
``"sample": "new-edges-declared-wrappers"``: all 125 tokio edges (syn gained none) that keeping a
declared type's wrapper (`Arc<Mutex<T>>` is a Mutex, whose `lock()` lends the T) and reading a
declared type's path past a local or function of its first name (`chan: chan::Tx<..>`) added;
the two wrong ones (an un-awaited future's `map`) are no longer made.
``"sample": "new-edges-macro-use"``: 30 of the 223 tokio edges and 15 of the 93 syn edges
(seeded, ``55:<crate>:macro-use``) that macros brought by `#[macro_use] mod` declarations and
`#[macro_export]` macros by their crate's path added (`ready!`, `tokio::select!`, `braced!`).

Without ``--draw`` it reads the recorded verdicts and prints precision per stratum, per crate
and overall (undecidable ones counted apart, in neither numerator nor denominator)::

    python -m bench.rust_sample [--draw] [--corpus ~/.cache/knoxidx-corpus]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
SAMPLES = BENCH / "rust_sample"
CRATES = ("tokio", "syn")
SEED = 55
PER_STRATUM = 22
FORMS = ("path", "Self::", "self.", "method", "bare", "macro")
KNOXIDX = [sys.executable, "-c", "from knoxidx.cli import run; run()"]


def call_form(line: str, name: str) -> str:
    """How the call at ``line`` names ``name``: `a::b()`, `Self::b()`, `self.b()`, `x.b()`,
    `b()` or a macro `b!()` (the first written form of the name on the line)."""
    match = re.search(r"(Self::|\bself\.|::|(?<!\.)\.)?(?:<[^>]*>::)?\b" + re.escape(name) + r"\s*(!|::<|\()",
                      line)
    if match is None:
        return "bare"
    if match.group(2) == "!":
        return "macro"
    return {"Self::": "Self::", "self.": "self.", "::": "path", ".": "method"}.get(
        match.group(1) or "", "bare")


def export_of(crate_root: Path) -> dict[str, Any]:
    """The graph of a fresh index of the crate (a copy, so the corpus stays clean)."""
    with tempfile.TemporaryDirectory(prefix="knoxidx-rust-sample-") as tmp:
        copy = Path(tmp) / crate_root.name
        shutil.copytree(crate_root, copy, ignore=shutil.ignore_patterns(".knoxidx"))
        subprocess.run([*KNOXIDX, "index", str(copy), "--offline", "--no-embed"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return json.loads(subprocess.run([*KNOXIDX, "export", str(copy)], check=True,
                                         capture_output=True, text=True).stdout)


def calls_of(crate_root: Path) -> list[dict[str, Any]]:
    """The crate's Calls edges, each with its site's text and call form."""
    export = export_of(crate_root)
    nodes = {n["id"]: n for n in export["nodes"]}
    lines: dict[str, list[str]] = {}
    out = []
    for e in export["edges"]:
        if e["type"] != "Calls":
            continue
        source, target = nodes[e["source"]], nodes[e["target"]]
        path = e["path"] or source["path"]
        if path not in lines:
            lines[path] = (crate_root / path).read_text(errors="replace").splitlines()
        text = lines[path][e["line"] - 1].strip()
        out.append({"site": f"{path}:{e['line']}", "caller": source["qualified_name"],
                    "callee": target["qualified_name"], "callee_at":
                    f"{target['path']}:{target['start_line']}", "confidence": e["confidence"],
                    "form": call_form(text, target["name"]), "code": text[:160]})
    return sorted(out, key=lambda r: (r["site"], r["callee"]))


def draw(crate: str, edges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_stratum: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for e in edges:
        by_stratum[(e["confidence"], e["form"])].append(e)
    rng = random.Random(f"{SEED}:{crate}")
    picked = []
    for stratum in sorted(by_stratum):
        group = by_stratum[stratum]
        picked.extend(rng.sample(group, min(PER_STRATUM, len(group))))
    return picked


def _key(record: dict[str, Any]) -> tuple[str, str, str, str]:
    # the callee's place too: an inherent and a trait impl's method share a qualified name
    return record["site"], record["callee"], record["callee_at"], record["confidence"]


def load(crate: str) -> list[dict[str, Any]]:
    path = SAMPLES / f"{crate}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def save_drawn(crate: str, drawn: list[dict[str, Any]], edges: list[dict[str, Any]],
               population: Counter) -> None:
    """Adds the drawn edges not judged yet; drops judged ones the index no longer makes."""
    current = {_key(e) for e in edges}
    known = {_key(r): r for r in load(crate) if _key(r) in current}
    for record in drawn:
        known.setdefault(_key(record), {**record, "verdict": "", "reason": ""})
    SAMPLES.mkdir(exist_ok=True)
    rows = sorted(known.values(), key=lambda r: (r["confidence"], r["form"], r["site"]))
    (SAMPLES / f"{crate}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (SAMPLES / f"{crate}.population.json").write_text(
        json.dumps({f"{c}/{f}": n for (c, f), n in sorted(population.items())}, indent=1) + "\n")


def precision(records: list[dict[str, Any]]) -> tuple[float | None, int, int, int]:
    """(precision, right, wrong, undecidable) over the judged records."""
    verdicts = Counter(r["verdict"] for r in records)
    right, wrong = verdicts["right"], verdicts["wrong"]
    judged = right + wrong
    return (right / judged if judged else None), right, wrong, verdicts["undecidable"]


def report() -> dict[str, Any]:
    result: dict[str, Any] = {}
    every: list[dict[str, Any]] = []
    weighted_right = weighted_all = 0.0
    for crate in CRATES:
        records = [r for r in load(crate) if r.get("verdict")]
        every.extend(records)
        population_path = SAMPLES / f"{crate}.population.json"
        population = json.loads(population_path.read_text()) if population_path.exists() else {}
        strata: dict[str, Any] = {}
        by_stratum: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in records:
            by_stratum[f"{r['confidence']}/{r['form']}"].append(r)
        for stratum, group in sorted(by_stratum.items()):
            p, right, wrong, undecidable = precision(group)
            size = population.get(stratum, 0)
            strata[stratum] = {"precision": p, "right": right, "wrong": wrong,
                               "undecidable": undecidable, "edges_in_crate": size}
            if p is not None:  # the stratum's precision stands for all its edges
                weighted_right += p * size
                weighted_all += size
        p, right, wrong, undecidable = precision(records)
        result[crate] = {"precision_of_sample": p, "right": right, "wrong": wrong,
                         "undecidable": undecidable, "strata": strata}
    p, right, wrong, undecidable = precision(every)
    result["overall"] = {"precision_of_sample": p, "right": right, "wrong": wrong,
                         "undecidable": undecidable,
                         "precision_weighted_by_stratum_size":
                             weighted_right / weighted_all if weighted_all else None}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draw", action="store_true", help="index the crates and draw new edges")
    parser.add_argument("--corpus", type=Path, default=Path.home() / ".cache" / "knoxidx-corpus")
    args = parser.parse_args(argv)
    if args.draw:
        for crate in CRATES:
            edges = calls_of(args.corpus / "rust" / crate)
            population = Counter((e["confidence"], e["form"]) for e in edges)
            save_drawn(crate, draw(crate, edges), edges, population)
    print(json.dumps(report(), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
