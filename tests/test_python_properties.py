"""A Python method read as an attribute (``@property``, ``functools.cached_property``, a
project's own ``@util.memoized_property``) gives, read on an instance, what it returns: the
next member is looked up on its declared return type (``self.compiler.process()``)."""

from __future__ import annotations

from tests.helpers import build, calls_with_holders

UTIL = """\
class memoized_property:
    def __init__(self, fget):
        self.fget = fget

    def __get__(self, obj, cls):
        return self.fget(obj)
"""

SOURCE = """\
from functools import cached_property
from typing import Any, Generic, TypeVar

from . import util

T = TypeVar("T")


class Comparator(Generic[T]):
    def has(self):
        pass


class Compiler:
    def process(self):
        pass


class Statement:
    @property
    def compiler(self) -> Compiler:
        return Compiler()

    @compiler.setter
    def compiler(self, value):
        pass

    @util.memoized_property
    def comparator(self) -> Comparator[Any]:
        return Comparator()

    @cached_property
    def cached(self) -> Compiler:
        return Compiler()

    def process(self):
        pass

    def run(self):
        self.compiler.process()
        self.comparator.has()
        self.cached.process()

    def plain(self):
        # a method that is no property: its own attribute, nothing of what it returns
        self.helper.process()

    def helper(self) -> Compiler:
        return Compiler()


def outside(statement: Statement):
    statement.compiler.process()
"""


def test_a_property_read_on_an_instance_continues_from_its_return_type(repo) -> None:
    root = repo({"pkg/__init__.py": "", "pkg/util.py": UTIL, "pkg/m.py": SOURCE})
    build(root)
    calls = calls_with_holders(root)
    assert ("run", "process", "Compiler") in calls
    assert ("run", "has", "Comparator") in calls
    assert ("outside", "process", "Compiler") in calls
    assert {c for c in calls if c[0] == "plain"} == set()
    assert ("run", "process", "Statement") not in calls


COPIED = """\
class Engine:
    def connect(self):
        pass


class Compiler:
    def process(self):
        pass


class Connection:
    def __init__(self):
        self.engine = Engine()

    @property
    def compiler(self) -> Compiler:
        return Compiler()

    def run(self):
        engine = self.engine
        engine.connect()
        compiler = self.compiler
        compiler.process()


def outside(connection: Connection):
    engine = connection.engine
    engine.connect()
"""


def test_a_local_bound_to_an_attribute_read_holds_its_type(repo) -> None:
    # `engine = self.engine`: the attribute's type; `compiler = self.compiler`: the property's
    root = repo({"m.py": COPIED})
    build(root)
    calls = calls_with_holders(root)
    assert ("run", "connect", "Engine") in calls
    assert ("run", "process", "Compiler") in calls
    assert ("outside", "connect", "Engine") in calls
