"""How long a file change takes to reach the graph while a watcher embeds in the background.

    python -m bench.reliability.watch_embed_latency SOURCE_DIR [--edits 10] [--file util.py]

SOURCE_DIR is copied to a scratch directory and indexed with ``--no-embed`` (every chunk
pending), then ``knoxidx watch --json`` runs on it twice: with ``KNOXIDX_EMBED=0`` and with
embedding on. Each time, ``--edits`` appends to ``--file`` 1.5 s apart are timed from the write
to the watcher's log line for the batch that applied it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.reliability.common import knoxidx_command

EDIT_GAP_S = 1.5
EMBEDDING_UNDER_WAY_S = 3.0


def _changes_logged(lines: list[tuple[float, dict[str, Any]]]) -> int:
    return sum(1 for _, d in lines if d["event"] == "batch" and d["reason"] == "changes")


def measure(root: Path, embed: str, edits: int, target: str) -> str:
    proc = subprocess.Popen(knoxidx_command("watch", "--json", "--reconcile-s", "0", str(root)),
                            env={**os.environ, "KNOXIDX_EMBED": embed},
                            stdout=subprocess.PIPE, text=True)
    lines: list[tuple[float, dict[str, Any]]] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append((time.monotonic(), json.loads(line)))

    threading.Thread(target=read, daemon=True).start()
    try:
        while not any(d["event"] == "batch" for _, d in lines):
            time.sleep(0.05)
        time.sleep(EMBEDDING_UNDER_WAY_S)
        latencies = []
        for i in range(edits):
            seen = _changes_logged(lines)
            t0 = time.monotonic()
            with open(root / target, "a", encoding="utf-8") as handle:
                handle.write(f"\n\ndef kx_latency_{embed}_{i}():\n    return {i}\n")
            while _changes_logged(lines) == seen:
                time.sleep(0.01)
            latencies.append(lines[-1][0] - t0)
            time.sleep(EDIT_GAP_S)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    conn = sqlite3.connect(root / ".knoxidx" / "index.db")
    vectors, pending = conn.execute("SELECT (SELECT count(*) FROM chunk_vector), "
                                    "(SELECT count(*) FROM embed_pending)").fetchone()
    conn.close()
    return (f"KNOXIDX_EMBED={embed}: write -> batch logged: median "
            f"{statistics.median(latencies) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms; "
            f"vectors {vectors}, pending {pending} at the end")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path)
    ap.add_argument("--edits", type=int, default=10)
    ap.add_argument("--file", default="util.py", help="the file to append to, in SOURCE_DIR")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kx-watch-embed") as scratch:
        for embed in ("0", "1"):
            root = Path(scratch) / f"repo-{embed}"
            shutil.copytree(args.source, root, ignore=shutil.ignore_patterns(".knoxidx"))
            subprocess.run(knoxidx_command("index", "--no-embed", str(root)), check=True,
                           capture_output=True)
            print(measure(root, embed, args.edits, args.file), flush=True)


if __name__ == "__main__":
    main()
