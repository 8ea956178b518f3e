"""``python -m bench.long_runs``: real files with one character repeated 30,000 times inside.

Random mutation rarely builds a long run of one character, and a run is where a scan that is
linear per position turns quadratic: a regex that tries ``\\s*`` at every space of a run, a
window that moves one blank line at a time. Each case is a corpus file (2-30 kB) with
``--length`` copies of one character (or a pair) inserted at a random offset, put through
``bench.fuzz``'s case check (read, extract, node rows, chunks, FTS columns, embedded texts).
Prints the slowest case per character and language and exits 1 if any took over ``--slow``
seconds (a parse stopped by its deadline aside) or raised. Deterministic for a ``--seed``.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

from bench.fuzz import DEFAULT_CORPUS, check_case
from bench.mutate import LANGUAGE_NAMES, corpus_files

CHARACTERS = {"space": b" ", "newline": b"\n", "cr": b"\r", "tab": b"\t", "ident": b"a",
              "dot": b".", "paren": b"(", "comma": b",", "lt": b"<", "colon": b":",
              "star": b"*", "quote": b"'", "newline-space": b"\n ",
              # pairs: nesting, comments, chains, argument lists, strings
              "parens": b"()", "braces": b"{}", "brackets": b"[]", "angles": b"<>",
              "comment-open": b"/*", "line-comment": b"//\n", "call": b"a(", "member": b"a.",
              "arguments": b"a,", "strings": b'""'}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--files", type=int, default=25, help="files per language")
    parser.add_argument("--offsets", type=int, default=6, help="cases per file and character")
    parser.add_argument("--length", type=int, default=30_000)
    parser.add_argument("--slow", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--characters", default=",".join(CHARACTERS))
    args = parser.parse_args(argv)
    findings = 0
    with tempfile.TemporaryDirectory(prefix="knoxidx-runs-") as tmp:
        for name in args.characters.split(","):
            run = CHARACTERS[name] * args.length
            for language in LANGUAGE_NAMES:
                rng = random.Random(f"{args.seed}:{name}:{language}")
                files = [p for p in corpus_files(args.corpus, language)
                         if 2_000 < p.stat().st_size < 30_000]
                rng.shuffle(files)
                worst = (0.0, "")
                for path in files[: args.files]:
                    data = path.read_bytes()
                    for _ in range(args.offsets):
                        at = rng.randrange(len(data))
                        status, message, took = check_case(
                            Path(tmp), language, data[:at] + run + data[at:])
                        case = f"{path.relative_to(args.corpus)}@{at}: {status} {message[:80]}"
                        if took > worst[0]:
                            worst = (took, case)
                        # (a parse stopped by its CPU deadline took that long by design)
                        slow = took > args.slow and status != "timeout"
                        if slow or (status == "error" and "deadline" not in message):
                            findings += 1
                            print(f"  FINDING {name} {language} {took:.2f} s {case}", flush=True)
                print(f"{name:13} {language:10} slowest {worst[0]:.2f} s  {worst[1]}", flush=True)
    print(f"{findings} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
