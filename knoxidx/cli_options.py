"""``--store URL`` and ``--repo ID``: which index a command opens (the local ``.knoxidx`` one
by default, or a repository of a shared PostgreSQL store)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from knoxidx.store_url import STORE_ENV, StoreConfigError, parse_store

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
