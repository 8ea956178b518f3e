from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import write_tree


@pytest.fixture
def repo(tmp_path: Path):
    def make(files: dict[str, str | bytes]) -> Path:
        root = tmp_path / "repo"
        root.mkdir(exist_ok=True)
        return write_tree(root, files)

    return make


# ---- PostgreSQL: one real server per session (tests/pg_support.py) ------------------------------


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory):
    from tests.pg_support import server_fixture

    yield from server_fixture(tmp_path_factory)


@pytest.fixture
def pg_url(pg_server):
    """A fresh, empty database on the session's PostgreSQL."""
    from tests.pg_support import drop_database, fresh_database

    url = fresh_database(pg_server)
    yield url
    drop_database(pg_server, url)  # keeps the server small: its shutdown removes less


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request):
    """The store a test runs against: each such test runs once per backend."""
    from tests.helpers import Backend

    return Backend(request.getfixturevalue("pg_url") if request.param == "postgres" else None)


@pytest.fixture
def fake():
    """A fake Voyage API on 127.0.0.1 (tests/retrieval/fake_voyage.py), closed afterwards."""
    from tests.retrieval.fake_voyage import FakeVoyage

    server = FakeVoyage()
    yield server
    server.close()
