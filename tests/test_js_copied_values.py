"""JavaScript and TypeScript locals that copy a value of known type: `const geometry =
this.geometry` and `const { geometry, state } = this` hold what the fields hold, so a method
called on the local is the field's type's (what the TypeScript checker reads)."""

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

}
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
        assert compute == {("copied", 16), ("destructured", 21), ("draw", 10)}
        bind = {(c["name"], c["site"]["line"]) for c in idx.callers("State.bind")["callers"]}
        assert bind == {("destructured", 22), ("draw", 12)}
