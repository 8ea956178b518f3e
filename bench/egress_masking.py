"""How often secret masking fires on real code, and on what: the false-positive measurement for
``knoxidx.retrieval.secrets``.

For every file knoxidx would index in each corpus project (same discovery: .gitignore, size
limit), it counts the masks by kind, the files that match a default never-send pattern, and,
for three kinds of random-looking literal that are *not* secrets in ordinary code (hex digests
of 32+ digits, UUIDs, base64 runs of 24+ characters), how many fall inside a masked span: the
false-positive rate the issue asks about. A sample of every masked line is written out for
reading by a person (which masks are real secrets is a judgement, not a computation).

    python -m bench.egress_masking [--corpus ~/.cache/knoxidx-corpus] [--quick]
                                   [--out bench/results/egress_masking.json]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

from knoxidx.parse.discovery import discover
from knoxidx.retrieval.egress import EgressPolicy
from knoxidx.retrieval.secrets import find_secrets

DEFAULT_CORPUS = Path.home() / ".cache" / "knoxidx-corpus"
LITERALS = {
    "hex-digest": re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{32,}(?![0-9A-Za-z])"),
    "uuid": re.compile(
        r"(?<![0-9A-Za-z])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
        r"[0-9a-fA-F]{12}(?![0-9A-Za-z])"
    ),
    # at least one digit, one upper and one lower case letter: data, not an identifier
    "base64": re.compile(
        r"(?<![0-9A-Za-z+/])(?=[A-Za-z0-9+/]*[0-9])(?=[A-Za-z0-9+/]*[A-Z])"
        r"(?=[A-Za-z0-9+/]*[a-z])[A-Za-z0-9+/]{24,}={0,2}(?![0-9A-Za-z+/])"
    ),
}


def projects(corpus: Path) -> list[Path]:
    """The projects the corpus manifest lists (``lang/name``), else every ``lang/name`` folder
    (hidden ones skipped)."""
    manifest = corpus / "MANIFEST.loc"
    if manifest.is_file():
        names = [line.split()[0] for line in manifest.read_text().splitlines()[1:] if line.strip()]
        return [corpus / name for name in names if (corpus / name).is_dir()]
    return sorted(p for lang in corpus.iterdir() if lang.is_dir() and not lang.name.startswith(".")
                  for p in lang.iterdir() if p.is_dir() and not p.name.startswith("."))


def measure(corpus: Path, quick: bool, samples: int, seed: int = 7) -> dict[str, Any]:
    policy = EgressPolicy()
    kinds: Counter[str] = Counter()
    literal_total: Counter[str] = Counter()
    literal_masked: Counter[str] = Counter()
    masked_lines: list[dict[str, Any]] = []
    never_send: list[str] = []
    files = files_with_masks = size = 0
    t0 = time.perf_counter()
    chosen = projects(corpus)
    if quick:  # one project per language
        seen: set[str] = set()
        chosen = [p for p in chosen if not (p.parent.name in seen or seen.add(p.parent.name))]
    for project in chosen:
        for source in discover(project).files:
            rel = f"{project.parent.name}/{project.name}/{source.path}"
            if not policy.allows(source.path):
                never_send.append(rel)
            text = (project / source.path).read_bytes().decode("utf-8", errors="replace")
            files += 1
            size += len(text)
            findings = find_secrets(text)
            if findings:
                files_with_masks += 1
            for f in findings:
                kinds[f.kind] += 1
                line_no = text.count("\n", 0, f.start) + 1
                start = text.rfind("\n", 0, f.start) + 1
                end = text.find("\n", f.end)
                masked_lines.append({"kind": f.kind, "where": f"{rel}:{line_no}",
                                     "line": text[start:end if end >= 0 else None][:200]})
            for name, pattern in LITERALS.items():
                for m in pattern.finditer(text):
                    literal_total[name] += 1
                    if any(f.start < m.end() and m.start() < f.end for f in findings):
                        literal_masked[name] += 1
    seconds = time.perf_counter() - t0
    rng = random.Random(seed)
    sample = rng.sample(masked_lines, min(samples, len(masked_lines)))
    return {
        "corpus": str(corpus),
        "projects": [f"{p.parent.name}/{p.name}" for p in chosen],
        "files": files,
        "megabytes": round(size / 1e6, 1),
        "seconds": round(seconds, 1),
        "files_with_masks": files_with_masks,
        "masks_by_kind": dict(kinds.most_common()),
        "random_literals": {
            name: {"total": literal_total[name], "masked": literal_masked[name],
                   "rate": round(literal_masked[name] / literal_total[name], 5)
                   if literal_total[name] else 0.0}
            for name in LITERALS
        },
        "never_send_files": never_send,
        "sample": sorted(sample, key=lambda s: (s["kind"], s["where"])),
        "all_masked": masked_lines,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--quick", action="store_true", help="one project per language")
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus}")
        return 2
    result = measure(args.corpus, args.quick, args.samples)
    summary = {k: v for k, v in result.items() if k not in ("sample", "all_masked")}
    summary["never_send_files"] = len(result["never_send_files"])
    print(json.dumps(summary, indent=2))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
