"""Rust `macro_rules!` macros by their textual scope, which no path lookup finds (a macro is
no item of its module's namespace). A macro a module defines is in scope in the modules it
declares after it (`macro_rules! tri` in lib.rs, called as `tri!(..)` in de.rs, with no
`use`). A `#[macro_use] mod macros;` keeps the macros of `macros` (and of its own
`#[macro_use]` modules) in scope after it in its parent, so in the modules the parent
declares after it (tokio's `ready!`, syn's `Token!`); a `#[macro_use] extern crate x;` puts
x's `#[macro_export]` macros in scope in the whole crate. A `#[macro_export]` macro is an
item of its crate's root too: `crate::json!`, `$crate::json!`, `serde_json::json!` from the
crate's tests.

What a file declares is its own facts: a macro's definition (``exported`` where it is
`#[macro_export]`) and a marker import per `#[macro_use]` declaration (:func:`macro_use`).
Which of them a call sees is read here, at resolution."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from knoxidx.core.facts import Import
from knoxidx.core.symbols import DEFINITION_TAG, MODULE_TAG
from knoxidx.languages.rust.crates import PATH_MODULE, crate_of
from knoxidx.parse.file_index import FUNCTION, MODULE

if TYPE_CHECKING:
    from knoxidx.core.facts import Definition
    from knoxidx.core.symbols import Symbol
    from knoxidx.languages.protocol import ResolverView
    from knoxidx.parse.file_index import FileIndex

FAMILY = "rust"
MACRO_SIGNATURE = "macro_rules!"
# The module of the import that marks a `#[macro_use]` declaration: this, then the module of
# the declaration's own import (`self::macros`, a `#path:` one, or an extern crate's name).
# It binds no name (its alias is empty), so no lookup meets it.
MACRO_USE = "#macro_use:"
_MACRO_USE_ATTRIBUTE = re.compile(r"#\[\s*macro_use\s*(?:\([^)]*\)\s*)?\]\Z")
_MACRO_EXPORT_ATTRIBUTE = re.compile(r"#\[\s*macro_export\b")
# how deep `#[macro_use]` modules inside `#[macro_use]` modules are followed (tokio: 2)
_NESTING = 8
# the line before which a module's own macros are all in scope: every one
_ANYWHERE = 1 << 62

# resolves a module spec written in a file (hooks' resolve_module)
ModuleResolver = Callable[["ResolverView", "FileIndex", str, int], "list[Symbol]"]


def macro_use(module: str, attributes: Sequence[str], line: int, scope: int) -> list[Import]:
    """The marker import of a `mod` or `extern crate` declaration (its import's ``module``,
    its ``attributes`` as written) where one of them is `#[macro_use]`; else none."""
    if any(_MACRO_USE_ATTRIBUTE.match(a) for a in attributes):
        return [Import(MACRO_USE + module, "", "", line, scope)]
    return []


def is_macro_export(attributes: Sequence[str]) -> bool:
    """Whether a `macro_rules!` definition's attributes, as written, export it."""
    return any(_MACRO_EXPORT_ATTRIBUTE.match(a) for a in attributes)


def _is_macro(d: Definition) -> bool:
    return d.kind == FUNCTION and d.signature.startswith(MACRO_SIGNATURE)


def enclosing_macro(r: ResolverView, module: str, name: str, resolve_module: ModuleResolver
                    ) -> list[Symbol]:
    """The `macro_rules!` macro ``name`` a bare `name!(..)` in ``module`` calls where the
    module's file defines none: one that a `#[macro_use]` module of its own brings (wherever
    the declaration stands: the name is looked up once per file, not per call), else the
    innermost one in scope where each module above declares the one leading to the caller
    (defined before that `mod`, or brought by a `#[macro_use]` one before it), else one of a
    `#[macro_use] extern crate`. Nothing above a module its parent does not declare (a test,
    a bench, a binary: a crate of its own). Once per module and name: most names asked are
    std's macros (`assert!`), which no module defines."""
    return r.memo(("rust-enclosing-macro", module, name), _enclosing_macro, r, module, name,
                  resolve_module)


def _enclosing_macro(r: ResolverView, module: str, name: str, resolve_module: ModuleResolver
                     ) -> list[Symbol]:
    if not any(kind == FUNCTION and not member
               for _, _, kind, member in r.defs_named(FAMILY, name)):
        return []  # no macro of the name anywhere (std's `assert!`, `vec!`): no walk
    found, _ = _in_scope(r, module, "", name, resolve_module)
    child = module
    while not found and "::" in child:
        parent, _, last = child.rpartition("::")
        found, declared = _in_scope(r, parent, last, name, resolve_module)
        if not declared:
            return []
        child = parent
    return found


def _in_scope(r: ResolverView, key: str, child: str, name: str, resolve_module: ModuleResolver
              ) -> tuple[list[Symbol], bool]:
    """The macro ``name`` in scope where the files of module ``key`` declare `mod child;`
    (anywhere in them where ``child`` is ""), the textually last one; and whether a file of
    the module declares it (true where the module has no file: an inline `mod` of a file
    above, which is looked in next)."""
    paths = r.module_paths(FAMILY, key)
    declared = not child or not paths
    best: list[Symbol] = []
    best_line = -1
    for path in paths:
        pfi = r.index(path)
        if pfi is None:
            continue
        before = _declared_at(r, pfi, child) if child else _ANYWHERE
        if before is None:
            continue
        declared = True
        own = _last_macro(r, pfi, name, before)
        if own is not None and pfi.facts.defs[own].start_line > best_line:
            best_line, best = pfi.facts.defs[own].start_line, [(DEFINITION_TAG, path, own)]
        for line, is_module, keys in _macro_uses(r, pfi, resolve_module):
            if line >= before:
                break
            if line > best_line:
                brought = _brought(r, is_module, keys, name, resolve_module, 0)
                if brought:
                    best_line, best = line, brought
    return best, declared


def _declared_at(r: ResolverView, fi: FileIndex, child: str) -> int | None:
    """The line of the file's top-level `mod child;` or `mod child { }` (whose `mod`s of
    their own load files below: syn's `mod gen { pub mod fold; }`), None where it has none."""
    for imp in fi.imports.get((-1, child), ()):
        if imp.module == "self::" + child or imp.module.startswith(PATH_MODULE):
            return imp.line
    for index in r.child(fi, -1, child) or ():
        if fi.facts.defs[index].kind == MODULE:
            return fi.facts.defs[index].start_line
    return None


def _last_macro(r: ResolverView, fi: FileIndex, name: str, before: int) -> int | None:
    """The index of the file's last top-level macro ``name`` defined above line ``before``."""
    for index in reversed(r.child(fi, -1, name) or ()):  # (a miss is recorded: see child)
        d = fi.facts.defs[index]
        if _is_macro(d) and d.start_line < before:
            return index
    return None


def _macro_uses(r: ResolverView, fi: FileIndex, resolve_module: ModuleResolver
                ) -> list[tuple[int, bool, tuple[str, ...]]]:
    """The file's top-level `#[macro_use]` declarations, (line, whether of a `mod`, the keys
    of the modules or crates they name), in line order; an `extern crate`'s at line 0, since
    its macros are in scope in the whole crate, below every textual one (the `macro_use`
    prelude). Once per file: every name a call misses asks."""
    return r.memo(("rust-macro-uses", fi.path), _macro_uses_of, r, fi, resolve_module)


def _macro_uses_of(r: ResolverView, fi: FileIndex, resolve_module: ModuleResolver
                   ) -> list[tuple[int, bool, tuple[str, ...]]]:
    out: list[tuple[int, bool, tuple[str, ...]]] = []
    for imp in fi.facts.imports:
        if imp.scope == -1 and imp.module.startswith(MACRO_USE):
            spec = imp.module[len(MACRO_USE):]
            keys = tuple(m[2] for m in resolve_module(r, fi, spec, -1) if m[0] == MODULE_TAG)
            if keys:
                is_module = spec.startswith(("self::", PATH_MODULE))  # else an extern crate
                out.append((imp.line if is_module else 0, is_module, keys))
    out.sort()
    return out


def _brought(r: ResolverView, is_module: bool, keys: tuple[str, ...], name: str,
             resolve_module: ModuleResolver, depth: int) -> list[Symbol]:
    """The macro ``name`` a `#[macro_use]` declaration of the modules ``keys`` brings (of
    the crates ``keys``, where it is no `mod`'s)."""
    out: list[Symbol] = []
    for key in keys:
        out.extend(_module_macros(r, key, name, resolve_module, depth) if is_module
                   else exported_macros(r, key, name))
    return out


def _module_macros(r: ResolverView, key: str, name: str, resolve_module: ModuleResolver,
                   depth: int) -> list[Symbol]:
    """The macro ``name`` in scope at the end of module ``key``'s files, which a
    `#[macro_use]` on its `mod` keeps in scope after it."""
    return r.memo(("rust-module-macros", key, name), _module_macros_of, r, key, name,
                  resolve_module, depth)


def _module_macros_of(r: ResolverView, key: str, name: str, resolve_module: ModuleResolver,
                      depth: int) -> list[Symbol]:
    out: list[Symbol] = []
    for path in r.module_paths(FAMILY, key):
        mfi = r.index(path)
        if mfi is None:
            continue
        own = _last_macro(r, mfi, name, _ANYWHERE)
        best_line = mfi.facts.defs[own].start_line if own is not None else -1
        best: list[Symbol] = [(DEFINITION_TAG, path, own)] if own is not None else []
        for line, is_module, keys in _macro_uses(r, mfi, resolve_module) \
                if depth < _NESTING else ():
            if line > best_line and is_module:
                brought = _brought(r, is_module, keys, name, resolve_module, depth + 1)
                if brought:
                    best_line, best = line, brought
        out.extend(best)
    return out


def exported_macros(r: ResolverView, crate: str, name: str) -> list[Symbol]:
    """The `#[macro_export]` macros ``name`` of the crate named ``crate``: the items its root
    holds by that name, wherever in the crate they are defined (cfg twins: each)."""
    return r.memo(("rust-exported-macros", crate, name), _exported_macros, r, crate, name)


def _exported_macros(r: ResolverView, crate: str, name: str) -> list[Symbol]:
    out: list[Symbol] = []
    for path, index, kind, member in r.defs_named(FAMILY, name):
        if kind != FUNCTION or member or crate_of(path, r.layout)[1] != crate:
            continue
        dfi = r.index(path)
        d = dfi.facts.defs[index] if dfi is not None else None
        if d is not None and d.exported and _is_macro(d):
            out.append((DEFINITION_TAG, path, index))
    return out
