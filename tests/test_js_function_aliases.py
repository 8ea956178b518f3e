"""A local that copies a function read through a path (`const precedence =
astUtils.getPrecedence`, ESLint's rules) is called as that function: `precedence(node)` calls
astUtils.getPrecedence, from the function binding it and from those nested in it. A local
copying nothing of the kind hides any function of its name, as before."""

from __future__ import annotations

from knoxidx.index import Index
from tests.helpers import build

UTILS = """
module.exports = {
	getPrecedence(node) {
		return 1;
	},
};
"""
RULE = """
const astUtils = require("./utils");

function getPrecedence(node) {
	return 2;
}

function create(node) {
	const precedence = astUtils.getPrecedence;
	const getPrecedence = node.compute;

	function check(other) {
		return precedence(other);
	}

	return precedence(node) + check(node) + getPrecedence(node);
}

module.exports = create;
"""


def test_a_local_copying_a_function_is_called_as_it(repo) -> None:
    root = repo({"utils.js": UTILS, "rule.js": RULE})
    build(root)
    with Index.open(root) as idx:
        sites = {(c["name"], c["site"]["line"])
                 for c in idx.callers("utils.js:3")["callers"]}
        assert sites == {("check", 13), ("create", 16)}
        # `getPrecedence(node)` calls the local, which copies no function of the index
        assert idx.callers("rule.js:4")["callers"] == []
