"""``python -m bench.external_check CORPUS [WORKDIR]``: the calls knoxidx leaves unresolved as
"external" (outside the index) at a site where the compiler oracle resolves a call of the same
name to a definition inside the corpus: each is a call wrongly said to leave the index. Also
counts the unresolved calls by reason, and prints the "unknown" ones by name.

Runs the corpus's oracle (kept in ``WORKDIR/oracle.jsonl``; delete it to rerun) and indexes the
corpus in place (graph only), then reads the index's ``unresolved`` table."""

from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from bench import accuracy as acc
from bench.accuracy_suite import FULL, KNOXIDX, oracle


def _called(name: str) -> str:
    """The name a call row is for: the last of the path as written (`a.b().c` -> c)."""
    return name.rpartition(".")[2].removesuffix("()")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path, help="e.g. ~/.cache/knoxidx-corpus/java/javac")
    ap.add_argument("workdir", type=Path, nargs="?", default=None,
                    help="where the oracle's rows are kept (default: a temporary folder)")
    ap.add_argument("--top", type=int, default=30, help="how many unknown names to list")
    args = ap.parse_args(argv)
    corpus = args.corpus.expanduser().resolve()
    kind = FULL.get(f"{corpus.parent.name}/{corpus.name}", "ts")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        rows = workdir / "oracle.jsonl"
        if not rows.exists():
            oracle(corpus, kind, rows, None)
        found = acc.Oracle.load(rows)
    subprocess.run([*KNOXIDX, "index", "--graph-only", str(corpus)], check=True,
                   stdout=subprocess.DEVNULL)
    inside: dict[tuple[str, int, str], str] = {}
    for r in found.calls:
        inside.setdefault((r.path, r.line, r.name), f"{r.target_path}:{r.target_line}")
    db = sqlite3.connect(corpus / ".knoxidx" / "index.db")
    unresolved = db.execute("SELECT f.path, u.line, u.name, u.reason FROM unresolved u"
                            " JOIN files f ON f.id = u.file_id WHERE u.kind = 'call'").fetchall()
    # a site's call the index resolved already answers the oracle's row of that name there
    # (`a.hashCode() ^ b.hashCode()`: one the JDK's, one the corpus's)
    resolved = set(db.execute("SELECT f.path, e.line, n.name FROM edges e JOIN files f"
                              " ON f.id = e.file_id JOIN nodes n ON n.id = e.target"
                              " WHERE e.type = 'Calls'").fetchall())
    db.close()
    for key in resolved:
        inside.pop(key, None)
    reasons = Counter(reason for _, _, _, reason in unresolved)
    print(f"{corpus.parent.name}/{corpus.name}: unresolved calls "
          + ", ".join(f"{r}={n}" for r, n in sorted(reasons.items())))
    wrong = [(path, line, name, inside[(path, line, _called(name))])
             for path, line, name, reason in unresolved
             if reason == "external" and (path, line, _called(name)) in inside]
    print(f"external where the oracle resolves inside the corpus: {len(wrong)}")
    for path, line, name, target in wrong:
        print(f"  {path}:{line}\t{name}\t-> {target}")
    unknown = Counter(name for _, _, name, reason in unresolved if reason == "unknown")
    print(f"unknown, by name (top {args.top}):")
    for name, n in unknown.most_common(args.top):
        print(f"  {n}\t{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
