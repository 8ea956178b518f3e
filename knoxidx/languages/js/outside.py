"""JavaScript/TypeScript calls that lie outside the index though no import says so: the
language's and the host's globals (`new Map()`, `parseInt(s)`, `JSON.stringify(x)`,
`Object.prototype.hasOwnProperty.call(o, k)`, `console.log(..)`, `document.getElementById(..)`),
a builtin's method on what one of them returns (`Array.from(xs).map(..)`,
`Promise.all(ps).then(..)`), and a test framework's assertions, global or imported from its
package (`expect(x).toBe(y)`, `vi.fn().mockReturnValue(1)`). Resolution asks only about a call
it left unresolved with nothing external found (see ``BaseRules.outside_call``). A name the
file declares, imports or binds anywhere, or that the project defines, keeps it unknown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knoxidx.core.symbols import EXTERNAL_TAG

if TYPE_CHECKING:
    from knoxidx.core.facts import NamePath
    from knoxidx.languages.protocol import ResolverView
    from knoxidx.parse.file_index import FileIndex

FAMILY = "js"
# the globals called or constructed by their bare names
GLOBAL_FUNCTIONS = frozenset("""
    Array ArrayBuffer BigInt BigInt64Array BigUint64Array Boolean DataView Date Error
    EvalError Float32Array Float64Array Function Int8Array Int16Array Int32Array Map Number
    Object Promise Proxy RangeError ReferenceError RegExp Set String Symbol SyntaxError
    TypeError URIError Uint8Array Uint8ClampedArray Uint16Array Uint32Array WeakMap WeakRef
    WeakSet AggregateError FinalizationRegistry
    decodeURI decodeURIComponent encodeURI encodeURIComponent escape unescape eval isFinite
    isNaN parseFloat parseInt
    setTimeout clearTimeout setInterval clearInterval setImmediate clearImmediate
    queueMicrotask requestAnimationFrame cancelAnimationFrame structuredClone fetch atob btoa
    alert confirm prompt URL URLSearchParams TextEncoder TextDecoder AbortController Blob File
    FormData Headers Request Response Event CustomEvent EventTarget Image Worker
    MutationObserver ResizeObserver IntersectionObserver XMLHttpRequest WebSocket
    DOMParser XMLSerializer require
""".split())
# globals whose every member, however deep, is the language's or the host's
GLOBAL_NAMESPACES = frozenset("""
    Object JSON Math Reflect Atomics Intl console Promise Array Number String Symbol Date
    BigInt ArrayBuffer Error document navigator localStorage sessionStorage performance
""".split())
# the calls of globals whose result is a builtin's value (an array, a string, a promise):
# the one method called on it is a builtin's
BUILTIN_RESULTS = frozenset("""
    Array() Array.from() Array.of() Object.keys() Object.entries() Object.values()
    Object.getOwnPropertyNames() Reflect.ownKeys() JSON.stringify() String() Number()
    Promise.all() Promise.allSettled() Promise.race() Promise.any() Promise.resolve()
    Promise.reject() fetch()
""".split())
# a test framework's entries (global under jest, imported from vitest): all that is called
# on them, or on what they return, is the framework's
TEST_ENTRIES = frozenset({"expect", "expectTypeOf", "assertType", "vi", "jest"})
# ... and its runner's, called by their names or through a modifier (`it.each(..)(..)`,
# `describe.skip(..)`): a local the index does not see bound may be named `it` or `test`
TEST_RUNNERS = frozenset("""
    describe it test suite bench beforeEach afterEach beforeAll afterAll
""".split())
RUNNER_MODIFIERS = frozenset("""
    each skip only todo concurrent fails runIf skipIf sequential shuffle
""".split())
# ... but for what hands back the project's own values (`vi.mocked(store).getState()`,
# `jest.requireActual('./m').f()`)
TEST_PASSING = frozenset({"mocked()", "requireActual()", "importActual()", "requireMock()",
                          "importMock()"})


def outside_call(r: ResolverView, fi: FileIndex, scope: int, path: NamePath, site: int
                 ) -> bool:
    """See the module docstring."""
    written = path[0]
    head = written.removesuffix("()")
    if head in TEST_RUNNERS and (len(path) == 1 or path[1].removesuffix("()")
                                  in RUNNER_MODIFIERS) \
            or head in TEST_ENTRIES and not any(part in TEST_PASSING for part in path):
        found = r.resolve_path(fi, (head,), scope)[0]
        if found:
            return all(s[0] == EXTERNAL_TAG for s in found)
        return _unshadowed(r, fi, head)
    if len(path) == 1:
        return head in GLOBAL_FUNCTIONS and _unshadowed(r, fi, head)
    if head not in GLOBAL_NAMESPACES and head not in GLOBAL_FUNCTIONS:
        return False
    calls = [i for i, part in enumerate(path[:-1]) if part.endswith("()")]
    if calls:
        # one call of a global returning a builtin's value, then the one method called on it
        last = calls[-1]
        if len(calls) > 1 or last != len(path) - 2 \
                or ".".join(path[:last + 1]) not in BUILTIN_RESULTS:
            return False
    elif head not in GLOBAL_NAMESPACES:
        return False
    return _unshadowed(r, fi, head)


def _unshadowed(r: ResolverView, fi: FileIndex, name: str) -> bool:
    """Whether the global ``name`` is the language's here: the file declares, imports and
    binds nothing so named, and the project defines nothing so named."""
    if r.memo(("js-declares", fi.path, name), declares, fi, name):
        return False
    return not r.defs_named(FAMILY, name)


def declares(fi: FileIndex, name: str) -> bool:
    """Whether the file declares ``name`` anywhere: a definition, an import or a local."""
    return any(n == name for _, n in fi.children) or any(n == name for _, n in fi.imports) \
        or any(n == name for _, n in fi.bindings)
