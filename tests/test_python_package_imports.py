"""A Python package whose ``__init__`` imports its own submodule (``from . import exc as exc``)
still lets a sibling's ``from . import exc as orm_exc`` reach that submodule: asked for its
member ``exc``, the package finds that import, which asks the package again; the cycle ends
at the submodule, as Python's import does, rather than with nothing."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

FILES = {
    "pkg/__init__.py": "",
    "pkg/exc.py": "class BaseError(Exception):\n    pass\n",
    "pkg/orm/__init__.py": "from . import exc as exc\nfrom .exc import FlushError as FlushError\n",
    "pkg/orm/exc.py": (
        "from .. import exc as sa_exc\n\n\n"
        "class FlushError(sa_exc.BaseError):\n    pass\n\n\n"
        "def describe(err):\n    return str(err)\n"
    ),
    "pkg/orm/persistence.py": (
        "from . import exc as orm_exc\n\n\n"
        "def flush():\n"
        "    orm_exc.describe(None)\n"
        "    raise orm_exc.FlushError('x')\n"
    ),
    "pkg/orm/session.py": (
        "from .. import orm\n\n\n"
        "def close():\n"
        "    orm.exc.describe(None)\n"
    ),
}


def _calls(root) -> set[tuple[str, str, str]]:
    """(calling function, called definition, its file) of every Calls edge."""
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(nodes[e["source"]]["name"], nodes[e["target"]]["name"],
                 nodes[e["target"]]["path"])
                for e in export.edges(idx.q) if e["type"] == "Calls"}


def test_a_submodule_the_package_init_imports_is_reached_through_the_package(repo) -> None:
    root = repo(FILES)
    build(root)
    calls = _calls(root)
    assert ("flush", "FlushError", "pkg/orm/exc.py") in calls
    assert ("flush", "describe", "pkg/orm/exc.py") in calls
    assert ("close", "describe", "pkg/orm/exc.py") in calls
