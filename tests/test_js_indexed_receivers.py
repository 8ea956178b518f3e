"""JavaScript and TypeScript calls on an element of a collection: `this.children[i].update()`,
`const child = children[i]; child.update()`, `for (const x of xs) x.update()`, where the
element's type is what the collection's declaration or construction says (its JSDoc `@type
{Array<T>}`, a TypeScript `T[]`, an array literal of `new T()`, `xs.push(new T())`,
`xs[i] = new T()`; `const [ a, b ] = xs.concat()` too), as the TypeScript checker reads them. A quoted index reads a member
(`o["key"]`), no element; what a function stores in its own `[]` is not known in the
functions nested in it (TypeScript's evolving array is `any[]` there)."""

from __future__ import annotations

from knoxidx.index import Index
from knoxidx.parse.extract import extract
from tests.helpers import build

NODE = """
export class Node {
	update() {}
}

export class Other {
	update() {}
}
"""
TREE = """
import { Node, Other } from './node.js';

export class Tree {

	constructor() {

		/**
		 * The children.
		 *
		 * @type {Array<Node>}
		 */
		this.children = [];

	}

	indexed() {
		this.children[ 0 ].update();
	}

	copied() {
		const children = this.children;
		for ( let i = 0; i < children.length; i ++ ) {
			children[ i ].update();
			const child = children[ i ];
			child.update();
		}
	}

	looped() {
		for ( const child of this.children ) child.update();
	}

	keyed( o ) {
		o[ 'children' ].update();
	}

	built() {
		const made = [];
		made.push( new Node() );
		made[ 0 ].update();
		const stored = [];
		stored[ 0 ] = new Node();
		stored[ 0 ].update();
		function later() {
			made[ 0 ].update();
		}
		return later;
	}

	mixed() {
		const both = [];
		both.push( new Node() );
		both.push( new Other() );
		both[ 0 ].update();
	}

	literal() {
		_nodes[ 1 ].update();
	}

	destructured() {
		const [ first, second ] = this.children.concat();
		first.update();
		second.update();
		const copy = this.children.slice();
		copy[ 0 ].update();
	}

}

const _nodes = [ /*@__PURE__*/ new Node(), /*@__PURE__*/ new Node() ];
"""
FOREST = """
import { Node } from './node.js';

export class Forest {
  private trees: Node[] = [];

  visit(): void {
    this.trees[0].update();
    const roots: Node[] = [];
    roots[0].update();
    for (const root of roots) root.update();
  }
}
"""


def test_calls_on_elements_reach_the_elements_type(repo) -> None:
    root = repo({"node.js": NODE, "tree.js": TREE, "forest.ts": FOREST})
    build(root)
    with Index.open(root) as idx:
        update = {(c["name"], c["site"]["line"])
                  for c in idx.callers("Node.update")["callers"]}
        assert update == {
            ("indexed", 18), ("copied", 24), ("copied", 26), ("looped", 31),
            ("built", 41), ("built", 44), ("literal", 59),
            ("destructured", 64), ("destructured", 65), ("destructured", 67),
            ("visit", 8), ("visit", 10), ("visit", 11),
        }
        assert idx.callers("Other.update")["callers"] == []


def test_element_bindings_are_named_for_the_collection() -> None:
    facts = extract("tree.js", TREE.encode(), "javascript")
    elements = {(b.name, b.type_path) for b in facts.bindings if b.name.endswith("[]")}
    assert elements == {("this.children[]", ("Node",)), ("made[]", ("Node",)),
                        ("stored[]", ("Node",)), ("both[]", ("Node",)), ("both[]", ("Other",)),
                        ("_nodes[]", ("Node",))}
    keyed = [r.path for r in facts.refs if r.line == 35 and r.kind == "call"]
    assert keyed == [("?", "update")]  # `o['children']`: a member of o, not an element


STORE = """
import { Node } from './node.js';

export class Store {
  private cache: Map<string, Node> = new Map();
  private items: Node[] = [];

  read(k: string): void {
    this.cache.get(k)!.update();
    const n = this.cache.get(k);
    n?.update();
    this.items.at(0)?.update();
    this.items.find((x) => x)?.update();
    const last = this.items.pop();
    last!.update();
  }
}
"""
REGISTRY = """
import { Node } from './node.js';

export class Registry {

	constructor() {

		/**
		 * @type {WeakMap<Object, Node>}
		 */
		this.byName = new WeakMap();

	}

	named( name ) {
		const node = this.byName.get( name );
		node.update();
	}

}
"""


def test_a_collections_own_methods_return_its_elements(repo) -> None:
    """`xs.find(..)`, `xs.at(i)`, `xs.pop()` and a map's `m.get(k)` (a `WeakMap`'s too)
    return an element (a value): where the call is of no method the index has, what it returns is one."""
    root = repo({"node.js": NODE, "store.ts": STORE, "registry.js": REGISTRY})
    build(root)
    with Index.open(root) as idx:
        update = {(c["name"], c["site"]["line"])
                  for c in idx.callers("Node.update")["callers"]}
        assert update == {("read", 9), ("read", 11), ("read", 12), ("read", 13), ("read", 15),
                          ("named", 17)}
