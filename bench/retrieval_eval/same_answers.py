"""Whether search answers alike in two indexes of the same files reached by different histories.

    python -m bench.retrieval_eval.same_answers REPO [--commits 40] [--step 4] [--queries 150]

``REPO`` is any git repository (``../shared/history/click.bundle`` clones to one). Two clones
in a scratch folder are indexed without embedding: *walked* at ``HEAD~commits``, then updated
at every ``step``-th first-parent commit up to HEAD (files added, edited and deleted in the
order the project did); *built* once, clean, at HEAD. Each chunk symbol's name (the first
``--queries`` in sorted order), and the same name with ``_`` as spaces, is asked of both in
lexical and hybrid mode; prints how many top-10 lists differ.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from knoxidx.index import Index


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True).stdout


def tip(repo: Path) -> str:
    """The commit of ``repo``'s HEAD, else of its first branch (a bundle may name no HEAD)."""
    refs = [line.split("\t") for line in subprocess.run(
        ["git", "ls-remote", str(repo)], check=True, capture_output=True,
        text=True).stdout.splitlines()]
    named = {name: sha for sha, name in refs}
    return named.get("HEAD") or next(sha for sha, name in refs if name.startswith("refs/heads/"))


def index(root: Path) -> None:
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1, history=False)


def top(idx: Index, query: str, mode: str) -> list[tuple[str, int, int]]:
    return [(r["path"], r["start_line"], r["end_line"])
            for r in idx.search(query, k=10, mode=mode)["results"]]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo", type=Path)
    parser.add_argument("--commits", type=int, default=40)
    parser.add_argument("--step", type=int, default=4)
    parser.add_argument("--queries", type=int, default=150)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="knoxidx-same-answers-") as scratch:
        walked, built = Path(scratch) / "walked", Path(scratch) / "built"
        for clone in (walked, built):
            subprocess.run(["git", "clone", "-q", str(args.repo), str(clone)], check=True,
                           capture_output=True)
        head = tip(args.repo)
        git(built, "checkout", "-q", head)
        commits = git(walked, "rev-list", "--first-parent", "--reverse",
                      f"{head}~{args.commits}..{head}").split()
        git(walked, "checkout", "-q", f"{head}~{args.commits}")
        index(walked)
        for commit in [*commits[args.step - 1 :: args.step], head]:
            git(walked, "checkout", "-q", commit)
            index(walked)
        index(built)
        with Index.open(walked) as a, Index.open(built) as b:
            names = sorted({row[0] for row in b.store.conn.execute(
                "SELECT DISTINCT symbol FROM chunk WHERE length(symbol) > 3")})
            queries = names[: args.queries]
            queries += [q.replace("_", " ").strip() for q in queries]
            for mode in ("lexical", "hybrid"):
                differ = sum(top(a, q, mode) != top(b, q, mode) for q in queries)
                print(f"{mode}: {differ} of {len(queries)} queries' top 10 differ "
                      f"(walked {len(commits) // args.step + 1} updates vs a clean build)")


if __name__ == "__main__":
    main()
