"""``knoxidx search`` and ``knoxidx embed``: registered on :data:`knoxidx.cli.main` when
``knoxidx.cli`` is imported. Thin: parse, call :class:`knoxidx.index.Index`, print. Nothing
heavy is imported here; the model loads only when a vector search or embedding needs it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

import click

from knoxidx.cli.group import main
from knoxidx.cli.options import (
    Text,
    WholeRange,
    json_option,
    offline_option,
    open_index,
    path_argument,
    store_options,
)
from knoxidx.cli.output import emit
from knoxidx.core.errors import BadInputError
from knoxidx.core.limits import MAX_NAME_CHARS, MAX_PATH_CHARS, MAX_QUERY_CHARS
from knoxidx.core.terminal import json_text

MODES = ("hybrid", "lexical", "vector")
SNIPPET_WIDTH = 100
# numpy's OpenBLAS starts a thread per core when numpy is imported; a search does no BLAS
# work (its cosines are einsum, MODELS.md), and one thread is ~0.04 CPU-s less per command
OPENBLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"


def one_blas_thread() -> None:
    """Before numpy is imported: OpenBLAS with one thread, unless the user chose a number."""
    os.environ.setdefault(OPENBLAS_THREADS_ENV, "1")


@main.command("search")
@click.argument("query", required=False, type=Text(MAX_QUERY_CHARS))
@click.argument("path", required=False, default=".", type=click.Path())
@click.option("-k", "k", type=WholeRange(1, 100), default=10, show_default=True,
              help="How many results.")
@click.option("--mode", type=click.Choice(MODES, case_sensitive=False), default="hybrid",
              show_default=True,
              help="hybrid: words + meaning + symbol names; lexical: words and names only "
                   "(no model); vector: meaning only.")
@click.option("--lang", "language", type=Text(MAX_NAME_CHARS), default=None,
              help="Only this language: python, typescript (incl. tsx), tsx, javascript, js "
                   "(all three), rust, go, java.")
@click.option("--path", "path_glob", type=Text(MAX_PATH_CHARS), default=None,
              help="Only paths matching this glob ('*' crosses '/'), or under this directory.")
@click.option("--batch", "batch", type=click.File("r", encoding="utf-8"), default=None,
              help="Run one query per line of FILE ('-': stdin); prints one JSON object per "
                   "query, in order.")
@json_option
@offline_option
@store_options
def search_cmd(query: str | None, path: str, k: int, mode: str, language: str | None,
               path_glob: str | None, batch: TextIO | None, as_json: bool) -> None:
    """Find the code that matches QUERY: words, identifiers, or a description of what it does.

    \b
    Examples:
      knoxidx search "parse the config file"
      knoxidx search UserSerializer --mode lexical
      knoxidx search "retry with backoff" --lang python --path 'src/net/*'
    """
    one_blas_thread()
    if batch is not None:
        if query is not None and path != ".":
            raise click.UsageError("with --batch, give only PATH (the queries come from FILE)")
        _search_batch(batch, query if query is not None else path, k, mode, language, path_glob)
        return
    if query is None:
        raise click.UsageError("missing QUERY (or pass --batch FILE)")
    with open_index(path) as idx:
        data = idx.search(query, k=k, mode=mode, language=language, path_glob=path_glob)
    emit(data, as_json, _print_results)


def _search_batch(lines: TextIO, path: str, k: int, mode: str, language: str | None,
                  path_glob: str | None) -> None:
    """One JSON line per non-blank input line, in order; a query that is itself invalid (too
    long) gets ``{"query", "error"}`` so that the output stays line-aligned with the input."""
    from knoxidx.retrieval.errors import SearchInputError
    from knoxidx.retrieval.searcher import searcher_for, validate

    validate("-", k, mode, language, path_glob)  # the options, once, before any output
    with open_index(path) as idx:
        searcher = searcher_for(idx)  # one searcher: the model loads once for every query
        for line in _text_lines(lines):
            query = line.strip()
            if not query:
                continue
            try:
                data = searcher.search(query, k=k, mode=mode, language=language,
                                       path_glob=path_glob)
            except SearchInputError as exc:
                data = {"query": query, "error": str(exc)}
            click.echo(json_text(data))


def _text_lines(lines: TextIO) -> Iterator[str]:
    """The lines of the --batch file, ending in one line of error where it is not UTF-8."""
    try:
        yield from lines
    except UnicodeDecodeError as exc:
        raise BadInputError(f"--batch {lines.name} is not UTF-8 text ({exc.reason})") from None


def _print_results(data: dict) -> None:
    if data["note"]:  # e.g. how much of the index vector search covers yet
        click.echo(f"note: {data['note']}", err=True)
    from knoxidx.api.schemas import disclosure_note

    note = disclosure_note(data)
    if note:
        click.echo(f"note: {note}", err=True)
    if not data["results"]:
        click.echo(f"no results for {data['query']!r}")
        return
    for r in data["results"]:
        what = f"  {r['kind']} {r['symbol']}" if r["symbol"] else ""
        others = len(r.get("definitions", ())) - 1
        if what and others > 0:  # a chunk kept whole: say it holds more than the one named
            what += f" (+{others} more)"
        click.echo(f"{r['path']}:{r['start_line']}-{r['end_line']}{what}  {r['score']:.4f}")
        line = _snippet_line(r["snippet"], data["query"])
        if line:
            click.echo(f"    {line}")


def _snippet_line(snippet: str, query: str) -> str:
    """The snippet's line sharing most words with the query, trimmed to one terminal line."""
    from knoxidx.retrieval.hybrid_search import best_line

    lines = snippet.split("\n")
    line = lines[best_line(snippet, query)].strip() if lines else ""
    return line if len(line) <= SNIPPET_WIDTH else line[: SNIPPET_WIDTH - 1] + "…"


@main.command("embed")
@path_argument
@click.option("--limit", type=WholeRange(0), default=None,
              help="Embed at most this many chunks now (the rest stay pending).")
@click.option("--wait", is_flag=True, help="Wait for another writer instead of failing.")
@json_option
@offline_option
@store_options
def embed_cmd(path: str, limit: int | None, wait: bool, as_json: bool) -> None:
    """Embed the chunks not embedded yet, with the local model (or $KNOXIDX_EMBEDDER).

    Interrupting it (Ctrl-C) keeps every finished batch; the next run carries on.
    """
    from knoxidx.cli.embed import embed_progress, print_embedded

    with open_index(path) as idx:
        progress, finish = embed_progress(as_json=as_json)
        try:
            data = idx.embed(progress=progress, limit=limit, wait=wait)
        finally:
            finish()
    emit(data, as_json, print_embedded)
    if data["stopped"]:
        sys.exit(1)


@main.command("egress")
@path_argument
@click.option("--days", type=WholeRange(1, 3650), default=30, show_default=True,
              help="How many days back (UTC, today included).")
@json_option
def egress_cmd(path: str, days: int, as_json: bool) -> None:
    """What left the machine for remote services (Voyage), by day: requests, chunks, bytes,
    files, secrets masked; and the chunks of never-send files that were withheld."""
    with open_index(path) as idx:
        data = idx.egress(days)
    emit(data, as_json, _print_egress)


def _print_egress(data: dict[str, Any]) -> None:
    mode = f"offline ({data['offline_because']})" if data["offline"] else \
        f"embedder {data['embedder']}"
    click.echo(f"egress of {data['root']}: {mode}, secrets "
               f"{'masked' if data['mask_secrets'] else 'NOT masked'}; ledger {data['ledger']}")
    if not data["days"]:
        click.echo(f"nothing sent in the last {data['window_days']} days")
    for day in data["days"]:
        for e in day["by_endpoint"]:
            click.echo(f"{day['day']}  {e['service']} {e['endpoint']} {e['model']}: "
                       f"{e['requests']} requests, {e['chunks']} chunks, "
                       f"{_size(e['bytes'])}, {e['files']} files{_masked(e['masked'])}")
    t = data["total"]
    if data["days"]:
        click.echo(f"total ({data['window_days']} days): {t['requests']} requests, "
                   f"{t['chunks']} chunks, {_size(t['bytes'])}, {t['files']} files"
                   f"{_masked(t['masked'])}")
    withheld = data["withheld"]
    if withheld["chunks"]:
        files = withheld["files"]
        shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        click.echo(f"withheld (never-send, lexical search only): {withheld['chunks']} chunks "
                   f"of {len(files)} files: {shown}")
    if data["unreadable_lines"]:
        click.echo(f"warning: {data['unreadable_lines']} unreadable ledger lines (a crash "
                   "mid-write) were skipped", err=True)


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024 or unit == "MB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def _masked(counts: dict[str, int]) -> str:
    if not counts:
        return ""
    return "; masked " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
