"""A pytest test's (or fixture's) untyped parameter holds what the fixture of its name gives:
one of the test's class, of its module (defined or imported), else of the nearest
``conftest.py`` from its directory up that defines it; its declared type, else what its
`return`s hold, else (a generator) what its `yield`s do. ``name="..."`` renames a fixture; a
fixture asking for its own name gets the one it overrides. A parameter no fixture is named
like stays untyped, as does one with a default and one a ``parametrize`` mark passes values
(unless ``indirect``ly, through the fixture)."""

from __future__ import annotations

import pytest

from knoxidx.index import Index
from knoxidx.update.verify import verify_index
from tests.helpers import build, calls_with_holders

APP = """\
class Runner:
    def invoke(self):
        pass


class Client:
    def get(self):
        pass


class Database:
    def query(self):
        pass


class Server:
    def serve(self):
        pass


class Other:
    def invoke(self):
        pass
"""

ROOT_CONFTEST = """\
import pytest
from app import Client, Database, Runner, Server
from typing import Iterator


@pytest.fixture(scope="function")
def runner(request):
    return Runner()


@pytest.fixture
def client():
    return Client()


@pytest.fixture
def database():
    db = Database()
    yield db


@pytest.fixture(name="server")
def _server_fixture() -> Iterator[Server]:
    yield Server()
"""

NEARER_CONFTEST = """\
from pytest import fixture
from app import Other


@fixture
def client():
    return Other()
"""

TESTS = """\
import pytest
from app import Runner

runner = None  # a module variable is no fixture: the conftest's runner is passed


def test_runs(runner, database, server):
    runner.invoke()
    database.query()
    server.serve()


def test_overridden(client):
    client.invoke()


@pytest.mark.parametrize(("client", "n"), [(Runner(), 1)])
def test_parametrized(client, n):
    client.invoke()


@pytest.mark.parametrize("client", ["x"], indirect=True)
def test_indirect(client):
    client.invoke()


def test_unknown(helper, runner=Runner):
    helper.invoke()
    runner.invoke()


class TestInClass:
    @pytest.fixture
    def database(self, database):
        return database

    def test_method(self, runner, database):
        runner.invoke()
        database.query()

    def not_a_test(self, runner):
        runner.invoke()


@pytest.fixture
def app_client(client):
    return client


def test_through_a_fixture(app_client):
    app_client.get()
"""


def test_a_fixture_parameter_holds_what_the_fixture_gives(repo) -> None:
    root = repo({"app.py": APP, "conftest.py": ROOT_CONFTEST,
                 "tests/unit/conftest.py": NEARER_CONFTEST,
                 "tests/unit/test_things.py": TESTS})
    build(root)
    calls = calls_with_holders(root)
    assert ("test_runs", "invoke", "Runner") in calls  # a parent directory's conftest
    assert ("test_runs", "query", "Database") in calls  # a generator's `yield`
    assert ("test_runs", "serve", "Server") in calls  # `name=`, an `Iterator[..]` annotation
    # the nearer conftest's fixture overrides the root's (Other.invoke, not Client's)
    assert ("test_overridden", "invoke", "Other") in calls
    assert ("test_method", "invoke", "Runner") in calls
    # a class's own fixture asking for its own name: the module's, then conftest's
    assert ("test_method", "query", "Database") in calls
    assert ("test_through_a_fixture", "get", "Client") not in calls  # overridden nearer
    assert not {c for c in calls if c[0] in ("test_unknown", "not_a_test", "test_parametrized")
                and c[1] == "invoke"}
    assert ("test_indirect", "invoke", "Other") in calls  # the fixture, given the values


def test_a_module_fixture_or_an_imported_one_comes_before_conftest(repo) -> None:
    tests = """\
    import pytest
    from app import Other
    from tests.helpers import client


    @pytest.fixture
    def runner():
        return Other()


    def test_local(runner, client):
        runner.invoke()
        client.get()
    """
    helpers = """\
    import pytest
    from app import Client


    @pytest.fixture
    def client():
        return Client()
    """
    root = repo({"app.py": APP, "conftest.py": ROOT_CONFTEST, "tests/__init__.py": "",
                 "tests/helpers.py": helpers, "tests/test_local.py": tests})
    build(root)
    calls = calls_with_holders(root)
    assert ("test_local", "invoke", "Other") in calls
    assert ("test_local", "invoke", "Runner") not in calls
    assert ("test_local", "get", "Client") in calls


@pytest.mark.parametrize("added", [
    # appending a definition re-resolves only the files that looked its name up and missed
    "@pytest.fixture\ndef runner():\n    return Runner()\n",
    # `name="runner"` on a function `_runner`: the addition is no mere one of `_runner`
    "@pytest.fixture(name='runner')\ndef _runner():\n    return Runner()\n",
], ids=["by its own name", "by name="])
def test_a_fixture_added_to_a_conftest_later_resolves_the_tests_that_ask_for_it(
        repo, added: str) -> None:
    tests = """\
    def test_runs(runner):
        runner.invoke()
    """
    root = repo({"app.py": APP, "conftest.py": "import pytest\nfrom app import Runner\n",
                 "tests/test_runs.py": tests})
    build(root)
    assert ("test_runs", "invoke", "Runner") not in calls_with_holders(root)
    conftest = root / "conftest.py"
    conftest.write_text(conftest.read_text() + "\n\n" + added)
    build(root)
    assert ("test_runs", "invoke", "Runner") in calls_with_holders(root)
    with Index.open(root) as idx:
        assert verify_index(idx)["equal"]


def test_a_call_on_one_of_pytests_own_fixtures_is_external_not_unknown(repo) -> None:
    tests = """\
    def monkeypatch():
        pass


    def test_patches(monkeypatch, capsys, unheard_of):
        monkeypatch.setattr("a.b", 1)
        capsys.readouterr()
        unheard_of.run()
    """
    root = repo({"tests/test_patches.py": tests})
    build(root)
    with Index.open(root) as idx:
        reasons = dict(idx.store.conn.execute("select name, reason from unresolved").fetchall())
    assert reasons["monkeypatch.setattr"] == "external"  # not the module's function
    assert reasons["capsys.readouterr"] == "external"
    assert reasons["unheard_of.run"] == "unknown"
