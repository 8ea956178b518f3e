"""CommonJS `module.exports.x()` in the file that exports x: the file's own export, as a
`require()` of it would have it (`module` is no name the file declares; where it declares
one, that is read)."""

from __future__ import annotations

from knoxidx.index import Index
from tests.helpers import build

UTILS = """
function count(limit) {
	return limit;
}

module.exports = {
	couldBeError(node) {
		return module.exports.couldBeError(node.left);
	},
	count,
};

function run() {
	return module.exports.count(2);
}
"""
SHADOWED = """
const module = { exports: {} };

function count() {}

module.exports.count();
"""


def callers(idx: Index, spec: str) -> set[tuple[str, int]]:
    return {(c["name"], c["site"]["line"]) for c in idx.callers(spec)["callers"]}


def test_module_exports_in_its_own_file_is_that_file_s_exports(repo) -> None:
    root = repo({"utils.js": UTILS, "shadowed.js": SHADOWED})
    build(root)
    with Index.open(root) as idx:
        assert callers(idx, "utils.js:7") == {("couldBeError", 8)}
        assert callers(idx, "utils.js:2") == {("run", 14)}
        assert callers(idx, "shadowed.js:4") == set()
