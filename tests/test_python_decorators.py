"""A decorated function's name holds what its decorators give where they say: the result
of calling the decorator (`@group()`'s `-> Callable[[F], Group]`: a Group; `@Foo`: a Foo;
`@Foo(..)`: what Foo's `__call__` returns; `def deco(f) -> Wrapper`: a Wrapper), read from
the outermost decorator in past those that hand the function back (`-> Callable[[F], F]`).
Where a decorator says nothing (untyped, a callable, outside the index) the name holds the
function, as it does under a property, a classmethod, an overload or a pytest fixture."""

from __future__ import annotations

from knoxidx.index import Index
from knoxidx.update.verify import verify_index
from tests.helpers import build, calls_with_holders

CORE = """\
import typing as t


class Command:
    def __call__(self, *args: t.Any) -> t.Any:
        pass

    def main(self) -> None:
        pass


class Group(Command):
    def command(self, *args: t.Any) -> t.Callable[[t.Callable[..., t.Any]], Command] | Command:
        pass

    def add_command(self, cmd: Command) -> None:
        pass


class Wrapper:
    def unwrap(self) -> None:
        pass


class Registry:
    def __call__(self, f: t.Callable[..., t.Any]) -> Wrapper:
        pass
"""

DECORATORS = """\
import typing as t
from core import Command, Group, Wrapper

_AnyCallable = t.Callable[..., t.Any]
GrpType = t.TypeVar("GrpType", bound=Group)
FC = t.TypeVar("FC")
F = t.TypeVar("F")


@t.overload
def group(name: _AnyCallable) -> Group: ...


@t.overload
def group(name: str | None = ...) -> t.Callable[[_AnyCallable], Group]: ...


def group(name=None, cls=None) -> Group | t.Callable[[_AnyCallable], Group | GrpType]:
    pass


def command(name: str | None = None) -> t.Callable[[_AnyCallable], Command]:
    pass


def option(*decls: str) -> t.Callable[[FC], FC]:
    pass


def wrapped(f) -> Wrapper:
    pass


def untyped(f):
    return f


def same(f: F) -> F:
    return f


def returns_a_callable(f) -> t.Callable[..., int]:
    pass
"""

APP = """\
import decorators
from core import Registry, Wrapper


@decorators.group()
def cli():
    pass


@cli.command()
@decorators.option("--x")
def hello(x):
    pass


@decorators.option("--y")
@decorators.command("x")
def passed_through(y):
    pass


@decorators.group
def bare():
    pass


@decorators.wrapped
def wrapped():
    pass


@Registry()
def registered():
    pass


@Wrapper
def made():
    pass


@decorators.untyped
def untyped():
    pass


@decorators.same
@decorators.returns_a_callable
def function_again():
    pass


def run():
    cli.add_command(passed_through)
    passed_through.main()
    bare.add_command(hello)
    hello.main()
    wrapped.unwrap()
    registered.unwrap()
    made.unwrap()
    untyped.main()
    function_again.main()
"""


def _held(calls: set[tuple[str, str, str]]) -> set[tuple[str, str]]:
    return {(name, holder) for caller, name, holder in calls if caller == "run"}


def test_a_decorated_name_holds_what_the_decorator_gives(repo) -> None:
    root = repo({"core.py": CORE, "decorators.py": DECORATORS, "app.py": APP})
    build(root)
    calls = calls_with_holders(root)
    # `@cli.command()` on the Group `@decorators.group()` made: the Group's method
    assert ("app.py", "command", "Group") in calls
    held = _held(calls)
    assert ("add_command", "Group") in held  # `cli`, `bare` (`@group` uncalled: a Group)
    assert ("main", "Command") in held  # `hello`, and `passed_through` past `option`
    assert ("unwrap", "Wrapper") in held  # `-> Wrapper`, `@Registry()`'s `__call__`, `@Wrapper`
    with Index.open(root) as idx:
        unresolved = {name for (name,) in idx.store.conn.execute(
            "select name from unresolved").fetchall()}
    assert "untyped.main" in unresolved  # an untyped decorator: the function itself
    assert "function_again.main" in unresolved  # a callable handed back: a function


def test_each_decorator_form_alone(repo) -> None:
    # one use per form, so that one form's edge does not stand for another's
    forms = {
        "hello": ("main", "Command"), "passed_through": ("main", "Command"),
        "bare": ("main", "Command"), "wrapped": ("unwrap", "Wrapper"),
        "registered": ("unwrap", "Wrapper"), "made": ("unwrap", "Wrapper"),
    }
    head = APP.partition("def run():")[0]
    files = {"core.py": CORE, "decorators.py": DECORATORS}
    for name, (method, _) in forms.items():
        files[f"use_{name}.py"] = f"from app import {name}\n\n\ndef run():\n    {name}.{method}()\n"
    root = repo({**files, "app.py": head})
    build(root)
    calls = calls_with_holders(root)
    for name, (method, holder) in forms.items():
        assert ("run", method, holder) in calls, name
    with Index.open(root) as idx:
        callers = {row[0] for row in idx.store.conn.execute(
            "select f.path from unresolved u join files f on f.id = u.file_id").fetchall()}
    assert not {f"use_{name}.py" for name in forms} & callers


def test_properties_and_other_special_decorators_keep_the_function(repo) -> None:
    source = """\
    import functools
    from core import Wrapper


    def wrapping(f) -> Wrapper:
        pass


    class Holder:
        @property
        @wrapping
        def prop(self) -> Wrapper:
            pass

        @functools.cached_property
        def cached(self) -> Wrapper:
            pass

        @staticmethod
        @wrapping
        def static():
            pass

        def use(self):
            self.prop.unwrap()
            self.cached.unwrap()
            Holder.static.unwrap()
    """
    root = repo({"core.py": CORE, "holder.py": source})
    build(root)
    calls = calls_with_holders(root)
    assert ("use", "unwrap", "Wrapper") in calls  # the properties' values, as before
    with Index.open(root) as idx:
        unresolved = {name for (name,) in idx.store.conn.execute(
            "select name from unresolved").fetchall()}
    assert "Holder.static.unwrap" in unresolved  # a staticmethod stays the function


def test_a_decorator_changed_in_another_file_re_resolves_the_decorated_names_uses(
        repo) -> None:
    untyped = DECORATORS.replace(
        "def command(name: str | None = None) -> t.Callable[[_AnyCallable], Command]:",
        "def command(name=None):")
    root = repo({"core.py": CORE, "decorators.py": untyped,
                 "app.py": APP.partition("@decorators.group\n")[0],
                 "use.py": "from app import passed_through\n\n\n"
                           "def run():\n    passed_through.main()\n"})
    build(root)
    assert ("run", "main", "Command") not in calls_with_holders(root)
    (root / "decorators.py").write_text(DECORATORS)
    build(root)
    assert ("run", "main", "Command") in calls_with_holders(root)
    with Index.open(root) as idx:
        assert verify_index(idx)["equal"]
    (root / "decorators.py").write_text(untyped)
    build(root)
    assert ("run", "main", "Command") not in calls_with_holders(root)
    with Index.open(root) as idx:
        assert verify_index(idx)["equal"]


def test_a_decorators_return_type_or_a_decorator_changed_re_resolves_the_uses(repo) -> None:
    # neither change is to a type's name as the index keeps it (`t.Callable` either way)
    use = "from app import passed_through\n\n\ndef run():\n    passed_through.add_command()\n"
    root = repo({"core.py": CORE, "decorators.py": DECORATORS,
                 "app.py": APP.partition("@decorators.group\n")[0], "use.py": use})
    build(root)
    assert ("run", "add_command", "Group") not in calls_with_holders(root)
    (root / "decorators.py").write_text(DECORATORS.replace(
        "def command(name: str | None = None) -> t.Callable[[_AnyCallable], Command]:",
        "def command(name: str | None = None) -> t.Callable[[_AnyCallable], Group]:"))
    build(root)
    assert ("run", "add_command", "Group") in calls_with_holders(root)
    with Index.open(root) as idx:
        assert verify_index(idx)["equal"]
    (root / "decorators.py").write_text(DECORATORS)
    app = root / "app.py"
    app.write_text(app.read_text().replace('@decorators.command("x")', "@decorators.group()"))
    build(root)
    assert ("run", "add_command", "Group") in calls_with_holders(root)
    with Index.open(root) as idx:
        assert verify_index(idx)["equal"]
