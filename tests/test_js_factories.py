"""A factory function returning an object literal of its own, held in a variable its body
declares or written in its return statement: what a call returns has the object's methods,
so `ColorManagement.convert()` on `const ColorManagement = createColorManagement()` is the
object's `convert` (what the TypeScript checker infers)."""

from __future__ import annotations

from knoxidx.index import Index
from knoxidx.parse.extract import extract
from tests.helpers import build

FACTORY = """
function createColorManagement() {

	const ColorManagement = {

		enabled: true,

		convert: function ( color ) {
			return color;
		},

	};

	return ColorManagement;

}

function createCache() {
	return {
		add: function ( key ) {},
		get( key ) {},
	};
}

function createHelper() {
	function lookup( key ) {}
	return lookup( 1 );
}

export const ColorManagement = createColorManagement();
export const Cache = createCache();
export const helper = createHelper();
"""
USE = """
import { ColorManagement, Cache, helper } from './factory.js';

export function use( color ) {
	ColorManagement.convert( color );
	Cache.add( 'a' );
	Cache.get( 'a' );
	helper.lookup( 2 );
}
"""


def test_a_factory_returning_its_own_object_is_marked() -> None:
    facts = extract("factory.js", FACTORY.encode(), "javascript")
    hints = {d.name: d.type_hint for d in facts.defs if d.kind == "Function" and d.parent < 0}
    assert hints == {"createColorManagement": ("{}",), "createCache": ("{}",),
                     "createHelper": ("return",)}  # what `lookup( 1 )` returns


def test_members_of_a_factory_result_are_its_objects(repo) -> None:
    root = repo({"factory.js": FACTORY, "use.js": USE})
    build(root)
    with Index.open(root) as idx:
        def sites(name: str) -> set[tuple[str, int]]:
            return {(c["name"], c["site"]["line"]) for c in idx.callers(name)["callers"]}

        assert sites("createColorManagement.convert") == {("use", 5)}
        assert sites("createCache.add") == {("use", 6)}
        assert sites("createCache.get") == {("use", 7)}
        # a function nested in one that returns no object of its own is no member
        assert sites("createHelper.lookup") == {("createHelper", 27)}


NOTIFY = """
export function createNotifyManager() {
  let queue: Array<() => void> = []
  return {
    batch: <T>(callback: () => T): T => callback(),
    schedule: (callback: () => void): void => { queue.push(callback) },
  } as const
}

export const notifyManager = createNotifyManager()

export function run() {
  notifyManager.batch(() => 1)
}
"""


def test_a_factory_object_returned_cast_as_const(repo) -> None:
    root = repo({"notify.ts": NOTIFY})
    build(root)
    with Index.open(root) as idx:
        assert [(c["name"], c["site"]["line"])
                for c in idx.callers("createNotifyManager.batch")["callers"]] == [("run", 13)]
