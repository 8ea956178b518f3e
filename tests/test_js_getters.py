"""JavaScript getters (`get inspector() { return this._inspector; }`) are read as the value
they return, as TypeScript reads an accessor: `this.inspector.begin()` is a method of what
the getter returns; a plain method read stays that method."""

from __future__ import annotations

from knoxidx.index import Index
from tests.helpers import build

RENDERER = """
export class Inspector {
	begin() {}
}

export class Renderer {

	constructor() {
		this._inspector = new Inspector();
	}

	get inspector() {
		return this._inspector;
	}

	plain() {
		return this._inspector;
	}

	render() {
		this.inspector.begin();
		const inspector = this.inspector;
		inspector.begin();
		this.plain.begin();
	}

}
"""


def callers(idx: Index, spec: str) -> set[tuple[str, int]]:
    return {(c["name"], c["site"]["line"]) for c in idx.callers(spec)["callers"]}


def test_a_getter_is_read_as_what_it_returns(repo) -> None:
    root = repo({"renderer.js": RENDERER})
    build(root)
    with Index.open(root) as idx:
        assert callers(idx, "Inspector.begin") == {("render", 21), ("render", 23)}
