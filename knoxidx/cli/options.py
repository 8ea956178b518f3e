"""``--store URL`` and ``--repo ID``: which index a command opens (the local ``.knoxidx`` one
by default, or a repository of a shared PostgreSQL store)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from knoxidx.core.limits import DECIMAL_NUMBER, MAX_PATH_CHARS, WHOLE_NUMBER, text_problem
from knoxidx.core.model import NODE_KINDS
from knoxidx.core.store_url import STORE_ENV, StoreConfigError, parse_store


class Text(click.ParamType):
    """A text argument as HTTP and MCP take it (:mod:`knoxidx.core.limits`): at most
    ``max_chars`` characters, and UTF-8 (a byte that is not decodes to a surrogate, which
    SQLite and the tokenizer cannot take)."""

    name = "text"

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        problem = text_problem(value, self.max_chars) if isinstance(value, str) else ""
        if problem:
            self.fail(problem, param, ctx)
        return value


class WholeRange(click.IntRange):
    """click's IntRange written in ASCII digits only, as HTTP takes a number."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not WHOLE_NUMBER.fullmatch(value.strip()):
            self.fail(f"must be a whole number in the digits 0-9, not {value!r}", param, ctx)
        return super().convert(value, param, ctx)


class NumberRange(click.FloatRange):
    """click's FloatRange written in ASCII digits only (float() also takes 'nan', which no
    range refuses, and '٣')."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not DECIMAL_NUMBER.fullmatch(value.strip()):
            self.fail(f"must be a number in the digits 0-9, not {value!r}", param, ctx)
        return super().convert(value, param, ctx)


# what --store/--repo said for the command now running (one command per process)
_CHOICE: dict[str, str | None] = {"store": None, "repo": None}


def store_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Adds ``--store URL`` (default ``$KNOXIDX_STORE``) and ``--repo ID`` to a command;
    :func:`open_index` then opens what they name."""

    @click.option("--repo", "--repo-id", "repo", default=None, metavar="ID",
                  help="Repository id in a shared store (default: the directory's name; "
                       "'*' reads every repository).")
    @click.option("--store", default=None, metavar="URL",
                  help=f"postgresql://... to use a shared store (default: ${STORE_ENV}; "
                       "unset: the local .knoxidx index).")
    @functools.wraps(command)
    def wrapper(*args: Any, store: str | None, repo: str | None, **kwargs: Any) -> Any:
        _CHOICE["store"], _CHOICE["repo"] = store, repo
        return command(*args, **kwargs)

    return wrapper


def shared_url() -> str | None:
    """The PostgreSQL URL in effect, or None for the local index."""
    target = parse_store(_CHOICE["store"])
    return target.url if target.is_postgres else None


def open_index(path: str, *, create: bool = False) -> Any:
    from knoxidx.index import Index

    url = shared_url()
    if url is None:
        if _CHOICE["repo"]:
            raise StoreConfigError("--repo needs a shared store: pass --store postgresql://...")
        return Index.open(path, create=create)
    repo = _CHOICE["repo"]
    if repo == "*" and not create:
        return Index.open_shared_reader(url, None, Path(path).resolve())
    return Index.open(path, create=create, store=url, repo=repo)




def shared_store() -> tuple[str, str | None] | None:
    """(URL, repository or None for every one) when a shared store is in effect."""
    url = shared_url()
    if url is None:
        return None
    repo = _CHOICE["repo"]
    return url, None if repo in (None, "*") else repo


def store_error_message(exc: BaseException) -> str | None:
    """One line for an error of the PostgreSQL driver (a permission, a lost connection), or
    None when ``exc`` is something else."""
    if not type(exc).__module__.startswith("psycopg"):
        return None
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return f"the PostgreSQL store refused: {first}"


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
path_argument = click.argument("path", required=False, default=".", type=click.Path())


def page_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--limit --offset --kind --path``: the page of a list answer (see knoxidx.core.paging)."""
    from knoxidx.core.paging import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET

    for option in reversed((
        click.option("--limit", type=WholeRange(1, MAX_LIMIT), default=DEFAULT_LIMIT,
                     show_default=True, help="At most this many (the answer also ends "
                                             "before ~28k characters)."),
        click.option("--offset", type=WholeRange(0, MAX_OFFSET), default=0, show_default=True,
                     help="Skip this many: the 'next' offset a truncated answer names."),
        click.option("--kind", type=click.Choice(NODE_KINDS, case_sensitive=False),
                     default=None, help="Only items of this kind."),
        click.option("--path", "path_glob", type=Text(MAX_PATH_CHARS), default=None,
                     metavar="GLOB",
                     help="Only items in files matching GLOB ('*' crosses '/'), or under "
                          "this directory."),
    )):
        command = option(command)
    return command


def page_kwargs(limit: int, offset: int, kind: str | None, path_glob: str | None) -> dict[str, Any]:
    """The page options as the library's keyword arguments."""
    return {"limit": limit, "offset": offset, "kind": kind, "path": path_glob}


def _set_offline(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    # Through the environment: every layer (and every worker process) reads it the same way.
    if value:
        from knoxidx.core.config import OFFLINE_ENV

        os.environ[OFFLINE_ENV] = "1"


offline_option = click.option(
    "--offline", is_flag=True, expose_value=False, is_eager=True, callback=_set_offline,
    help="No network call at all: a configured Voyage embedder or reranker is not created "
         "(also $KNOXIDX_OFFLINE=1, or offline = true in knoxidx.toml).")
