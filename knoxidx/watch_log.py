"""The watcher's log: one line per event (a batch applied, a warning, an error, start and
stop), as JSON objects or as short text for a terminal."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import IO, Any

from knoxidx.core.terminal import json_text, visible
from knoxidx.watch_status import now

Emit = Callable[[str, dict[str, Any]], None]


def line_emitter(out: IO[str], as_json: bool) -> Emit:
    """One line per event on ``out``: JSON objects with ``--json``, else short text."""
    lock = threading.Lock()

    def emit(event: str, data: dict[str, Any]) -> None:
        # a changed file's name is the repository's: shown, never obeyed, by a terminal
        if as_json:
            text = json_text({"event": event, "time": now(), **data})
        else:
            text = f"{datetime.now().strftime('%H:%M:%S')} {visible(_human(event, data))}"
        with lock:
            out.write(text + "\n")
            out.flush()

    return emit


def _human(event: str, d: dict[str, Any]) -> str:
    if event == "batch":
        what = "initial update" if d["reason"] == "start" else (
            "reconcile" if d["reason"] == "reconcile" else f"batch {d['batch']}")
        seen = f"{d['paths']} paths, " if d["reason"] == "changes" else ""
        return (f"{what}: {seen}{d['changed']} changed ({d['added']} new), {d['removed']} "
                f"removed, {d['resolved']} re-resolved; nodes {d['nodes']} "
                f"({d['nodes_delta']:+d}), edges {d['edges']} ({d['edges_delta']:+d}); "
                f"{d['ms']:.0f} ms")
    if event == "start":
        return (f"watching {d['root']} (debounce {d['debounce_ms']} ms, "
                f"{d['watched_dirs']} watches); Ctrl-C stops")
    if event == "stop":
        left = d.get("pending_paths") or 0
        return "stopped" + (f"; {left} changed paths will be picked up by the next start"
                            if left else "")
    if event == "embedded":
        return f"embedded every chunk ({d['chunks_embedded']}): semantic search covers the index"
    if event == "error":
        retry = f"; retrying in {d['retry_in_s']:.0f} s" if "retry_in_s" in d else ""
        return f"error: {d['error']}{retry}"
    return f"{event}: {d.get('message', d)}"
