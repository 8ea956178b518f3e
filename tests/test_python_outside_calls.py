"""An unresolved Python call is "external", not "unknown", where it is of something outside the
index: a builtin no definition in scope shadows (`len`), a method of a value whose type is
known to be outside it (a parameter's `str`, a `**kwargs` dict, a builtin type's value, a
property or a function declared `-> str`, a field declared `dict[..]`). A value of no known
type, or one an outside function returns (`typing.cast(Group, x)`), stays unknown; the edges
are the same either way."""

from __future__ import annotations

from knoxidx.index import Index
from knoxidx.update.verify import verify_index
from tests.helpers import build

SOURCE = """\
import typing as t


class Group:
    def list_commands(self) -> None:
        pass


class Result:
    params: dict[str, int]

    @property
    def output(self) -> str:
        return ""

    def lines(self) -> "list[str]":
        return []


def len(x):
    return 0


def run(name: str, result: Result, untyped, group: Group | None, *args, **kwargs):
    len(name)
    isinstance(name, str)
    name.split()
    kwargs.setdefault("a", 1)
    args.count(1)
    result.output.strip()
    result.lines().append("x")
    result.params.get("a")
    made = str(untyped)
    made.upper()
    untyped.split()
    cast = t.cast(Group, untyped)
    cast.list_commands()
    opened = open("f")
    opened.read()
    kind = type(untyped)
    kind.mro()
"""


def _reasons(root) -> dict[str, str]:
    with Index.open(root) as idx:
        return dict(idx.store.conn.execute("select name, reason from unresolved").fetchall())


def test_calls_of_what_lies_outside_the_index_are_external(repo) -> None:
    root = repo({"app.py": SOURCE})
    build(root)
    reasons = _reasons(root)
    for name in ("isinstance", "name.split", "kwargs.setdefault", "args.count",
                 "result.output.strip", "result.lines().append", "result.params.get",
                 "made.upper", "opened.read"):
        assert reasons[name] == "external", name
    assert "len" not in reasons  # the module's own `len`: resolved
    # of no known type: an untyped parameter, what `typing.cast` returns, what `type()` gives
    for name in ("untyped.split", "cast.list_commands", "kind.mro"):
        assert reasons[name] == "unknown", name


def test_a_builtin_shadowed_later_resolves_to_the_definition(repo) -> None:
    root = repo({"app.py": "def run(x):\n    return repr(x)\n"})
    build(root)
    assert _reasons(root)["repr"] == "external"
    (root / "app.py").write_text("def repr(x):\n    return ''\n\n\ndef run(x):\n"
                                 "    return repr(x)\n")
    build(root)
    assert "repr" not in _reasons(root)
    with Index.open(root) as idx:
        assert verify_index(idx)["equal"]
