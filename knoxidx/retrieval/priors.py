"""What a result is worth before its words are looked at: test code ranks below the code it tests.

A test repeats the words of what it tests (``test_breaker_opens_after_five_failures``), so for
"where does the circuit breaker open" a search ranks the tests of the breaker beside, or above,
the breaker. Code search engines rank test files lower for this reason; so does knoxidx, unless
the query itself asks about tests ("the test for the breaker", "fixtures of the shop"). Test
code is known by its file's path, or by the module that holds it: Rust keeps a file's unit
tests beside its code, in a ``#[cfg(test)] mod tests``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeAlias

from knoxidx.languages.registry import TEST_DIRS, TEST_FILES
from knoxidx.retrieval.terms import terms

# A test result's score is multiplied by this: it still comes first when nothing else matches.
TEST_FACTOR = 0.5

# Test code by the conventions of any language (a `tests/` folder, `test_*` files), and by
# those each language declares (`*_test.go`, `__tests__/`, `*.spec.ts`).
_TEST_PATH = re.compile(
    r"(^|/)(" + "|".join(("tests?", "testing", "test_data", "fixtures?", *TEST_DIRS)) + ")/"
    r"|(^|/)(" + "|".join(("test_[^/]*", *TEST_FILES)) + ")$"
)
# what a module of unit tests inside a source file is called (Rust's `mod tests`, `mod test`)
TEST_MODULES = frozenset({"test", "tests"})
_QUALNAME_PARTS = re.compile(r"::|\.")

# What a result's score is multiplied by, given its file's path and its qualified name
PathPrior: TypeAlias = Callable[[str, str], float]
_ABOUT_TESTS = frozenset({
    "test", "tests", "tested", "testing", "unittest", "pytest", "jest", "spec", "specs",
    "fixture", "fixtures", "mock", "mocks", "mocked", "conftest", "assert", "asserts",
})


def is_test_path(path: str) -> bool:
    """Whether ``path`` (repo-relative, posix) holds test code by the usual conventions of the
    five languages: a ``tests/`` (``__tests__``, ``testdata``, ``spec``, ``fixtures``)
    directory, ``test_*.py`` / ``*_test.py``, ``*_test.go``, ``*Test.java``, ``*.test.ts`` /
    ``*.spec.js``."""
    return bool(_TEST_PATH.search(path))


def in_test_module(qualname: str) -> bool:
    """Whether a definition lies inside a module named as inline unit tests are
    (``tests.remove_by_address``, ``linked_list::tests::Entry``); its own name does not count."""
    return any(part in TEST_MODULES for part in _QUALNAME_PARTS.split(qualname)[:-1])


def asks_about_tests(query: str) -> bool:
    """Whether the query mentions tests, so that test code is what it wants."""
    return any(w in _ABOUT_TESTS for w in terms(query))


def path_prior(query: str) -> PathPrior | None:
    """What a result's score is multiplied by for ``query``, by its path and qualified name
    (test code ``TEST_FACTOR``, other code 1); None when no result is demoted."""
    return None if asks_about_tests(query) else _test_factor


def _test_factor(path: str, qualname: str = "") -> float:
    return TEST_FACTOR if is_test_path(path) or in_test_module(qualname) else 1.0
