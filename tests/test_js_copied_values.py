"""JavaScript and TypeScript locals that copy a value of known type: `const geometry =
this.geometry` and `const { geometry, state } = this` hold what the fields hold, and `const
point = target` what the name copied holds (a JSDoc-typed parameter, a module's constant), so a
method called on the local is that type's (what the TypeScript checker reads); `const scope =
this` holds the receiver for the functions nested in a method."""

from __future__ import annotations

from knoxidx.index import Index
from tests.helpers import build

GEOMETRY = """
export class Geometry {
	compute() {}
}

export class State {
	bind() {}
}
"""
MESH = """
import { Geometry, State } from './geometry.js';

export class Mesh {

	/**
	 * @param {Geometry} geometry - The geometry.
	 */
	constructor( geometry ) {
		this.geometry = geometry;
		this.state = new State();
	}

	copied() {
		const geometry = this.geometry;
		geometry.compute();
	}

	destructured() {
		const { geometry, state } = this;
		geometry.compute();
		state.bind();
	}

	/**
	 * @param {Geometry} target - Where the result goes.
	 */
	named( target ) {
		const point = target;
		point.compute();
		const shared = _shared;
		shared.compute();
	}

	closure() {
		const scope = this;
		function later() {
			scope.copied();
		}
		return later;
	}

}

const _shared = new Geometry();
"""
RENDERER = """
import { Geometry, State } from './geometry.js';

export class Renderer {
  private geometry: Geometry = new Geometry();
  state: State;

  draw(): void {
    const geometry = this.geometry;
    geometry.compute();
    const { state } = this;
    state.bind();
  }
}
"""


def test_locals_copying_fields_hold_the_fields_types(repo) -> None:
    root = repo({"geometry.js": GEOMETRY, "mesh.js": MESH, "renderer.ts": RENDERER})
    build(root)
    with Index.open(root) as idx:
        compute = {(c["name"], c["site"]["line"]) for c in idx.callers("Geometry.compute")["callers"]}
        assert compute == {("copied", 16), ("destructured", 21), ("draw", 10), ("named", 30),
                           ("named", 32)}
        copied = {(c["name"], c["site"]["line"]) for c in idx.callers("Mesh.copied")["callers"]}
        assert copied == {("later", 38)}  # `const scope = this` in the method around it
        bind = {(c["name"], c["site"]["line"]) for c in idx.callers("State.bind")["callers"]}
        assert bind == {("destructured", 22), ("draw", 12)}
