"""pytest fixtures: which fixture function a test's (or a fixture's) parameter is passed.

pytest passes a test function, or a fixture, the value of the fixture named as each of its
parameters: one defined in the test's own class (or a class around it), in its module (a
definition, or an import of one), else in the ``conftest.py`` of its directory or of the
nearest directory above it that defines one. A fixture is a function decorated
``@pytest.fixture`` (``@fixture`` imported from pytest), called ``name="..."`` where the
decorator says so. A fixture asking for its own name gets the one it overrides, further out.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from knoxidx.core.model import NodeKind
from knoxidx.core.symbols import DEFINITION_TAG, EXTERNAL_TAG, Symbol
from knoxidx.parse.file_index import TYPE_KINDS

if TYPE_CHECKING:
    from knoxidx.core.facts import Definition
    from knoxidx.languages.protocol import ResolverView
    from knoxidx.parse.file_index import FileIndex

_FUNCTION = NodeKind.FUNCTION.value
_PYTEST_MODULES = frozenset({"pytest", "_pytest.fixtures"})
_NAME_ARGUMENT = re.compile(r"""\bname\s*=\s*(?:"([^"]*)"|'([^']*)')""")
CONFTEST = "conftest.py"
# the argument names a `parametrize` mark starts with: "a, b", or a tuple or list of names
_PARAMETRIZED_NAMES = re.compile(r"""\s*(?:"([^"]*)"|'([^']*)'|[(\[]([^)\]]*)[)\]])""")
# a generator's declared type: what it yields is its first type argument
_GENERATOR_TYPE = re.compile(
    r"^(?:typing\.|collections\.abc\.|t\.)?"
    r"(?:Generator|Iterator|Iterable|AsyncGenerator|AsyncIterator|AsyncIterable)\[(.+)\]$")

# the fixtures pytest itself defines (in its own plugins, outside the project)
PYTEST_FIXTURES = frozenset({
    "cache", "capfd", "capfdbinary", "caplog", "capsys", "capsysbinary", "doctest_namespace",
    "monkeypatch", "pytestconfig", "pytester", "record_property", "record_testsuite_property",
    "record_xml_attribute", "recwarn", "request", "testdir", "tmp_path", "tmp_path_factory",
    "tmpdir", "tmpdir_factory",
})
# (scope defining it: -1 for the module, else a class's index, fixture name) -> its index
FixtureTable = dict[tuple[int, str], int]


def yielded_type(declared: str) -> str:
    """The type a generator declared ``declared`` yields (`Iterator[CliRunner]`,
    `Generator[App, None, None]`), "" where it declares no generator."""
    match = _GENERATOR_TYPE.match("".join(declared.split()))
    if match is None:
        return ""
    depth = 0
    inner = match.group(1)
    for at, char in enumerate(inner):
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == "," and depth == 0:
            return inner[:at]
    return inner


def looked_up_as(d: Definition) -> tuple[str, ...]:
    """The name a fixture decorator's ``name=`` gives the function ``d``, where one does."""
    decorators = d.signature_data[3] if d.kind == _FUNCTION and len(d.signature_data) > 3 else ()
    for decorator in decorators:
        called, _, arguments = decorator.partition("(")
        if "fixture" in called:
            match = _NAME_ARGUMENT.search(arguments)
            if match:
                return (match.group(1) or match.group(2) or "",)
    return ()


def injected(r: ResolverView, fi: FileIndex, scope: int, name: str) -> list[Symbol]:
    """The fixture function pytest passes the parameter ``name`` of the function at
    ``scope`` of ``fi``: [] where none is visible from there."""
    defs = fi.facts.defs
    asking = defs[scope]
    if name in _parametrized(asking):
        return []  # `@pytest.mark.parametrize("name", ..)` passes the values, not the fixture
    table = fixtures_of(r, fi)
    # a fixture asking for its own name: the one it overrides, from outside its own scope
    overriding = table.get((asking.parent, name)) == scope
    owner = asking.parent
    if not overriding:
        while owner >= 0:
            if defs[owner].kind in TYPE_KINDS:
                hit = table.get((owner, name))
                if hit is not None:
                    return [(DEFINITION_TAG, fi.path, hit)]
            owner = defs[owner].parent
    if not overriding or asking.parent >= 0:
        found = _module_fixture(r, fi, table, name)
        if found:
            return found
    directory = fi.path.rpartition("/")[0]
    found = _conftest_fixture(r, directory, name, fi.path)
    if not found and name in PYTEST_FIXTURES:
        return [(EXTERNAL_TAG, "python", "pytest")]  # pytest's own: a call on it is pytest's
    return found


def _parametrized(d: Definition) -> frozenset[str]:
    """The parameters of the function ``d`` that its ``parametrize`` marks pass directly (not
    ``indirect``ly, through the fixture of the name)."""
    decorators = d.signature_data[3] if len(d.signature_data) > 3 else ()
    names: set[str] = set()
    for decorator in decorators:
        at = decorator.find("parametrize(")
        if at < 0 or "indirect" in decorator:
            continue
        listed = _PARAMETRIZED_NAMES.match(decorator, at + len("parametrize("))
        if listed is not None:
            written = listed.group(1) or listed.group(2) or listed.group(3) or ""
            names.update(n.strip(" \t\n\"'") for n in written.split(","))
    return frozenset(names)


def fixtures_of(r: ResolverView, fi: FileIndex) -> FixtureTable:
    """The fixtures ``fi`` defines, in its module and its classes (read once per file)."""
    table: FixtureTable = r.memo(("py-fixtures", fi.path), _fixtures, fi)
    return table


def _fixtures(fi: FileIndex) -> FixtureTable:
    defs = fi.facts.defs
    table: FixtureTable = {}
    for index, d in enumerate(defs):
        if d.kind != _FUNCTION or len(d.signature_data) < 4 or not d.signature_data[3]:
            continue
        if d.parent >= 0 and defs[d.parent].kind not in TYPE_KINDS:
            continue  # a nested function is no fixture pytest collects
        for decorator in d.signature_data[3]:
            named = _fixture_name(fi, decorator)
            if named is not None:
                table[(d.parent, named or d.name)] = index
                break
    return table


def _fixture_name(fi: FileIndex, decorator: str) -> str | None:
    """The name a fixture decorator (as written) gives its function ("" for the function's
    own), None where the decorator is no pytest fixture's."""
    called, _, arguments = decorator.partition("(")
    called = "".join(called.split())
    if called != "pytest.fixture":
        if called != "fixture":
            return None
        imports = fi.imports.get((-1, "fixture"))
        if not imports or imports[-1].module not in _PYTEST_MODULES:
            return None
    match = _NAME_ARGUMENT.search(arguments)
    return (match.group(1) or match.group(2) or "") if match else ""


def _module_fixture(r: ResolverView, fi: FileIndex, table: FixtureTable, name: str
                    ) -> list[Symbol]:
    """The fixture named ``name`` in the module of ``fi``: its own, or one it imports."""
    hit = table.get((-1, name))
    if hit is not None:
        return [(DEFINITION_TAG, fi.path, hit)]
    imports = fi.imports.get((-1, name))
    if not imports:
        # on record, so that a fixture appended to the file later re-resolves the asker
        r.missed(fi, -1, name)
        return []
    out: list[Symbol] = []
    for symbol in fi.rules.import_binding(r, fi, imports[-1]):
        if symbol[0] != DEFINITION_TAG:
            continue
        source = r.index(symbol[1])
        if source is not None and symbol[2] in fixtures_of(r, source).values():
            out.append(symbol)
    return out


def _conftest_fixture(r: ResolverView, directory: str, name: str, asking: str
                      ) -> list[Symbol]:
    """The fixture named ``name`` in the nearest ``conftest.py`` from ``directory`` up that
    defines one (not the file ``asking``, read already), once per directory and name."""
    path = f"{directory}/{CONFTEST}" if directory else CONFTEST
    if path == asking:
        return _outer_conftest_fixture(r, directory, name)
    return r.memo(("py-conftest", directory, name), _conftest_here, r, directory, name, path)


def _conftest_here(r: ResolverView, directory: str, name: str, path: str) -> list[Symbol]:
    conftest = r.index(path)
    if conftest is not None:
        found = _module_fixture(r, conftest, fixtures_of(r, conftest), name)
        if found:
            return found
    return _outer_conftest_fixture(r, directory, name)


def _outer_conftest_fixture(r: ResolverView, directory: str, name: str) -> list[Symbol]:
    if not directory:
        return []
    return _conftest_fixture(r, directory.rpartition("/")[0], name, "")
