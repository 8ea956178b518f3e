"""Kill `knoxidx index` while it embeds, count what stayed, and let the next run finish.

    python -m bench.reliability.kill_embed SOURCE_DIR [--sigint-after 25] [--sigkill-after 20]

SOURCE_DIR is copied to a scratch directory (fresh index, no embedding cache). Run 1 gets
SIGINT (Ctrl-C) and run 2 SIGKILL after the given seconds; run 3 goes to the end. After each,
the chunks, vectors and pending chunks are counted in the index: every finished batch must
stay, and run 3 must embed exactly what was pending, none of it from the cache.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

from bench.reliability.common import knoxidx_command

EMBEDDING_ON = {"KNOXIDX_EMBED": "1"}  # common.py turns it off for the other scenarios


def counts(root: Path) -> tuple[int, int, int]:
    conn = sqlite3.connect(root / ".knoxidx" / "index.db")
    try:
        return conn.execute(
            "SELECT (SELECT count(*) FROM chunk), (SELECT count(*) FROM chunk_vector), "
            "(SELECT count(*) FROM embed_pending)").fetchone()
    finally:
        conn.close()


def interrupted_run(root: Path, sig: signal.Signals, after: float) -> None:
    proc = subprocess.Popen(
        knoxidx_command("index", str(root)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, **EMBEDDING_ON},
        # a shell's background job ignores SIGINT, and the child would inherit that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(after)
    proc.send_signal(sig)
    out, err = proc.communicate()
    print(f"{sig.name} after {after:g} s: exit {proc.returncode}")
    for line in (out + err).strip().splitlines()[-4:]:
        print(f"  {line}")
    print("  chunks, vectors, pending:", counts(root), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path)
    ap.add_argument("--sigint-after", type=float, default=25.0)
    ap.add_argument("--sigkill-after", type=float, default=20.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kx-kill-embed") as scratch:
        root = Path(scratch) / "repo"
        shutil.copytree(args.source, root, ignore=shutil.ignore_patterns(".knoxidx"))
        interrupted_run(root, signal.SIGINT, args.sigint_after)
        interrupted_run(root, signal.SIGKILL, args.sigkill_after)
        pending = counts(root)[2]
        t0 = time.perf_counter()
        done = subprocess.run(knoxidx_command("index", "--json", str(root)), text=True,
                              capture_output=True, env={**os.environ, **EMBEDDING_ON})
        retrieval = json.loads(done.stdout)["retrieval"]
        print(f"to the end: exit {done.returncode} in {time.perf_counter() - t0:.1f} s, "
              f"embedded {retrieval['embedded']} (from the cache {retrieval['from_cache']}) "
              f"of {pending} pending")
        print("  chunks, vectors, pending:", counts(root))
        whole = counts(root)
        ok = whole[1] == whole[0] and whole[2] == 0 and retrieval["embedded"] == pending \
            and retrieval["from_cache"] == 0
        print("nothing lost, nothing embedded twice" if ok else "FAILED")


if __name__ == "__main__":
    main()
