"""Methods a JavaScript constructor assigns to the receiver (`this.clear = function () {..}`,
three.js's WebGLRenderer) are members of the class: `this.clear()` in another method and
`renderer.clear()` on an instance call them, while a bare `clear()` in the constructor is the
function of that name it declares, never the member."""

from __future__ import annotations

from knoxidx.index import Index
from tests.helpers import build

RENDERER = """
export class Renderer {

	constructor() {

		const gl = {};

		function setSize( width ) {
			return width;
		}

		this.setSize = function ( width ) {
			setSize( width );
		};

		this.clear = () => gl;

	}

	render() {
		this.clear();
	}

}
"""
USE = """
import { Renderer } from './renderer.js';

export function draw() {
	const renderer = new Renderer();
	renderer.setSize( 2 );
	renderer.clear();
}
"""


def test_functions_a_constructor_assigns_are_members(repo) -> None:
    root = repo({"renderer.js": RENDERER, "use.js": USE})
    build(root)
    with Index.open(root) as idx:
        def sites(name: str) -> set[tuple[str, int]]:
            return {(c["name"], c["site"]["line"]) for c in idx.callers(name)["callers"]}

        assert sites("renderer:Renderer.constructor.clear") == {("render", 21), ("draw", 7)}
        # the member (line 12) is what an instance's call means; the bare call in it is the
        # constructor's own function of that name (line 8), never the member
        assert sites("renderer.js:12") == {("draw", 6)}
        assert sites("renderer.js:8") == {("setSize", 13)}
