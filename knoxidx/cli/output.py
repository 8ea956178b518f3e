"""How the ``knoxidx`` command prints: an answer (exact JSON or text safe for a terminal), the
progress bar, the line under a truncated page, and the one mapping from an error to its line on
stderr and its exit code."""

from __future__ import annotations

import logging
import sqlite3
import sys
from collections.abc import Callable
from typing import Any

import click

from knoxidx.cli.options import store_error_message
from knoxidx.core.errors import KnoxidxError
from knoxidx.core.terminal import for_terminal, json_text, visible


def emit(data: Any, as_json: bool, human: Callable[[Any], None]) -> None:
    """The one way an answer is printed: exact JSON, or ``human`` over the answer with every
    control character of the repository's text made visible (see :mod:`knoxidx.core.terminal`)."""
    if as_json:
        click.echo(json_text(data, indent=2))
    else:
        human(for_terminal(data))


class TerminalLog(logging.Handler):
    """The library's warnings on the command line, written as Python's last-resort handler
    writes them (the message alone, on the ``sys.stderr`` of the moment), with every control
    character made visible: a message may quote a repository's file names and settings."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = visible(record.getMessage())
            if record.exc_info:  # a traceback keeps its lines; what it quotes is escaped
                text += "\n" + visible(logging.Formatter().formatException(record.exc_info),
                                        multiline=True)
            sys.stderr.write(text + "\n")
        except Exception:  # as every logging handler: a broken stream is reported, not raised
            self.handleError(record)


def log_to_terminal() -> None:
    """Send the library's warnings through :class:`TerminalLog` (once per process)."""
    logger = logging.getLogger("knoxidx")
    if not any(isinstance(handler, TerminalLog) for handler in logger.handlers):
        logger.addHandler(TerminalLog())


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, in the plural unless there is one: "1 commit", "2 commits"."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def print_more(data: dict, *, narrowed_by: str = "--kind or --path") -> None:
    """What a truncated answer left out, and how to read it: the next page, and the options
    of this command (``narrowed_by``, "" for none) that make the list shorter."""
    if data.get("truncated"):
        total = data["total"] if data.get("total_exact", True) else f"at least {data['total']}"
        narrow = f"; narrow with {narrowed_by}" if narrowed_by else ""
        click.echo(f"(items {data['offset'] + 1}-{data['next_offset']} of {total}; the next "
                   f"page: --offset {data['next_offset']}{narrow})")
    elif data["offset"] and data["offset"] >= data["total"]:
        click.echo(f"(nothing from --offset {data['offset']}: there are {data['total']})")


def progress_bar(enabled: bool) -> tuple[Callable[[str, int, int], None] | None,
                                          Callable[[], None]]:
    if not enabled:
        return None, lambda: None
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )

    bar = Progress(TextColumn("{task.description:>8}"), BarColumn(), TaskProgressColumn(),
                   TimeRemainingColumn(), transient=True)
    bar.start()
    tasks: dict[str, Any] = {}

    def update(phase: str, done: int, total: int) -> None:
        if phase not in tasks:
            tasks[phase] = bar.add_task(phase, total=total)
        bar.update(tasks[phase], completed=done, total=total)

    return update, bar.stop


def report_error(exc: BaseException) -> int | None:
    """Print the one line ``exc`` ends a command with and return its exit code; None for an
    error nothing here knows (a bug: its traceback must show)."""
    if isinstance(exc, click.exceptions.Abort):
        click.echo("aborted", err=True)
        return 130
    if isinstance(exc, click.ClickException):
        exc.show()
        return exc.exit_code
    if isinstance(exc, KnoxidxError):  # its message may quote the repository's names and paths
        click.echo(f"error: {visible(str(exc))}", err=True)
        return exc.exit_code
    if isinstance(exc, sqlite3.Error):  # damage or a full disk met mid-command: still one line
        from knoxidx.graph.dbfile import storage_error

        translated = storage_error(exc, None)
        click.echo(f"error: {visible(str(translated))}", err=True)
        return translated.exit_code
    if isinstance(exc, KeyboardInterrupt):
        click.echo("interrupted", err=True)
        return 130
    message = store_error_message(exc)  # the shared store refused (permissions, network)
    if message is None:
        return None
    click.echo(f"error: {visible(message)}", err=True)
    return 8


def location(item: dict) -> str:
    """Where a node is, for people: ``path:line``; a module (a package, or a third-party
    import target) has no single place."""
    path = item.get("path")
    if not path:
        known_external = (item.get("kind") == "Module" and "language" in item
                          and not item["language"])
        return "external" if known_external else ""
    line = item.get("start_line")
    return f"{path}:{line}" if line else str(path)


def site_of(hit: dict) -> str:
    """Where an edge was seen (``path:line``), else where its node is: an edge between
    modules (DependsOn) has no single site."""
    site = hit.get("site") or {}
    if site.get("path"):
        return f"{site['path']}:{site['line']}" if site.get("line") else str(site["path"])
    return location(hit) or "-"
