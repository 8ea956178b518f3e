"""A Python field set from a local (``self.preparer = preparer``) holds what that local holds:
a typed parameter's annotated type, a local's constructed value. Read as a type name, the
copied name found nothing (a parameter is no type), so ``self.preparer.quote()`` resolved
nowhere."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

FILES = {
    "pkg/__init__.py": "",
    "pkg/base.py": (
        "class Preparer:\n    def quote(self):\n        pass\n\n\n"
        "class Cursor:\n    def execute(self):\n        pass\n"
    ),
    "pkg/m.py": (
        "from __future__ import annotations\n\n"
        "from typing import TYPE_CHECKING\n\n"
        "from .base import Cursor\n\n"
        "if TYPE_CHECKING:\n    from .base import Preparer\n\n\n"
        "class Parser:\n"
        "    def __init__(\n        self, dialect: int, preparer: Preparer\n    ):\n"
        "        self.preparer = preparer\n"
        "        cursor = Cursor()\n"
        "        self.cursor = cursor\n\n"
        "    def parse(self):\n"
        "        self.preparer.quote()\n"
        "        self.cursor.execute()\n"
    ),
}


def _calls(root) -> set[tuple[str, str]]:
    """(calling function, called definition's qualified name) of every Calls edge."""
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(nodes[e["source"]]["name"], nodes[e["target"]]["qualified_name"])
                for e in export.edges(idx.q) if e["type"] == "Calls"}


def test_a_field_set_from_a_typed_parameter_or_a_local_holds_its_type(repo) -> None:
    root = repo(FILES)
    build(root)
    calls = _calls(root)
    assert ("parse", "pkg.base.Preparer.quote") in calls
    assert ("parse", "pkg.base.Cursor.execute") in calls
