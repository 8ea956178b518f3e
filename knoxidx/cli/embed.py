"""Embedding from the command line: ``knoxidx index`` embeds the new chunks once the graph and
lexical search are saved (so both answer at once, whatever happens to the embedding), and
``knoxidx embed`` does only that. Progress is a bar on a terminal, else a plain line on stderr
at most every :data:`PROGRESS_EVERY_S` (a log or a CI job otherwise shows nothing for minutes).
Every batch is committed as it is done: an interrupted run keeps them, the next one resumes.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import IO, Any

import click

from knoxidx.cli.output import counted
from knoxidx.core.terminal import visible

PROGRESS_EVERY_S = 5.0
Progress = Callable[[str, int, int], None]


class ProgressLines:
    """``embedded 120/501 chunks, 4.8/s, ~80 s left`` on ``out``, at most every ``every``
    seconds (none for a run shorter than that); the rate is measured from the first report."""

    def __init__(self, out: IO[str], every: float = PROGRESS_EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.out, self.every, self.clock = out, every, clock
        self._start: tuple[float, int] | None = None
        self._last_line = 0.0

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase != "embed":
            return
        now = self.clock()
        if self._start is None:
            self._start, self._last_line = (now, done), now
            return
        if now - self._last_line < self.every or done >= total:  # the end has its own line
            return
        self._last_line = now
        started, done_then = self._start
        rate = (done - done_then) / (now - started) if now > started else 0.0
        left = f", ~{(total - done) / rate:.0f} s left" if rate > 0 and done < total else ""
        self.out.write(f"embedded {done}/{total} chunks, {rate:.1f}/s{left}\n")
        self.out.flush()


class _LastSeen:
    """A progress callback that remembers the latest (done, total) of the embedding."""

    def __init__(self, inner: Progress | None) -> None:
        self.inner = inner
        self.done: int | None = None
        self.total = 0

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase == "embed":
            self.done, self.total = done, total
        if self.inner is not None:
            self.inner(phase, done, total)


def embed_progress(*, as_json: bool) -> tuple[Progress | None, Callable[[], None]]:
    """The bar on a terminal (not with --json: the answer is the output), else plain lines."""
    from knoxidx.cli.output import progress_bar

    if sys.stderr.isatty():
        return progress_bar(enabled=not as_json)
    return ProgressLines(sys.stderr), lambda: None


def embed_after_index(index: Any, data: dict[str, Any], *, wait: bool, as_json: bool,
                      asked: bool) -> None:
    """Embed what ``knoxidx index`` left pending and add the figures to its answer ``data``
    (``retrieval``: embedded, from_cache, pending, stopped, timings.embed...). Offline with
    Voyage configured, embedding by default is skipped (the local model's vectors would
    replace Voyage's); ``asked`` (--embed) embeds as ``knoxidx embed`` does: locally."""
    from knoxidx.update.retrieval_steps import add_embed_figures, remote_embedding_refused

    retrieval = data.get("retrieval")
    if not retrieval or not retrieval.get("pending"):
        return  # nothing to embed: the model is not even loaded
    refused = "" if asked else remote_embedding_refused(index)
    if refused:
        retrieval["embed_skipped"] = refused
        if not as_json:
            click.echo(f"note: {refused}", err=True)
        return
    from knoxidx.retrieval.errors import EmbeddingConfigError, ModelUnavailableError

    bar, finish = embed_progress(as_json=as_json)
    seen = _LastSeen(bar)
    try:
        done = index.embed(progress=seen, wait=wait)
    except (EmbeddingConfigError, ModelUnavailableError) as exc:
        finish()
        if asked:  # --embed: the embedding is what was asked for
            raise
        # by default the index itself succeeded: say why nothing was embedded, exit 0
        retrieval["embed_skipped"] = f"not embedded: {exc}"
        if not as_json:
            click.echo(f"warning: not embedded: {visible(str(exc))}; the graph and lexical "
                       "search are up to date (`knoxidx embed` once it is fixed)", err=True)
        return
    except KeyboardInterrupt:
        finish()
        if seen.done is not None:
            click.echo(f"embedding interrupted: {seen.done} of {seen.total} chunks embedded and "
                       "kept; `knoxidx index` (or `knoxidx embed`) goes on from there", err=True)
        raise
    finish()
    add_embed_figures(retrieval, done)
    if not as_json:
        print_embedded(done)


def print_embedded(data: dict[str, Any]) -> None:
    """The human lines of an embedding run (``knoxidx embed``, and ``knoxidx index``'s last)."""
    if data["model_switch"]:
        click.echo(f"note: {data['model_switch']}", err=True)
    click.echo(
        f"embedded {counted(data['embedded'], 'chunk')} ({data['from_cache']} more from the "
        f"cache) with {data['model']} in {data['seconds']:.1f}s "
        f"({data['chunks_per_second']:.1f}/s); {data['pending']} pending, "
        f"{counted(data['chunks'], 'chunk')} in all"
    )
    if data.get("withheld"):
        click.echo(f"note: {data['withheld']} chunks of never-send files were kept from the "
                   "remote embedder (lexical search only; `knoxidx egress` lists them)", err=True)
    if data["stopped"]:
        click.echo(f"error: stopped early: {data['stopped']}", err=True)
