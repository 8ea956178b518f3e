"""SIGKILL of the watch daemon mid-batch.

Each trial starts ``knoxidx watch --json`` on a private copy of a corpus, changes a batch of
files at once (edits, truncations, deletions, new files), and SIGKILLs the daemon at a random
point of the batch's update (the delay is drawn over the time such a batch took in an earlier
trial, after the debounce). While it is down more files change. A new daemon is started;
once its start-up update is logged it is stopped, and the index must equal a clean rebuild of
the files on disk: every change seen (nothing missed), nothing left of deleted files (no
ghost nodes), integrity ok, chunks in step.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
import time
from pathlib import Path

from bench.reliability.common import Outcome, copy_tree, graph_of, run_cli
from bench.reliability.daemon import Daemon
from bench.reliability.kill_index import chunks_in_step, integrity, mutate
from knoxidx.update.verify import clean_graph

DEBOUNCE_MS = 50


def kill_watch(corpus: Path, trials: int, *, seed: int = 2,
               workdir: Path | None = None) -> Outcome:
    outcome = Outcome(f"SIGKILL of `knoxidx watch` mid-batch ({corpus.name})")
    rng = random.Random(seed)
    base = Path(tempfile.mkdtemp(prefix="knoxidx-killwatch-", dir=workdir))
    root = copy_tree(corpus, base / corpus.name)
    db = root / ".knoxidx" / "index.db"
    batch_s = 1.0  # refined from the batches the daemons log
    landed = {"before the batch": 0, "during the batch": 0, "after the batch": 0}
    try:
        first = run_cli("index", str(root))
        if first.returncode != 0:
            outcome.fail(f"the first build failed: {first.stderr[-300:]}")
            return outcome
        for trial in range(1, trials + 1):
            daemon = Daemon("watch", str(root), "--json", "--debounce-ms", str(DEBOUNCE_MS))
            daemon.expect(r'"event": "batch".*"reason": "start"')
            mutate(root, "branch" if trial % 3 == 0 else "edit", rng, trial * 1000)
            changed_at = time.monotonic()
            time.sleep(DEBOUNCE_MS / 1000 + rng.uniform(0.0, batch_s))
            daemon.kill()
            killed_after = time.monotonic() - changed_at
            batches = [json.loads(line) for line in daemon.poll_lines()
                       if '"event": "batch"' in line]
            if batches:
                landed["after the batch"] += 1
                batch_s = max(batch_s, batches[-1]["ms"] / 1000)
            elif killed_after > DEBOUNCE_MS / 1000 + 0.05:
                landed["during the batch"] += 1
            else:
                landed["before the batch"] += 1
            mutate(root, "edit", rng, trial * 1000 + 500)  # changes while nobody watches
            outcome.trials += 1
            label = f"trial {trial} (killed {killed_after:.2f} s after the changes)"
            check = integrity(db)
            if check != "ok":
                outcome.fail(f"{label}: integrity_check: {check}")
            again = Daemon("watch", str(root), "--json", "--debounce-ms", str(DEBOUNCE_MS))
            try:
                start = json.loads(again.expect(r'"event": "batch".*"reason": "start"').string)
                batch_s = max(batch_s, start["ms"] / 1000)
            except RuntimeError as exc:
                outcome.fail(f"{label}: the restarted watcher: {exc}")
                again.kill()
                continue
            if again.stop() != 0:
                outcome.fail(f"{label}: the restarted watcher did not stop cleanly")
            clean, after = clean_graph(root), graph_of(root)
            if after != clean:
                missing = len(clean[0] - after[0]) + len(clean[1] - after[1])
                ghosts = len(after[0] - clean[0]) + len(after[1] - clean[1])
                outcome.fail(f"{label}: after the restart {missing} nodes/edges missed, "
                             f"{ghosts} ghosts")
            stale = chunks_in_step(db)
            if stale:
                outcome.fail(f"{label}: search side: {stale}")
        outcome.figures = {"corpus": str(corpus), "kills_landed": landed,
                           "largest_batch_s": round(batch_s, 2)}
        return outcome
    finally:
        shutil.rmtree(base, ignore_errors=True)
