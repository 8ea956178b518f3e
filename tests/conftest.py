from __future__ import annotations

import faulthandler
import os
import tempfile
from pathlib import Path
from typing import NoReturn

import pytest

from tests.helpers import write_tree

# os._exit called in the pytest process itself (not in a child it forked) ends the run on the
# spot with that exit code, every later test unrun: the CLI's fast exit, reached through an
# in-process run(), once ended a run at 22 % with exit code 0, which read as a pass. Raised as
# a failure instead.
_PYTEST_PID = os.getpid()
_real_exit = os._exit


def _exit_unless_pytest(status: int) -> NoReturn:
    if os.getpid() == _PYTEST_PID:
        raise AssertionError(f"os._exit({status}) in the pytest process would end the test run")
    _real_exit(status)


os._exit = _exit_unless_pytest

# Tests kill parse workers on purpose (a memory cap's SIGSEGV): a forked worker would inherit
# pytest's fault handler and dump every thread's stack into a passing run's output. knoxidx
# itself reports how a worker died.
os.register_at_fork(after_in_child=faulthandler.disable)

# The developer's own ~/.config/knoxidx/config.toml must not steer the tests (it may choose
# Voyage): every test starts with no user settings.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="kxconf")
os.environ.pop("KNOXIDX_CONFIG", None)
# `knoxidx index` and watchers embed by default; the tests that need no vectors (nearly all)
# do not pay for the model. Those that test embedding set it back (tests/retrieval).
os.environ["KNOXIDX_EMBED"] = "0"


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
