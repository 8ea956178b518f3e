"""A function's parameters and local variables hide same-named definitions outside it: a bare
reference to one inside the function is no edge to anything (it used to be an exact edge to the
outer definition). Each language hides by its own namespaces: in Java a local hides a field,
never a method."""

from __future__ import annotations

import pytest

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

SOURCES = {
    "python": ("m.py", """
        LIMIT = 10

        def helper():
            return 1

        def shadowed(helper, *rest):
            LIMIT = 3
            for item in rest:
                print(item)
            print(LIMIT)
            return helper()

        def plain():
            print(LIMIT)
            return helper()

        def declared_global():
            global LIMIT
            LIMIT = 4
            print(LIMIT)

        def chooses(flag):
            if flag:
                def pick():
                    return 1
            else:
                pick = None
            return run(pick)

        def run(fn):
            return fn
        """),
    "go": ("p.go", """
        package p

        const Limit = 10

        func helper() int { return 1 }

        func shadowed(helper func() int) int {
        \tLimit := 3
        \tuse(Limit)
        \treturn helper()
        }

        func plain() int {
        \tuse(Limit)
        \treturn helper()
        }

        func use(x int) {}
        """),
    "javascript": ("m.js", """
        const LIMIT = 10;
        function helper() { return 1; }
        function shadowed(helper) { const LIMIT = 3; use(LIMIT); return helper(); }
        const arrow = (helper) => { use(LIMIT); return helper(); };
        function plain() { use(LIMIT); return helper(); }
        function use(x) {}
        """),
    "typescript": ("m.ts", """
        const LIMIT = 10;
        function helper(): number { return 1; }
        function shadowed(helper: () => number): number { let LIMIT = 3; use(LIMIT); return helper(); }
        function plain(): number { use(LIMIT); return helper(); }
        function use(x: number): void {}
        """),
    "rust": ("src/lib.rs", """
        const LIMIT: i32 = 10;
        fn helper() -> i32 { 1 }
        fn shadowed(helper: fn() -> i32) -> i32 { let LIMIT = 3; use_it(LIMIT); helper() }
        fn plain() -> i32 { use_it(LIMIT); helper() }
        fn use_it(x: i32) {}
        """),
    "java": ("p/A.java", """
        package p;
        class A {
            static final int LIMIT = 10;
            int helper() { return 1; }
            int shadowed(int LIMIT) { use(LIMIT); int helper = helper(); return helper; }
            int plain() { use(LIMIT); return helper(); }
            void use(int x) {}
        }
        """),
}


def _edges(root) -> set[tuple[str, str, str]]:
    """(source name, edge type, target name) of the references between definitions."""
    with Index.open(root) as idx:
        names = {n["id"]: n["name"] for n in export.nodes(idx.q)}
        return {(names[e["source"]], e["type"], names[e["target"]]) for e in export.edges(idx.q)
                if e["type"] in ("Calls", "Uses", "References")}


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_parameters_and_locals_hide_outer_definitions(repo, language: str) -> None:
    path, source = SOURCES[language]
    root = repo({path: source})
    build(root)
    edges = _edges(root)
    limit = "Limit" if language == "go" else "LIMIT"
    # unshadowed, both resolve: the test can fail
    assert ("plain", "Uses", limit) in edges and ("plain", "Calls", "helper") in edges
    assert not {e for e in edges if e[0] == "shadowed" and e[2] == limit}
    if language == "java":  # a local variable named like a method hides no method
        assert ("shadowed", "Calls", "helper") in edges
    else:
        assert not {e for e in edges if e[0] in ("shadowed", "arrow") and e[2] == "helper"}
    if language == "javascript":  # a parameter of an arrow function, which uses LIMIT itself
        assert ("arrow", "Uses", "LIMIT") in edges
    if language == "python":
        assert ("declared_global", "Uses", "LIMIT") in edges  # `global`: the module's after all
        # a name both a nested definition and a local variable: the definition stays found
        assert ("chooses", "References", "pick") in edges
