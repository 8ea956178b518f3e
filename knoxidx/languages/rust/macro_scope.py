"""Rust `macro_rules!` macros by their textual scope: a macro a module defines is in scope in
the modules below it (`macro_rules! tri` in lib.rs, called as `tri!(..)` in de.rs, with no
`use`), which no path lookup finds (a macro is no item of its module's namespace)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knoxidx.core.symbols import DEFINITION_TAG
from knoxidx.parse.file_index import FUNCTION

if TYPE_CHECKING:
    from knoxidx.core.symbols import Symbol
    from knoxidx.languages.protocol import ResolverView

FAMILY = "rust"
MACRO_SIGNATURE = "macro_rules!"


def enclosing_macro(r: ResolverView, module: str, name: str) -> list[Symbol]:
    """The `macro_rules!` macro ``name`` defined at the top level of a module above
    ``module`` (its parent first, then up to the crate's root): the one a bare `name!(..)`
    calls where the module itself defines none. (Where in the file it is defined, before or
    after the `mod` that leads to the caller, is not read.) Once per module and name: most
    names asked are std's macros (`assert!`), which no module above defines."""
    return r.memo(("rust-enclosing-macro", module, name), _enclosing_macro, r, module, name)


def _enclosing_macro(r: ResolverView, module: str, name: str) -> list[Symbol]:
    parent = module.rpartition("::")[0]
    while parent:
        for path in r.module_paths(FAMILY, parent):
            pfi = r.index(path)
            if pfi is None:
                continue
            hit = pfi.children.get((-1, name))
            if not hit:
                r.missed(pfi, -1, name)  # (a macro the file gains later is looked for again)
            for index in reversed(hit or ()):
                d = pfi.facts.defs[index]
                if d.kind == FUNCTION and d.signature.startswith(MACRO_SIGNATURE):
                    return [(DEFINITION_TAG, path, index)]
        parent = parent.rpartition("::")[0]
    return []
