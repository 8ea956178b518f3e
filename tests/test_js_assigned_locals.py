"""JavaScript and TypeScript locals declared with no value (`let x;`, `let x = null`) hold what
they are assigned later (`x = new T()` in a `switch`'s cases, `x = f()`, `x = a ? new A() :
null`, `x = this.field`), as the TypeScript checker's evolving `let` reads them; a local
declared with a value keeps that value's type whatever it is assigned after."""

from __future__ import annotations

from knoxidx.index import Index
from tests.helpers import build

SHAPES = """
export class Circle {
	area() {}
}

export class Square {
	area() {}
}

/** @returns {Square} */
export function makeSquare() {
	return new Square();
}
"""
DRAW = """
import { Circle, Square, makeSquare } from './shapes.js';

export class Canvas {

	constructor() {
		this.square = new Square();
	}

	pick( kind ) {
		let shape;
		switch ( kind ) {
			case 1: shape = new Circle(); break;
			default: shape = new Circle();
		}
		shape.area();
	}

	either( round ) {
		let shape = null;
		shape = round ? new Circle() : null;
		shape.area();
	}

	later() {
		let made, field;
		made = makeSquare();
		made.area();
		field = this.square;
		field.area();
	}

	kept() {
		let shape = () => {};
		shape = makeSquare();
		shape();
	}

}
"""


def callers(idx: Index, name: str) -> set[tuple[str, int]]:
    return {(c["name"], c["site"]["line"]) for c in idx.callers(name)["callers"]}


def test_a_local_declared_without_a_value_holds_what_it_is_assigned(repo) -> None:
    root = repo({"shapes.js": SHAPES, "draw.js": DRAW})
    build(root)
    with Index.open(root) as idx:
        assert callers(idx, "Circle.area") == {("pick", 16), ("either", 22)}
        assert callers(idx, "Square.area") == {("later", 28), ("later", 30)}
        # `let shape = () => {}` keeps its function: the call is the arrow's, not a Square's
        assert callers(idx, "Canvas.kept.shape") == {("kept", 36)}
