"""A Python function or method without a return annotation returns what its `return`
statements hold where they agree: `return Foo(..)`, `return self`, `return cls(..)`, a local
bound to one of those (`c = self.__class__.__new__(self.__class__); ..; return c`), a typed
field or parameter, another function's result. A generator, a coroutine, a `return` of an
expression whose type is not read, or returns of different types give nothing."""

from __future__ import annotations

from knoxidx.index import Index
from tests.helpers import build, calls_with_holders

SOURCE = """\
class Engine:
    def connect(self):
        pass


class Query:
    def __init__(self, engine: Engine):
        self._engine = engine

    def filter(self):
        return self

    def _clone(self):
        c = self.__class__.__new__(self.__class__)
        c.__dict__ = self.__dict__.copy()
        return c

    @classmethod
    def create(cls):
        return cls(Engine())

    @property
    def engine(self):
        return self._engine

    def all(self):
        pass

    def run(self):
        self.filter().all()
        self._clone().all()
        self.engine.connect()


def make_query():
    return Query(Engine())


def maybe_query(flag):
    if not flag:
        return None
    return make_query()


def chained():
    q = make_query()
    return q


def outside():
    make_query().all()
    maybe_query(True).all()
    chained().all()
    Query.create().all()
"""


def test_a_call_continues_from_what_the_returns_hold(repo) -> None:
    root = repo({"m.py": SOURCE})
    build(root)
    calls = calls_with_holders(root)
    assert ("run", "all", "Query") in calls  # `return self`, the `_clone` idiom
    assert ("run", "connect", "Engine") in calls  # a property returning a typed field
    assert {("outside", "all", "Query")} == {c for c in calls
                                             if c[0] == "outside" and c[1] == "all"}


AMBIGUOUS = """\
class Engine:
    def close(self):
        pass


class Pool:
    def close(self):
        pass


def either(flag):
    if flag:
        return Engine()
    return Pool()


def numbers():
    return 1, 2


def generate():
    yield Engine()
    return Engine()


async def coroutine():
    return Engine()


def untyped(x):
    return x


class memoized_property:
    def __init__(self, fget):
        self.fget = fget

    def __get__(self, obj, cls):
        return self.fget(obj)


class Holder:
    @memoized_property
    def engine(self):
        return Engine()


def run(holder: Holder):
    either(True).close()
    generate().close()
    coroutine().close()
    untyped(Engine()).close()
    holder.engine.close()  # a project's descriptor: what its __get__ gives is not read
"""


def test_returns_that_say_no_one_type_give_nothing(repo) -> None:
    root = repo({"m.py": AMBIGUOUS})
    build(root)
    assert {c for c in calls_with_holders(root) if c[0] == "run" and c[1] == "close"} == set()


CYCLE = """\
class Engine:
    def close(self):
        pass


def ping(n):
    if n:
        return pong(n - 1)
    return Engine()


def pong(n):
    return ping(n)


def loop():
    return loop()


def run():
    pong(3).close()
    loop().close()
"""


def test_mutually_recursive_returns_end(repo) -> None:
    root = repo({"m.py": CYCLE})
    build(root)
    calls = calls_with_holders(root)
    assert ("run", "close", "Engine") in calls


AWAITED = """\
class Conn:
    def execute(self):
        pass


class Pool:
    async def acquire(self) -> Conn:
        return Conn()


async def run(pool: Pool):
    conn = await pool.acquire()
    conn.execute()
"""


def test_an_awaited_call_holds_what_the_coroutine_declares_it_returns(repo) -> None:
    root = repo({"m.py": AWAITED})
    build(root)
    with Index.open(root) as idx:
        assert [(c["name"], c["site"]["line"]) for c in idx.callers("Conn.execute")["callers"]] \
            == [("run", 13)]


SELF_RETURNING = """\
class SpatialReference:
    def clone(self):
        return SpatialReference()

    def units(self):
        pass


class SpatialRefSysMixin:
    @property
    def srs(self):
        if hasattr(self, "_srs"):
            return self._srs.clone()
        self._srs = SpatialReference()
        return self.srs

    def name(self):
        return self.srs.units()
"""


def test_a_property_returning_itself_ends_and_keeps_the_other_returns(repo) -> None:
    root = repo({"models.py": SELF_RETURNING})
    build(root)
    with Index.open(root) as idx:
        assert [(c["name"], c["site"]["line"]) for c in idx.callers("SpatialReference.units")
                ["callers"]] == [("name", 18)]
