"""Test code ranks below the code it tests unless the query asks about tests (priors.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from knoxidx.index import Index
from knoxidx.retrieval.priors import asks_about_tests, in_test_module, is_test_path


@pytest.mark.parametrize("path", [
    "tests/test_breaker.py", "pkg/tests/helpers.py", "src/breaker_test.py", "conftest.py",
    "net/http/client_test.go", "src/test/java/com/acme/BreakerTest.java", "FooTests.java",
    "src/__tests__/breaker.ts", "src/breaker.test.ts", "lib/breaker.spec.mjs",
    "crate/tests/integration.rs", "go/testdata/a.go", "spec/models/user_spec.rb",
    "fixtures/python/shop/app.py",
])
def test_test_paths(path: str) -> None:
    assert is_test_path(path)


@pytest.mark.parametrize("path", [
    "knoxidx/retrieval/resilience.py", "src/contest.py", "src/attestation.go",
    "src/latest/Testament.java", "lib/protest.ts", "docs/testing-guide/x.md.py",
    "src/breaker.ts", "examples/breaker.rs",
])
def test_code_paths(path: str) -> None:
    assert not is_test_path(path)


def test_queries_about_tests() -> None:
    assert asks_about_tests("the test for the circuit breaker")
    assert asks_about_tests("which fixtures build the shop")
    assert asks_about_tests("TestBreakerOpens")  # an identifier's parts count
    assert not asks_about_tests("where does the circuit breaker open")
    assert not asks_about_tests("the latest attestation")


BREAKER = (
    "class Breaker:\n"
    "    def record_failure(self):\n"
    "        self.failures += 1\n"
    "        if self.failures >= 5:\n"
    "            self.state = 'open'\n"
)
BREAKER_TEST = (
    "from app.breaker import Breaker\n\n"
    "def test_breaker_opens_after_five_consecutive_failures():\n"
    "    breaker = Breaker()\n"
    "    for _ in range(5):\n"
    "        breaker.record_failure()\n"
    "    assert breaker.state == 'open'\n"
)


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_the_code_outranks_its_test_unless_the_query_asks_for_tests(
    tmp_path: Path, mode: str
) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "breaker.py").write_text(BREAKER)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_breaker.py").write_text(BREAKER_TEST)
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1)
        # the test's name holds every word of the question; the code holds fewer
        paths = [r["path"] for r in idx.search(
            "breaker opens after five consecutive failures", mode=mode)["results"]]
        assert paths[0] == "app/breaker.py" and "tests/test_breaker.py" in paths
        asked = idx.search("test that the breaker opens after five consecutive failures",
                           mode=mode)["results"]
        assert asked[0]["path"] == "tests/test_breaker.py"


def test_what_lies_inside_a_module_of_unit_tests() -> None:
    assert in_test_module("tests.remove_by_address")
    assert in_test_module("tokio::util::linked_list::tests::Entry::from_raw")
    assert in_test_module("test.budgeting")
    assert not in_test_module("tests")  # the module itself is named so, not inside one
    assert not in_test_module("Breaker.record_failure")
    assert not in_test_module("attestation.latest.verify")


RUST_BREAKER = (
    "pub struct Breaker {\n"
    "    failures: u32,\n"
    "    open: bool,\n"
    "}\n"
    "\n"
    "impl Breaker {\n"
    "    pub fn record_failure(&mut self) {\n"
    "        self.failures += 1;\n"
    "        if self.failures >= 5 {\n"
    "            self.open = true;\n"
    "        }\n"
    "    }\n"
    "}\n"
    "\n"
    "#[cfg(test)]\n"
    "mod tests {\n"
    "    use super::Breaker;\n"
    "\n"
    "    #[test]\n"
    "    fn breaker_opens_after_five_consecutive_failures() {\n"
    "        let mut breaker = Breaker { failures: 0, open: false };\n"
    "        for _ in 0..5 {\n"
    "            breaker.record_failure();\n"
    "        }\n"
    "        assert!(breaker.open);\n"
    "    }\n"
    "}\n"
)


def test_rusts_inline_unit_tests_rank_below_the_code_they_test(tmp_path: Path) -> None:
    # Rust keeps unit tests in the source file, in `mod tests`: no path tells them apart
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "breaker.rs").write_text(RUST_BREAKER)
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1)
        found = [r["symbol"].rsplit("::", 1)[-1] for r in idx.search(
            "breaker opens after five consecutive failures")["results"]]
        # the test's name holds every word of the question; the code holds fewer
        assert found.index("record_failure") < found.index(
            "breaker_opens_after_five_consecutive_failures")
        asked = idx.search("test that the breaker opens after five consecutive failures")
        assert asked["results"][0]["symbol"].endswith(
            "breaker_opens_after_five_consecutive_failures")
