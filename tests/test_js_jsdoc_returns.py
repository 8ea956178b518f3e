"""JavaScript calls on what a call returns: a method whose JSDoc declares `@return {T}` yields
a T (what the TypeScript checker reads in a .js file), and `new T(...)` heading a chain yields
a T, so `v.set(1, 2).add(w)` and `new Vector().add(w)` reach Vector.add. A union names no one
type: no edge."""

from __future__ import annotations

from knoxidx.index import Index
from knoxidx.parse.name_paths import name_path
from tests.helpers import build

VECTOR = """
export class Vector {

	/**
	 * Sets the components.
	 *
	 * @param {number} x - The x component.
	 * @return {Vector} A reference to this vector.
	 */
	set( x ) {
		this.x = x;
		return this;
	}

	/** @returns {this} */
	scale( s ) {
		this.x *= s;
		return this;
	}

	add( other ) {
		this.x += other.x;
		return this;
	}

}

export class Attribute {
	setXYZ( i ) {}
}

export class InterleavedAttribute {
	setXYZ( i ) {}
}

/**
 * @return {Attribute|InterleavedAttribute|undefined} One of two kinds.
 */
export function attributeOf( geometry ) {
	return geometry.attribute;
}
"""
USE = """
import { Vector, attributeOf } from './vector.js';

const _v = new Vector();

export function chained( w ) {
	return _v.set( 1 ).add( w );
}

export function selfTyped( w ) {
	return _v.scale( 2 ).add( w );
}

export function created( w ) {
	return new Vector().set( 3 ).add( w );
}

export function either( geometry ) {
	attributeOf( geometry ).setXYZ( 0 );
}
"""


def test_new_heading_a_chain_is_a_call_of_the_class() -> None:
    assert name_path("new Vector( 1, 2 ).set( 3 ).add") == ("Vector()", "set()", "add")
    assert name_path("new a.Vector().add") == ("?", "Vector()", "add")  # qualified: unknown


def test_jsdoc_return_types_carry_calls_through_chains(repo) -> None:
    root = repo({"vector.js": VECTOR, "use.js": USE})
    build(root)
    with Index.open(root) as idx:
        add_callers = {c["name"] for c in idx.callers("Vector.add")["callers"]}
        assert add_callers == {"chained", "selfTyped", "created"}
        assert {c["name"] for c in idx.callers("Vector.set")["callers"]} == {"chained", "created"}
        # `{A|B}`: either class's setXYZ could be meant, so neither is claimed
        assert idx.callers("Attribute.setXYZ")["callers"] == []
        assert idx.callers("InterleavedAttribute.setXYZ")["callers"] == []


LINE = """
import { Vector } from './vector.js';

export class Line {

	/**
	 * @param {Vector} [start=(0,0,0)] - The start.
	 * @param {?Vector} end - The end.
	 * @param {number} [options.scale] - A property of a parameter, no parameter.
	 */
	constructor( start = new Vector(), end, options ) {
		this.start = start;
		this.end = end;
	}

	/**
	 * @param {Vector} target - Where the result goes.
	 * @param {Vector|Line} other - Either: no one type.
	 */
	delta( target, other ) {
		other.add( target );
		return target.add( this.end );
	}

	grow() {
		this.start.add( this.end );
	}

}
"""


def test_jsdoc_parameter_types_type_parameters_and_the_fields_they_fill(repo) -> None:
    root = repo({"vector.js": VECTOR, "line.js": LINE})
    build(root)
    with Index.open(root) as idx:
        sites = {(c["name"], c["site"]["line"]) for c in idx.callers("Vector.add")["callers"]}
        assert sites == {("delta", 22), ("grow", 26)}


def test_jsdoc_is_found_past_separators_and_not_past_a_line_comment() -> None:
    # a comment before `,` or `;` is still the function's JSDoc, a no-break space is passed
    # over, a `//` line comment is none
    from knoxidx.parse.extract import extract

    source = ("/** @return {A} */ function a(x) {}\nfunction b(y) {}\n"
              "const o = { /** @return {C} */ c() {}, /** @return {D} */ d() {} , e() {} };\n"
              "class K { /** @return {M} */ ; m() {} /** @param {P} p */ n(p) {} }\n"
              "/** @return {E} */\nexport function f() {}\n/** @return {G} */\n\nfunction g() {}\n"
              "// @return {H}\nfunction h() {}\n/** @return {I} */\u00a0function i() {}\n")
    facts = extract("a.js", source.encode(), "javascript")
    assert [(d.name, d.type_hint) for d in facts.defs if d.kind == "Function"] == [
        ("a", ("A",)), ("b", ()), ("c", ("C",)), ("d", ("D",)), ("e", ()), ("m", ("M",)),
        ("n", ()), ("f", ("E",)), ("g", ()), ("h", ()), ("i", ("I",))]
    assert [(b.name, b.type_path) for b in facts.bindings] == [("p", ("P",))]


STACK = """
import { Vector } from './vector.js';

export class Stack {

	constructor() {

		/**
		 * The output, set later.
		 *
		 * @type {?Vector}
		 */
		this.output = null;

		/** @type {Vector|Stack} */
		this.either = null;

	}

	build( w ) {
		this.output.add( w );
		this.either.add( w );
	}

}
"""


def test_jsdoc_type_of_a_field_assigned_in_the_constructor(repo) -> None:
    root = repo({"vector.js": VECTOR, "stack.js": STACK})
    build(root)
    with Index.open(root) as idx:
        sites = {(c["name"], c["site"]["line"]) for c in idx.callers("Vector.add")["callers"]}
        assert sites == {("build", 21)}  # `{Vector|Stack}` names no one type
