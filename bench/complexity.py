"""``python -m bench.complexity [CORPUS]``: knoxidx's cyclomatic complexity against lizard's
(and, for Python, radon's) on real code.

For every source file of the corpus (``$KNOXIDX_CORPUS``, else ``~/.cache/knoxidx-corpus``;
``--step N`` reads every N-th file), knoxidx's Function nodes (``extract``) and each oracle's
functions are matched by (file, start line); per language it prints the share of knoxidx's
functions the oracle also found, the share of those matched with exactly the oracle's
complexity, and the mean absolute difference. ``--show N`` prints N differing functions per
language, for finding which construct differs. Which constructs knoxidx counts, and where it
departs from lizard on purpose: CONTRIBUTING.md, "Complexity".
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from knoxidx.languages.registry import language_for_path
from knoxidx.parse.extract import extract

DEFAULT_CORPUS = Path.home() / ".cache" / "knoxidx-corpus"
MAX_FILE_BYTES = 1_000_000  # knoxidx's own default size limit; lizard is slow on huge files


@dataclass(slots=True)
class Tally:
    """One language's comparison with one oracle."""

    files: int = 0
    ours: int = 0  # knoxidx's functions
    theirs: int = 0  # the oracle's
    matched: int = 0
    exact: int = 0
    abs_diff: int = 0
    oracle_failed: int = 0  # files the oracle could not read, left out
    oracle_overran: int = 0  # functions the oracle read past the end of, left out
    differing: list[tuple[str, int, str, int, int]] = field(default_factory=list)

    def row(self) -> dict[str, float | int]:
        return {
            "files": self.files, "oracle_failed": self.oracle_failed,
            "knoxidx_functions": self.ours, "oracle_functions": self.theirs,
            "matched": self.matched, "oracle_overran": self.oracle_overran,
            "matched_share": round(self.matched / self.ours, 4) if self.ours else 0.0,
            "exact_share": round(self.exact / self.matched, 4) if self.matched else 0.0,
            "mean_abs_diff": round(self.abs_diff / self.matched, 4) if self.matched else 0.0,
        }


def source_files(root: Path, step: int) -> Iterator[tuple[Path, str]]:
    """Every ``step``-th file of ``root`` that knoxidx reads, with its language, in path
    order (the downloads the corpus script leaves are not corpus)."""
    found = sorted(p for p in root.rglob("*") if p.is_file() and ".downloads" not in p.parts
                   and ".knoxidx" not in p.parts)
    count = 0
    for path in found:
        spec = language_for_path(path.name)
        # (stubs: lizard reads no .pyi, and they hold no control flow)
        if spec is None or path.suffix == ".pyi" or path.stat().st_size > MAX_FILE_BYTES:
            continue
        if count % step == 0:
            yield path, spec.name
        count += 1


# knoxidx's function: (name, end line, cyclomatic); the oracle's: (name, end line, cyclomatic)
Found = dict[int, tuple[str, int, int]]


def knoxidx_functions(path: Path, source: bytes, language: str) -> Found:
    """knoxidx's functions by start line; the first of a line's."""
    found: Found = {}
    for d in extract(path.as_posix(), source, language).defs:
        if d.kind == "Function" and d.cyclomatic:
            found.setdefault(d.start_line, (d.name, d.end_line, d.cyclomatic))
    return found


def lizard_functions(path: Path, source: bytes) -> Found | None:
    """lizard's functions by start line: cyclomatic complexity; the first of a line's. None
    where lizard fails on the file (its TypeScript reader raises IndexError on some)."""
    from lizard import analyze_file

    try:
        info = analyze_file.analyze_source_code(path.name, source.decode("utf-8", "replace"))
    except Exception:  # noqa: BLE001 - an oracle's own bug: the file is left out, counted
        return None
    found: Found = {}
    for function in info.function_list:
        name = function.name.replace("::", ".").rsplit(".", 1)[-1]
        found.setdefault(function.start_line,
                         (name, function.end_line, function.cyclomatic_complexity))
    return found


def radon_functions(source: bytes) -> Found | None:
    """radon's functions and methods (nested ones too) by start line; None where radon's
    parser (Python's ``ast`` of this interpreter) rejects the file."""
    from radon.complexity import cc_visit

    try:
        blocks = cc_visit(source.decode("utf-8", "replace"))
    except (SyntaxError, ValueError):
        return None
    found: Found = {}
    pending = list(blocks)
    while pending:
        block = pending.pop()
        if hasattr(block, "methods"):  # a class
            pending.extend(block.methods)
            pending.extend(getattr(block, "inner_classes", ()))
            continue
        found.setdefault(block.lineno, (block.name, block.endline, block.complexity))
        pending.extend(getattr(block, "closures", ()))
    return found


def compare(ours: Found, theirs: Found, tally: Tally, rel: str) -> None:
    """Each of ``ours`` against the oracle's function at its start line, else the oracle's of
    the same name starting inside it (Java's annotations: knoxidx's method starts at them,
    lizard's at its name). Not compared where the oracle's function ends after knoxidx's: the
    oracle read past its end (lizard runs a body-less Rust trait method or a TypeScript
    overload on into the next function's body)."""
    tally.files += 1
    tally.ours += len(ours)
    tally.theirs += len(theirs)
    by_name: dict[str, list[int]] = {}
    for line, (their_name, _, _) in theirs.items():
        by_name.setdefault(their_name, []).append(line)
    for line, (name, end, cyclomatic) in ours.items():
        match = theirs.get(line)
        if match is None:
            inside = [at for at in by_name.get(name, ()) if line < at <= end]
            if not inside:
                continue
            match = theirs[inside[0]]
        _, their_end, expected = match
        if their_end > end:
            tally.oracle_overran += 1
            continue
        tally.matched += 1
        if expected == cyclomatic:
            tally.exact += 1
        else:
            tally.abs_diff += abs(expected - cyclomatic)
            tally.differing.append((rel, line, name, cyclomatic, expected))


def run(root: Path, step: int) -> dict[str, dict[str, Tally]]:
    """Per oracle ("lizard", "radon"), per language: the tallies."""
    results: dict[str, dict[str, Tally]] = {"lizard": {}, "radon": {}}
    for path, language in source_files(root, step):
        source = path.read_bytes()
        rel = path.relative_to(root).as_posix()
        ours = knoxidx_functions(path, source, language)
        lizard = lizard_functions(path, source)
        tally = results["lizard"].setdefault(language, Tally())
        if lizard is None:
            tally.oracle_failed += 1
        else:
            compare(ours, lizard, tally, rel)
        if language == "python":
            radon = radon_functions(source)
            tally = results["radon"].setdefault(language, Tally())
            if radon is None:
                tally.oracle_failed += 1
            else:
                compare(ours, radon, tally, rel)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.complexity", description=__doc__)
    parser.add_argument("corpus", nargs="?", type=Path,
                        default=Path(os.environ.get("KNOXIDX_CORPUS", DEFAULT_CORPUS)))
    parser.add_argument("--step", type=int, default=1, help="read every N-th file")
    parser.add_argument("--show", type=int, default=0, help="differing functions to print")
    parser.add_argument("--json", action="store_true", help="the table as JSON")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus}: fetch it with ../shared/corpus/get-corpus.sh",
              file=sys.stderr)
        return 2
    results = run(args.corpus, max(1, args.step))
    table = {oracle: {lang: t.row() for lang, t in sorted(tallies.items())}
             for oracle, tallies in results.items()}
    if args.json:
        print(json.dumps(table, indent=1))
    else:
        print("| oracle | language | files (oracle failed) | knoxidx functions | matched by (file, line) "
              "| oracle overran | exactly the oracle's | mean abs. difference |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for oracle, rows in table.items():
            for lang, row in rows.items():
                print(f"| {oracle} | {lang} | {row['files']} ({row['oracle_failed']}) | {row['knoxidx_functions']} | "
                      f"{row['matched_share']:.1%} | {row['oracle_overran']} | {row['exact_share']:.1%} | "
                      f"{row['mean_abs_diff']:.3f} |")
    for oracle, tallies in results.items():
        for lang, tally in sorted(tallies.items()):
            for rel, line, name, ours, theirs in tally.differing[:args.show]:
                print(f"{oracle} {lang} {rel}:{line} {name}: knoxidx {ours}, {oracle} {theirs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
