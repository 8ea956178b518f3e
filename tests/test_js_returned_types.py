"""JavaScript functions with no `@return` return what their `return` statements agree on:
`new T(..)`, another function's result, a field or `this`, as TypeScript infers it; a
`return` inside a callback is the callback's, and branches returning different classes, an
`async` function and a generator return nothing known."""

from __future__ import annotations

from knoxidx.index import Index
from tests.helpers import build

MATERIALS = """
export class Material {
	dispose() {}
}

export class Other {
	dispose() {}
}

function makeMaterial( name ) {
	return new Material( name );
}

function namedMaterial() {
	return makeMaterial( 'named' );
}

function either( flag ) {
	if ( flag ) return new Material();
	return new Other();
}

function mapped( xs ) {
	xs.map( ( x ) => {
		return new Other();
	} );
	return new Material();
}

async function later() {
	return new Material();
}

export class Generator {

	constructor() {
		this._material = null;
	}

	compile() {
		if ( this._material === null ) this._material = namedMaterial();
	}

	dispose() {
		this._material.dispose();
		either( true ).dispose();
		mapped( [] ).dispose();
		later().dispose();
	}

}
"""


def callers(idx: Index, spec: str) -> set[tuple[str, int]]:
    return {(c["name"], c["site"]["line"]) for c in idx.callers(spec)["callers"]}


def test_a_function_returns_what_its_returns_agree_on(repo) -> None:
    root = repo({"materials.js": MATERIALS})
    build(root)
    with Index.open(root) as idx:
        assert callers(idx, "Material.dispose") == {("dispose", 45), ("dispose", 47)}
        assert callers(idx, "Other.dispose") == set()
