"""A watcher's embedding in spare time: the pending chunks of its open index embedded one small
batch at a time when no change waits (:mod:`knoxidx.update.background_embed`), each failure
logged and said, and retried later, the counts shown in the watcher's status."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from typing import Any

from knoxidx.core.errors import CorruptIndexError, IndexGoneError
from knoxidx.graph.dbfile import storage_error
from knoxidx.update.background_embed import BackgroundEmbedding
from knoxidx.watch_log import Emit

log = logging.getLogger(__name__)


class SpareTimeEmbedding:
    """The background embedding of a watcher's index; ``show`` sets fields of the watcher's
    status, ``should_yield`` says when a change or a stop waits."""

    def __init__(self, index: Any, *, emit: Emit, show: Callable[..., None],
                 should_yield: Callable[[], bool]) -> None:
        self.background = BackgroundEmbedding(index, should_yield=should_yield)
        self.emit = emit
        self.show = show

    def due(self) -> bool:
        return self.background.due()

    def step(self) -> None:
        """One batch of pending chunks; a failure is logged and retried later (the chunks stay
        pending, the graph is untouched)."""
        embedding = self.background
        try:
            done = embedding.step()
        except (CorruptIndexError, IndexGoneError):
            raise
        except Exception as exc:  # noqa: BLE001  (vectors are extra: the watcher goes on)
            if isinstance(exc, sqlite3.DatabaseError):
                said = storage_error(exc, embedding.index.store.path)
                if isinstance(said, CorruptIndexError):  # damage stops the watcher
                    raise said from None
                exc = said  # a full disk: said plainly, retried later
            log.exception("background embedding failed")
            self.emit("warning", {"message": f"embedding paused for a minute: "
                                             f"{type(exc).__name__}: {exc}"})
        else:
            if done.get("stopped"):
                self.emit("warning", {"message": f"embedding paused for a minute: "
                                                 f"{done['stopped']}"})
            if done.get("model_switch"):
                self.emit("warning", {"message": done["model_switch"]})
            if embedding.pending == 0 and (done.get("embedded") or done.get("from_cache")):
                self.emit("embedded", {"chunks_embedded": embedding.embedded,
                                       "chunks_pending": 0})
        self.show_state()

    def refresh(self) -> None:
        """Count the pending chunks again (an update added some)."""
        self.background.refresh_counts()
        self.show_state()

    def show_state(self) -> None:
        embedding = self.background
        state = embedding.disabled or ("embedding" if embedding.due() else "waiting")
        self.show(chunks_embedded=embedding.embedded, chunks_pending=embedding.pending,
                  embedding=state)

    def close(self) -> None:
        self.background.close()
