"""What a result is worth before its words are looked at: test code ranks below the code it tests.

A test repeats the words of what it tests (``test_breaker_opens_after_five_failures``), so for
"where does the circuit breaker open" a search ranks the tests of the breaker beside, or above,
the breaker. Code search engines rank test files lower for this reason; so does knoxidx, unless
the query itself asks about tests ("the test for the breaker", "fixtures of the shop").
"""

from __future__ import annotations

import re
from collections.abc import Callable

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


def asks_about_tests(query: str) -> bool:
    """Whether the query mentions tests, so that test code is what it wants."""
    return any(w in _ABOUT_TESTS for w in terms(query))


def path_prior(query: str) -> Callable[[str], float] | None:
    """What a result's score is multiplied by for ``query``, by its path (test code
    ``TEST_FACTOR``, other code 1); None when no result is demoted."""
    return None if asks_about_tests(query) else _test_factor


def _test_factor(path: str) -> float:
    return TEST_FACTOR if is_test_path(path) else 1.0
